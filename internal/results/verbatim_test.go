package results

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// verbatim returns the program output of a fixture: the lines between
// "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===", every block joined.
func verbatim(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return extractVerbatim(b)
}

func extractVerbatim(b []byte) []byte {
	var out bytes.Buffer
	in := false
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		s := bytes.TrimRight(line, "\n")
		switch {
		case bytes.Equal(s, []byte("=== BEGIN VERBATIM ===")):
			in = true
		case bytes.Equal(s, []byte("=== END VERBATIM ===")):
			in = false
		case in:
			out.Write(line)
		}
	}
	return out.Bytes()
}

// seedAll adds every fixture under dirs as a fuzz seed.
func seedAll(f *testing.F, dirs ...string) {
	for _, d := range dirs {
		names, _ := filepath.Glob(filepath.Join("testdata", d, "*"))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				f.Fatal(err)
			}
			if v := extractVerbatim(b); len(v) > 0 {
				f.Add(v)
			} else {
				f.Add(b)
			}
		}
	}
}
