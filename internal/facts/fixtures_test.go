package facts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verbatim returns the program-output blocks of a fixture file: the lines
// between "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===".
func verbatim(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "=== BEGIN VERBATIM ===":
			in, cur = true, nil
		case l == "=== END VERBATIM ===":
			in = false
			out = append(out, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no verbatim block", name)
	}
	return out
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
