package diagnose

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// scan finds exactly the literals bytes.Contains finds, for any set of
// literals (so any step, 1 to maxStep) and any line, wherever in it they
// stand, overlapping or repeated.
func TestLitIndexIsContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 6))
	alphabet := "ab c:1NCL"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	found := 0
	steps := map[int]bool{}
	for range 2000 {
		var x litIndex
		seen := map[string]bool{}
		for range 1 + rng.IntN(12) {
			l := word(2 + rng.IntN(8))
			if !seen[string(l)] {
				seen[string(l)] = true
				x.add(l)
			}
		}
		x.index()
		steps[x.step] = true
		mark := make([]bool, len(x.lits))
		var ids []int
		for range 20 {
			line := word(rng.IntN(60))
			if rng.IntN(2) == 0 {
				// a literal planted somewhere
				l := x.lits[rng.IntN(len(x.lits))]
				at := rng.IntN(len(line) + 1)
				line = append(line[:at:at], append(append([]byte{}, l...), line[at:]...)...)
			}
			ids = x.scan(line, mark, ids)
			got := map[int]bool{}
			for _, id := range ids {
				if got[id] || !mark[id] {
					t.Fatalf("id %d given twice or not marked", id)
				}
				got[id] = true
			}
			for id, l := range x.lits {
				if want := bytes.Contains(line, l); got[id] != want {
					t.Fatalf("step %d, literal %q in %q: %v, want %v", x.step, l, line, got[id], want)
				}
			}
			found += len(ids)
		}
	}
	if found < 10000 || len(steps) < maxStep {
		t.Fatalf("%d literals found, steps %v: the property tests too little", found, steps)
	}
}
