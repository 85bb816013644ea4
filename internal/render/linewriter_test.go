package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLineWriterHandsWholeLinesAndRunes: written in pieces of every size,
// the output is the input, each write downstream ends a line (or, past
// maxPending without a newline, a whole rune), and a hostile rune is
// cleaned although it arrives split across writes.
func TestLineWriterHandsWholeLinesAndRunes(t *testing.T) {
	in := "spark-01 ok\nspark-02 \u202egnp.exe\n" + strings.Repeat("é", maxPending) + "\ntail without newline"
	for _, piece := range []int{1, 2, 3, 7, 4096} {
		var got bytes.Buffer
		rec := &recorder{w: &got}
		lw := &lineWriter{w: safe(rec)}
		for i := 0; i < len(in); i += piece {
			if _, err := lw.Write([]byte(in[i:min(i+piece, len(in))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(in, "\u202e", `\u202e`, 1)
		if got.String() != want {
			t.Errorf("piece %d: output differs from the cleaned input (len %d, want %d)", piece, got.Len(), len(want))
		}
		for i, w := range rec.writes[:len(rec.writes)-1] {
			if !strings.HasSuffix(w, "\n") && !utf8.ValidString(w) {
				t.Errorf("piece %d: write %d ends mid-rune", piece, i)
			}
		}
		if len(lw.buf) != 0 {
			t.Errorf("piece %d: %d bytes held after Flush", piece, len(lw.buf))
		}
	}
}

type recorder struct {
	w      *bytes.Buffer
	writes []string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, string(p))
	return r.w.Write(p)
}
