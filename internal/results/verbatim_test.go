package results

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
)

// verbatim returns the program output of a fixture: the lines between
// "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===", every block joined.
func verbatim(t testing.TB, name string) []byte {
	return fixture.Verbatim(fixture.Read(t, filepath.Join("testdata", name)))
}

func extractVerbatim(b []byte) []byte { return fixture.Verbatim(b) }

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
