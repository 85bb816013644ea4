package results

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// tagAt finds the tag where bytes.Index does, on lines that open with the
// host of the line before or nearly so: cut fields, letters among the
// digits, a second tag, a host that differs by a byte.
func TestTagAtIsIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 3))
	parts := []string{"spark-1", ":", "123", "4", " ", "[", "0", "]", "NCCL ", "INFO ", "WARN ", "x", "NCCL", "file.cc:12 ", "spark-12"}
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
		}
	}
	if same < 300 {
		t.Fatalf("the host's own line read %d times", same)
	}
}

// containsAround is bytes.Contains on any line and any anchor byte.
func TestContainsAround(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 4))
	for range 20000 {
		var s []byte
		for range rng.IntN(12) {
			w := "evision"[rng.IntN(7):]
			s = append(s, w[:min(len(w), 1+rng.IntN(7))]...)
			s = append(s, " vx"[rng.IntN(3)])
		}
		for k := range len("evision") {
			if got, want := containsAround(s, "evision", k), bytes.Contains(s, []byte("evision")); got != want {
				t.Fatalf("%q from %d: %v, want %v", s, k, got, want)
			}
		}
	}
}
