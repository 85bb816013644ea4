package results

import (
	"bytes"
	"testing"
)

// Property: nthFieldTo is the n-th field of appendFields cut at its first
// stop byte, for every real line and every n, with the stop bytes the
// handlers use and one that no line holds.
func TestNthFieldToIsFieldCut(t *testing.T) {
	lines := realLines(t)
	lines = append(lines, []byte(""), []byte(" \t "), []byte("a:b"), []byte("\tx\t y:z: w"))
	for _, line := range lines {
		f := appendFields(nil, line)
		for n := range len(f) + 2 {
			for _, stop := range []byte{':', '/', 0} {
				got, ok := nthFieldTo(line, n, stop)
				if n >= len(f) {
					if ok || got != nil {
						t.Fatalf("nthFieldTo(%q, %d, %q) = %q, %v; the line has %d fields", line, n, stop, got, ok, len(f))
					}
					continue
				}
				want, _, _ := bytes.Cut(f[n], []byte{stop})
				if !ok || !bytes.Equal(got, want) {
					t.Fatalf("nthFieldTo(%q, %d, %q) = %q, %v; want %q", line, n, stop, got, ok, want)
				}
			}
		}
	}
}

// Property: fieldCount is the number of fields appendFields splits, for
// every real line and every prefix and suffix of it (a row cut anywhere).
func TestFieldCountIsAppendFields(t *testing.T) {
	lines := realLines(t)
	lines = append(lines, []byte(""), []byte(" \t "), []byte("\t1  2\t"), []byte("1\n2 \r3"),
		[]byte("\t\t 1073741824\t134217728 \tfloat\tnone  -1\t\t\t\t\t\t\t\t24414.9 x"), []byte("                 "))
	for _, line := range lines {
		for i := range len(line) + 1 {
			for _, s := range [][]byte{line[:i], line[i:]} {
				if got, want := fieldCount(s), len(appendFields(nil, s)); got != want {
					t.Fatalf("fieldCount(%q) = %d; appendFields splits %d", s, got, want)
				}
			}
		}
	}
}
