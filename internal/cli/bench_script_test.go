package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// TestBenchScripts runs the bench scripts (testdata/bench-script) with
// recorded bench documents and a pair of Spark snapshots in $WORK.
func TestBenchScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/bench-script", Setup: benchScriptSetup})
}

// peerAddrs moves every address of the repository's healthy Spark tree to
// the next one on its subnet: the other end of the cable.
var peerAddrs = strings.NewReplacer("192.168.1.50", "192.168.1.51",
	"192.168.100.11", "192.168.100.12", "c0a8:640b", "c0a8:640c",
	"192.168.200.17", "192.168.200.18", "c0a8:c811", "c0a8:c812")

func benchScriptSetup(e *testscript.Env) error {
	recs, _ := filepath.Glob("testdata/bench/*.json")
	for _, r := range recs {
		b, err := os.ReadFile(r)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(e.WorkDir, filepath.Base(r)), b, 0o644); err != nil {
			return err
		}
	}
	s, err := snapshot.Read(filepath.Join("..", "..", "testdata", "nodes", "spark-healthy.tar.gz"))
	if err != nil {
		return err
	}
	s.Manifest.Host = "spark-a"
	if err := s.WriteDir(filepath.Join(e.WorkDir, "spark-a")); err != nil {
		return err
	}
	for k, v := range s.Data {
		s.Data[k] = []byte(peerAddrs.Replace(string(v)))
	}
	s.Manifest.Host = "spark-b"
	return s.WriteDir(filepath.Join(e.WorkDir, "spark-b"))
}
