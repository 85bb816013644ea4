package gpu

import (
	"os"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
)

// verbatim returns the program output between the BEGIN/END VERBATIM lines of
// a fixture (everything else is provenance).
func verbatim(b []byte) []byte { return fixture.Verbatim(b) }

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
