package archtest

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sparkrig/sparkrig/"

// repoRoot is the module's root, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// graph is every package of the module (testdata aside) and the module
// packages each imports, test files left out.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	root := repoRoot(t)
	g := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(p, 0)
		if err != nil {
			return nil // no Go files here (or only tests)
		}
		rel, _ := filepath.Rel(root, p)
		var imps []string
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				imps = append(imps, strings.TrimPrefix(imp, module))
			}
		}
		g[filepath.ToSlash(rel)] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g["internal/cli"]) == 0 || len(g["internal/report"]) == 0 {
		t.Fatalf("the walk found no cli or report package: %d packages", len(g))
	}
	return g
}

// reach is every package pkg depends on in g, directly or not.
func reach(g map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, imp := range g[p] {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// workPackages do a command's work; the model below them never needs one.
var workPackages = []string{"internal/doctor", "internal/fix", "internal/bench", "internal/allpairs", "internal/qualify",
	"internal/plan", "internal/analyze", "internal/triage"}

// TestPackageGraph pins the stages: acquisition (acquire, capture) stands
// below the model and imports no cluster (the ping plan is handed in); the
// model (check, cluster) imports no work package; report, the one model every format renders, builds on the
// parsed results alone; render on report, results and the sanitizer; fix
// reads the benchmarks' ports from tuning, not bench; and only the program
// (cmd) imports the command-line face.
func TestPackageGraph(t *testing.T) {
	g := graph(t)
	for _, acq := range []string{"internal/acquire", "internal/capture"} {
		if slices.Contains(reach(g, acq), "internal/cluster") {
			t.Errorf("%s depends on internal/cluster: the ping plan is handed in", acq)
		}
	}
	for _, model := range []string{"internal/check", "internal/cluster"} {
		for _, dep := range reach(g, model) {
			if slices.Contains(workPackages, dep) {
				t.Errorf("%s depends on the work package %s", model, dep)
			}
		}
	}
	for pkg, want := range map[string][]string{
		"internal/report": {"internal/results"},
		"internal/render": {"internal/report", "internal/results", "internal/sanitize"},
	} {
		if got := reach(g, pkg); !slices.Equal(got, want) {
			t.Errorf("%s depends on %q, want only %q", pkg, got, want)
		}
	}
	if slices.Contains(reach(g, "internal/fix"), "internal/bench") {
		t.Error("fix depends on bench (the benchmarks' ports live in tuning)")
	}
	for pkg, imps := range g {
		if slices.Contains(imps, "internal/cli") && !strings.HasPrefix(pkg, "cmd/") {
			t.Errorf("%s imports internal/cli: only the program does", pkg)
		}
	}
}

// TestReachCatchesAnEdge proves the walk sees a dependency two steps away
// and a cycle does not hang it.
func TestReachCatchesAnEdge(t *testing.T) {
	g := map[string][]string{"a": {"b"}, "b": {"c", "a"}, "c": nil}
	if got := reach(g, "a"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("reach = %q", got)
	}
}
