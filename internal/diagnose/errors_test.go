package diagnose

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// The literal index finds exactly the literals a line contains, whatever
// pair of bytes keys each, on lines built from the literals themselves
// (cut, overlapping, at the start and at the end).
func TestLitIndexFindsEveryLiteral(t *testing.T) {
	sigs, err := expect.Signatures()
	if err != nil {
		t.Fatal(err)
	}
	m := NewErrorMatcher(sigs)
	x := &m.lits
	if len(x.lits) < 40 {
		t.Fatalf("%d literals indexed", len(x.lits))
	}
	rng := rand.New(rand.NewPCG(36, 2))
	var ids []int
	found := make([]bool, len(x.lits))
	hits := 0
	for range 3000 {
		var line []byte
		for range 1 + rng.IntN(4) {
			l := x.lits[rng.IntN(len(x.lits))]
			switch rng.IntN(3) {
			case 0:
				l = l[rng.IntN(len(l)):]
			case 1:
				l = l[:rng.IntN(len(l)+1)]
			}
			line = append(append(line, "ab :("[rng.IntN(6):]...), l...)
		}
		ids = x.scan(line, found, ids)
		for id, lit := range x.lits {
			want := bytes.Contains(line, lit)
			if found[id] != want || slices.Contains(ids, id) != want {
				t.Fatalf("%q in %q: found %v, listed %v, want %v", lit, line, found[id], slices.Contains(ids, id), want)
			}
			if want {
				hits++
			}
		}
	}
	if hits < 3000 {
		t.Fatalf("only %d literals found over 3000 lines", hits)
	}
}

// Observe counts a signature once a line however many of its patterns and
// literals the line holds, and keeps the first line.
func TestErrorMatcherCountsOnceALine(t *testing.T) {
	sigs, err := expect.Signatures()
	if err != nil {
		t.Fatal(err)
	}
	m := NewErrorMatcher(sigs)
	line := []byte("n1:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Recv) status=12")
	m.Observe([]byte("n1:1:2 [0] NCCL INFO Channel 00/02 : 0 1"))
	m.Observe(line)
	m.Observe(line)
	hits := m.Hits()
	if len(hits) != 1 || hits[0].Signature.ID != "ib-wc-retry-exceeded" || hits[0].Count != 2 || hits[0].Line != 2 {
		t.Fatalf("%+v", hits)
	}
}

// A line read before gets the answer it got then: over lines made of the
// catalogue's literals, repeated in any order, some longer than a kept
// line, the hits are those of a matcher that matches every line afresh.
func TestErrorMatcherMemoIsFresh(t *testing.T) {
	sigs, err := expect.Signatures()
	if err != nil {
		t.Fatal(err)
	}
	memo, fresh := NewErrorMatcher(sigs), NewErrorMatcher(sigs)
	fresh.noMemo = true
	x := &memo.lits
	rng := rand.New(rand.NewPCG(36, 7))
	var pool [][]byte
	for range 300 {
		line := []byte("n1:1:2 [0] NCCL WARN ")
		for range 1 + rng.IntN(4) {
			l := x.lits[rng.IntN(len(x.lits))]
			line = append(append(line, "ab :("[rng.IntN(6):]...), l...)
		}
		if rng.IntN(10) == 0 {
			line = append(line, bytes.Repeat([]byte(" x"), maxMemoLine)...)
		}
		pool = append(pool, line)
	}
	for range 20000 {
		line := pool[rng.IntN(len(pool))]
		memo.Observe(line)
		fresh.Observe(line)
	}
	// memory stays bounded: what the matcher keeps of a line is one line's
	if n := cap(memo.recording); n > len(sigs) {
		t.Fatalf("%d hits kept for the last line, the catalogue has %d signatures", n, len(sigs))
	}
	got, want := memo.Hits(), fresh.Hits()
	if len(want) < 20 {
		t.Fatalf("%d signatures hit: the lines test too little", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d signatures hit, afresh %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Signature.ID != w.Signature.ID || g.Count != w.Count || g.First != w.First || g.Line != w.Line || g.Score != w.Score {
			t.Fatalf("hit %d: %s ×%d line %d, afresh %s ×%d line %d", i, g.Signature.ID, g.Count, g.Line, w.Signature.ID, w.Count, w.Line)
		}
	}
}
