package gpu

import (
	"bytes"
	"os"
	"testing"
)

// verbatim returns the program output between the BEGIN/END VERBATIM lines of
// a fixture (everything else is provenance).
func verbatim(b []byte) []byte {
	const begin, end = "=== BEGIN VERBATIM ===\n", "=== END VERBATIM ===\n"
	i := bytes.Index(b, []byte(begin))
	j := bytes.LastIndex(b, []byte(end))
	if i < 0 || j < i {
		return nil
	}
	return b[i+len(begin) : j]
}

func readVerbatim(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := verbatim(b)
	if v == nil {
		t.Fatalf("%s: no verbatim block", path)
	}
	return v
}

func readVerbatimF(f *testing.F, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return verbatim(b)
}
