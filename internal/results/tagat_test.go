package results

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// tagAt finds the tag where bytes.Index does, on lines that open with the
// host of the line before or nearly so: cut fields, letters among the
// digits, a second tag, a host that differs by a byte, a blank in it; and
// it says same only of a line that opens with that host and a ':'.
func TestTagAtIsIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 3))
	parts := []string{"spark-1", ":", "123", "4", " ", "[", "0", "]", "NCCL ", "INFO ", "WARN ", "x", "NCCL", "file.cc:12 ", "spark-12", "a b"}
	same := 0
	for range 20000 {
		var l NCCLLog
		l.lastHost = []byte("spark-1")
		var line []byte
		if rng.IntN(2) == 0 {
			line = []byte("spark-1:123:456 [0] ")
		}
		for range rng.IntN(8) {
			line = append(line, parts[rng.IntN(len(parts))]...)
		}
		got, ok := l.tagAt(line)
		if want := bytes.Index(line, tagNCCL); got != want {
			t.Fatalf("%q: %d, bytes.Index says %d", line, got, want)
		}
		if ok {
			same++
			if !bytes.HasPrefix(line, []byte("spark-1:")) {
				t.Fatalf("%q: same host as spark-1", line)
			}
		}
	}
	if same < 300 {
		t.Fatalf("the host's own line read %d times", same)
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
