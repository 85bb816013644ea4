package render

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRenderImportsOnlyTheModel: render draws report documents and computes
// nothing, so the module packages it builds on, directly or not, are the
// report model, the parsed results it holds and the sanitizer every external
// string goes through.
func TestRenderImportsOnlyTheModel(t *testing.T) {
	const module = "github.com/sparkrig/sparkrig/"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Default.Import(path, root, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				walk(imp)
			}
		}
	}
	walk(module + "internal/render")
	var got []string
	for p := range seen {
		got = append(got, strings.TrimPrefix(p, module))
	}
	slices.Sort(got)
	want := []string{"internal/render", "internal/report", "internal/results", "internal/sanitize"}
	if !slices.Equal(got, want) {
		t.Errorf("render depends on %q, want only %q", got, want)
	}
}
