package acquire_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// What a run keeps of a snapshot (Reduce with fix.Evidence) gives the fix
// plan the same input as the whole snapshot, for every node snapshot in
// testdata: the files fix writes, which are absent and which unknown.
func TestReduceKeepsWhatFixReads(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/nodes/*.tar.gz")
	if len(paths) < 10 {
		t.Fatalf("%d node snapshots", len(paths))
	}
	for _, p := range paths {
		s, err := snapshot.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		f := facts.FromSnapshot(s)
		r := acquire.Reduce(s, fix.Evidence, fix.Paths())
		if d := cmp.Diff(fix.NodeFrom(f, s), fix.NodeFrom(f, r)); d != "" {
			t.Errorf("%s (-whole +reduced):\n%s", filepath.Base(p), d)
		}
		if len(r.Manifest.Items) >= len(s.Manifest.Items) || len(r.Data) >= len(s.Data) {
			t.Errorf("%s: kept %d of %d items, %d of %d data", filepath.Base(p), len(r.Manifest.Items), len(s.Manifest.Items), len(r.Data), len(s.Data))
		}
	}
	// A file fix writes that the capture found absent stays absent, one it
	// could not read stays unknown.
	s := snapshot.New("n")
	s.AddMissing(snapshot.KindFile, fix.NCCLConf, snapshot.StatusMissing, "")
	s.AddMissing(snapshot.KindFile, fix.EnvPath, snapshot.StatusDenied, "permission denied")
	s.AddFile("/etc/hostname", []byte("n\n"))
	s.AddFile("/etc/sysctl.d/99-sysctl.conf", []byte("vm.swappiness = 10\n")) // the listing says fix's own file is absent
	s.AddFile("/var/log/big", make([]byte, 1<<20))
	f := facts.FromSnapshot(s)
	r := acquire.Reduce(s, fix.Evidence, fix.Paths())
	if d := cmp.Diff(fix.NodeFrom(f, s), fix.NodeFrom(f, r)); d != "" {
		t.Errorf("(-whole +reduced):\n%s", d)
	}
	if _, ok := r.File("/var/log/big"); ok {
		t.Error("kept a file fix does not read")
	}
}
