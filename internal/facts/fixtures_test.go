package facts

import (
	"os"
	"path/filepath"
	"testing"

	sample "github.com/sparkrig/sparkrig/internal/fixture"
)

// verbatim returns the program-output blocks of a fixture file: the lines
// between "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===".
func verbatim(t testing.TB, name string) []string {
	return sample.ReadBlocks(t, filepath.Join("testdata", name))
}

// fixture finds the one testdata file whose name starts with prefix.
func fixture(t testing.TB, prefix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join("testdata", prefix+"*"))
	if len(m) != 1 {
		t.Fatalf("fixture %s*: %d matches", prefix, len(m))
	}
	return filepath.Base(m[0])
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
