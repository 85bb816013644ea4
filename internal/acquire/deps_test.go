package acquire

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestAcquisitionBelowTheModel: acquire and capture get a node's evidence
// and read its facts; the cluster model is built from what they return, so
// neither depends on it, directly or through another package (the ping
// mesh's plan is handed in, its evidence is facts').
func TestAcquisitionBelowTheModel(t *testing.T) {
	const module = "github.com/sparkrig/sparkrig/"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"internal/acquire", "internal/capture"} {
		via := map[string]string{module + pkg: ""}
		queue := []string{module + pkg}
		for len(queue) > 0 {
			path := queue[0]
			queue = queue[1:]
			p, err := build.Default.Import(path, root, 0)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, imp := range p.Imports {
				if _, seen := via[imp]; seen || !strings.HasPrefix(imp, module) {
					continue
				}
				via[imp] = path
				queue = append(queue, imp)
			}
		}
		for _, banned := range []string{"internal/cluster", "internal/fix", "internal/check", "internal/doctor"} {
			if _, ok := via[module+banned]; ok {
				chain := banned
				for p := via[module+banned]; p != ""; p = via[p] {
					chain = strings.TrimPrefix(p, module) + " → " + chain
				}
				t.Errorf("%s depends on %s: %s", pkg, banned, chain)
			}
		}
	}
}
