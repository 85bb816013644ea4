package results

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// tagAt finds the tag where bytes.Index does, on lines that open like
// the lines before or nearly so: cut fields, letters among the digits, a
// second tag, a host that differs by a byte, a blank, a '|' or a tab in
// it; the opening it names is the one ownTag reads; and hostOf leaves the
// host where host() alone, called on every line, does (lastHost naming a
// kept opening's hostCopy, which must stay that opening's host).
func TestTagAtIsIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 3))
	parts := []string{"spark-1", ":", "123", "4", " ", "[", "0", "]", "NCCL ", "INFO ", "WARN ", "x", "NCCL", "file.cc:12 ", "spark-12", "a b", "a|b", "c\td"}
	opens := []string{"spark-1:123:456 [0] ", "spark-2:123:457 [0] ", "spark-1:123:457 [1] ", "x|spark-3:9:9 [0] ", "a\tb:1:2 [3] "}
	var l, ref NCCLLog
	cached := 0
	for range 40000 {
		var line []byte
		if rng.IntN(3) > 0 {
			line = []byte(opens[rng.IntN(len(opens))])
			if rng.IntN(2) == 0 {
				line = append(line, "NCCL INFO "...)
			}
		}
		for range rng.IntN(8) {
			line = append(line, parts[rng.IntN(len(parts))]...)
		}
		got, o := l.tagAt(line)
		if want := bytes.Index(line, tagNCCL); got != want {
			t.Fatalf("%q: %d, bytes.Index says %d", line, got, want)
		}
		if o != nil {
			cached++
			h, i := ownTag(line)
			if !bytes.HasPrefix(line, o.b) || h != o.host || i != len(o.b)-len(tagNCCL) {
				t.Fatalf("%q: opening %q (host %d), ownTag says host %d, tag %d", line, o.b, o.host, h, i)
			}
		}
		if got >= 0 {
			l.hostOf(o, line[:got])
			ref.host(line[:got])
			if string(l.lastHost) != string(ref.lastHost) || !slices.Equal(l.Hosts, ref.Hosts) {
				t.Fatalf("%q: host %q, hosts %q; host() on every line: %q, %q", line, l.lastHost, l.Hosts, ref.lastHost, ref.Hosts)
			}
			for i := range l.opens {
				if k := &l.opens[i]; k.hosted && string(k.hostCopy) != string(k.b[:k.host]) {
					t.Fatalf("%q: opening %q keeps host %q", line, k.b, k.hostCopy)
				}
			}
		}
	}
	if cached < 5000 {
		t.Fatalf("a kept opening named %d times", cached)
	}
}

// mentionsRevision is "revision" or "git" in the lower-cased line, on any
// line built from pieces of both words in any letter case.
func TestMentionsRevision(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 4))
	words := []string{"revision", "REVISION", "Revision", "git", "GIT", "Git", "gIt", "reVISion"}
	found := 0
	for range 20000 {
		var s []byte
		for range rng.IntN(12) {
			w := words[rng.IntN(len(words))]
			w = w[rng.IntN(len(w)):]
			s = append(s, w[:1+rng.IntN(len(w))]...)
			s = append(s, " vxg"[rng.IntN(4)])
		}
		low := bytes.ToLower(s)
		want := bytes.Contains(low, []byte("revision")) || bytes.Contains(low, []byte("git"))
		if got := mentionsRevision(s); got != want {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
		if want {
			found++
		}
	}
	if found < 2000 || found > 18000 {
		t.Fatalf("%d of 20000 lines name a revision: the property tests too little of one side", found)
	}
}
