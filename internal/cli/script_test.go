package cli

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the scripts run sparkrig in-process: testscript re-executes
// this test binary as "sparkrig".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sparkrig": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script (*.txtar).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
