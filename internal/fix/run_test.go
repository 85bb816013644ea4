package fix_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
)

func nodeTree(name string) string {
	return filepath.Join("..", "..", "testdata", "nodes", name+".tar.gz")
}

func now() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) }

// TestRunPlansFromSnapshots: a pair with a rail at MTU 1500 is planned from
// its snapshots as the doctor audits it: the plan's verdict is the doctor's,
// the topology told from the nodes is announced, and -o's files are written
// per host.
func TestRunPlansFromSnapshots(t *testing.T) {
	out := t.TempDir()
	var notices []string
	snaps := []string{nodeTree("spark-mtu-1500"), nodeTree("spark-healthy-peer")}
	r, err := fix.Run(context.Background(), fix.RunOptions{Snapshots: snaps, Output: out, Version: "test", Now: now,
		Audit: doctor.ForFix("test", now), Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := doctor.Run(context.Background(), doctor.RunOptions{Snapshots: snaps, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != d.Status || r.Status == report.VerdictOK {
		t.Errorf("plan's status %s, the doctor's %s (want one problem status)", r.Status, d.Status)
	}
	if r.FixPlan == nil || len(r.FixPlan.Hosts) != 2 || r.Command != "fix" || !r.GeneratedAt.Equal(now()) {
		t.Fatalf("report %+v", r)
	}
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "topology ") || !strings.HasSuffix(notices[0], "; override with --topology") {
		t.Errorf("notices %q", notices)
	}
	hosts := map[string]bool{}
	for _, h := range r.FixPlan.Hosts {
		hosts[h.Host] = true
	}
	files := 0
	filepath.WalkDir(out, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files++
			rel, _ := filepath.Rel(out, p)
			if host, _, _ := strings.Cut(rel, string(filepath.Separator)); !hosts[host] {
				t.Errorf("%s written for a host the plan lacks", rel)
			}
		}
		return nil
	})
	if files == 0 {
		t.Error("-o wrote no file for a plan with changes")
	}
}

// TestRunNeedsEveryNode: a plan is for the whole cluster, so one snapshot
// that cannot be read stops it with that snapshot's reason, and several
// with all of theirs.
func TestRunNeedsEveryNode(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar.gz")
	o := fix.RunOptions{Snapshots: []string{nodeTree("spark-healthy"), a}, Now: now, Audit: doctor.ForFix("test", now)}
	_, err := fix.Run(context.Background(), o)
	if err == nil || !strings.HasPrefix(err.Error(), a+": ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("one bad snapshot: %v", err)
	}
	o.Snapshots = []string{a, b}
	_, err = fix.Run(context.Background(), o)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot read every node, so no plan:\n  "+a+": ") || !strings.Contains(err.Error(), "\n  "+b+": ") {
		t.Errorf("two bad snapshots: %v", err)
	}
}
