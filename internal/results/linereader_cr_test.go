package results

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// HasCR tells the same as a search of each line for '\r', whatever the
// lines, their endings and the sizes the reads come in.
func TestLineReaderHasCR(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 5))
	pieces := []string{"host:1:2 [0] NCCL INFO x", "\r", "\r\n", "\n", "  10%", "abc", "\r\r", ""}
	crs := 0
	for range 3000 {
		var in []byte
		for range rng.IntN(40) {
			in = append(in, pieces[rng.IntN(len(pieces))]...)
		}
		var r io.Reader = bytes.NewReader(in)
		switch rng.IntN(3) {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		want := bytes.Split(in, []byte("\n"))
		if len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1]
		}
		lr := NewLineReader(r)
		for i := 0; ; i++ {
			line, err := lr.Next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%q: %d lines, want %d", in, i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			w := bytes.TrimSuffix(want[i], []byte("\r"))
			if !bytes.Equal(line, w) {
				t.Fatalf("%q line %d: %q, want %q", in, i, line, w)
			}
			if got, wantCR := lr.HasCR(), bytes.IndexByte(w, '\r') >= 0; got != wantCR {
				t.Fatalf("%q line %d %q: HasCR %v, want %v", in, i, line, got, wantCR)
			}
			if lr.HasCR() {
				crs++
			}
		}
	}
	if crs < 1000 {
		t.Fatalf("only %d lines with a '\\r': the property tests too little of that side", crs)
	}
}
