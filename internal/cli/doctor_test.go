package cli

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestDoctorScripts runs the doctor and snapshot scripts. $NODES is the
// repository's testdata/nodes (snapshot trees).
func TestDoctorScripts(t *testing.T) {
	nodes, err := filepath.Abs("../../testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script/doctor",
		Setup: func(e *testscript.Env) error {
			e.Setenv("NODES", nodes)
			return nil
		},
	})
}

// BenchmarkDoctorLive is the whole live path on this machine: capture,
// parse, check and render, as `sparkrig doctor` runs it.
func BenchmarkDoctorLive(b *testing.B) {
	for b.Loop() {
		if code := Main([]string{"doctor"}, nil, io.Discard, io.Discard); code > ExitCritical {
			b.Fatalf("doctor exited %d", code)
		}
	}
}
