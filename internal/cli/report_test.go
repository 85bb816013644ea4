package cli

import (
	"os"
	"path/filepath"
	"strings"
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

// A missing input is a mistake on the command line: one line, exit 3, and
// no report written that silently lacks it.
func TestReportMissingInputWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut := runMain(t, "report", filepath.Join(t.TempDir(), "nonexistent.json"), nodeSnapshot("spark-healthy"), "-o", out)
	if code != ExitUnknown || !strings.Contains(errOut, "nonexistent.json: no such file or directory (no report written)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the report was written without its missing input")
	}
}
