package results

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// commentSkipped is "TrimSpace leaves nothing, or a first byte comment
// reads no case of" on lines built of ASCII blanks, Unicode spaces (which
// TrimSpace trims too), the bytes comment's cases start with and others.
func TestCommentSkippedIsTrimSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 5))
	parts := []string{" ", "\t", "\v", "\f", "\r", "\n", "\u00a0", "\u0085", "\u2003", "\u3000", "é",
		"n", "s", "C", "R", "O", "A", "N", "#", "x", "1", "size", "nThread", "Using devices", "\x80", "\xff"}
	skipped, read := 0, 0
	for range 50000 {
		var b []byte
		for range rng.IntN(6) {
			b = append(b, parts[rng.IntN(len(parts))]...)
		}
		body := bytes.TrimSpace(b)
		want := len(body) == 0 || !commentFirst[body[0]]
		got := commentSkipped(b)
		if got && !want {
			t.Fatalf("%q skipped, but TrimSpace leaves %q", b, body)
		}
		if c := bytes.TrimLeft(b, "\t\n\v\f\r "); !got && len(c) > 0 && c[0] < 0x80 && want {
			t.Fatalf("%q read, but TrimSpace leaves %q: an ASCII first byte comment reads no case of", b, body)
		}
		if got {
			skipped++
		} else {
			read++
		}
	}
	if skipped < 1000 || read < 1000 {
		t.Fatalf("skipped %d, read %d", skipped, read)
	}
}
