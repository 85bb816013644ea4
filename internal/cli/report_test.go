package cli

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReportScripts runs the report scripts (testdata/report). $NODES is the
// repository's testdata/nodes (snapshot trees), $BENCH testdata/bench
// (recorded bench runs).
func TestReportScripts(t *testing.T) {
	nodes, err := filepath.Abs("../../testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	bench, err := filepath.Abs("testdata/bench")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/report",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"status": cmdStatus},
		Setup: func(e *testscript.Env) error {
			e.Setenv("NODES", nodes)
			e.Setenv("BENCH", bench)
			return nil
		},
	})
}
