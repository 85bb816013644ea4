package sanitize

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonByRune is JSON as it was before runs of safe ASCII were copied
// whole: every rune after the first byte of 0x7f or more decoded and
// judged on its own.
func jsonByRune(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if !Unsafe(r) || r == utf8.RuneError && n == 1 {
			out = append(out, b[i:i+n]...)
		} else if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// TestJSONRunsAsByRune: copying runs of safe ASCII whole gives the very
// bytes the rune-by-rune escaping gave (JSON, and AppendJSON after a
// buffer's bytes), for random bytes drawn from
// ASCII (controls included), C1, bidi, private use, invalid UTF-8 and
// plain non-ASCII text, in any order.
func TestJSONRunsAsByRune(t *testing.T) {
	pieces := []string{"a", " ", "\n", "\t", "\r", "\x00", "\x1b", "\x7f", "{", "\"", "\\", "≥", "é", "漢",
		"\u009b", "\u202e", "\u200b", "\u2028", "\ufeff", "\u061c", "\U000f0001", "\ue000", "\xff", "\xc3", "\xe2\x89",
		"abcdefghijklmnopq", "  \"key\": \"value\",\n    "}
	rng := rand.New(rand.NewPCG(36, 1))
	for n := range 20000 {
		var b []byte
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				b = append(b, byte(rng.IntN(256)))
			} else {
				b = append(b, pieces[rng.IntN(len(pieces))]...)
			}
		}
		if got, want := JSON(bytes.Clone(b)), jsonByRune(b); !bytes.Equal(got, want) {
			t.Fatalf("case %d %q: got %q, want %q", n, b, got, want)
		}
		// AppendJSON appends the same after what its buffer holds
		if got, want := AppendJSON([]byte("{x"), b), append([]byte("{x"), jsonByRune(b)...); !bytes.Equal(got, want) {
			t.Fatalf("case %d %q: AppendJSON %q, want %q", n, b, got, want)
		}
	}
}

// TestPrintable8: the word test passes exactly the words whose eight
// bytes are all 0x20 to 0x7e: every byte value at every position of a
// printable word, and random words.
func TestPrintable8(t *testing.T) {
	want := func(w []byte) bool {
		for _, c := range w {
			if c < 0x20 || c > 0x7e {
				return false
			}
		}
		return true
	}
	w := []byte("abcdefgh")
	for p := range 8 {
		for v := range 256 {
			x := bytes.Clone(w)
			x[p] = byte(v)
			if got := printable8(binary.LittleEndian.Uint64(x)); got != want(x) {
				t.Fatalf("%q: printable8 %v", x, got)
			}
		}
	}
	rng := rand.New(rand.NewPCG(36, 3))
	for range 200000 {
		x := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
		for k := range x {
			if rng.IntN(2) == 0 {
				x[k] = byte(0x1e + rng.IntN(0x64)) // near the bounds
			}
		}
		if got := printable8(binary.LittleEndian.Uint64(x)); got != want(x) {
			t.Fatalf("%q: printable8 %v", x, got)
		}
	}
}

// TestSafe8: the word tests of JSON pass exactly the words whose eight
// bytes are printable ASCII or '\n' (safe8) and below 0x7f (below7f):
// every byte value at every position of a word that passes (one with
// newlines among printable bytes), and random words of bytes near the
// bounds, newlines and tabs.
func TestSafe8(t *testing.T) {
	want := func(w []byte) bool {
		for _, c := range w {
			if c != '\n' && (c < 0x20 || c > 0x7e) {
				return false
			}
		}
		return true
	}
	below := func(w []byte) bool {
		for _, c := range w {
			if c >= 0x7f {
				return false
			}
		}
		return true
	}
	check := func(x []byte) {
		t.Helper()
		if got := safe8(binary.LittleEndian.Uint64(x)); got != want(x) {
			t.Fatalf("%q: safe8 %v", x, got)
		}
		if got := below7f(binary.LittleEndian.Uint64(x)); got != below(x) {
			t.Fatalf("%q: below7f %v", x, got)
		}
	}
	for _, w := range [][]byte{[]byte("ab\ncd\nef"), []byte("\n\n\n\n\n\n\n\n"), []byte("abcdefgh")} {
		for p := range 8 {
			for v := range 256 {
				x := bytes.Clone(w)
				x[p] = byte(v)
				check(x)
			}
		}
	}
	near := []byte{'\n', '\t', 0x08, 0x0b, 0x89, 0x8a, 0x0a ^ 0x80, 0x1f, 0x20, 0x2a, 0x29, 0x7e, 0x7f, 0x80, 0xff, 0x00}
	rng := rand.New(rand.NewPCG(36, 4))
	for range 400000 {
		x := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
		for k := range x {
			switch rng.IntN(3) {
			case 0:
				x[k] = near[rng.IntN(len(near))]
			case 1:
				x[k] = byte(0x1e + rng.IntN(0x64))
			}
		}
		check(x)
	}
}
