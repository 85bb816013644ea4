package bench

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nodeTree is a snapshot archive of the repository's node fixtures.
func nodeTree(name string) string {
	return filepath.Join("..", "..", "testdata", "nodes", name+".tar.gz")
}

func dryRunOptions(snaps ...string) RunOptions {
	return RunOptions{Snapshots: snaps, DryRun: true, ToolVersion: "test",
		Now: func() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) },
		Plan: Options{Kinds: []string{KindNCCL, KindRDMA, KindTCP}, Duration: 5 * time.Second, Streams: 4, QPs: 1, BasePort: DefaultBasePort,
			Collectives: []string{"all_gather", "all_reduce"}, MinBytes: 32 << 20, MaxBytes: 16 << 30, MemFraction: 0.5, RunDir: "/tmp/sparkrig-bench-test"}}
}

// TestRunDryRunFromSnapshots: the pipeline acquires the two snapshots
// through acquire, finds the rails between them and returns the plan alone,
// stamped, with nothing run (no record of a run, no save).
func TestRunDryRunFromSnapshots(t *testing.T) {
	o := dryRunOptions(nodeTree("spark-healthy"), nodeTree("spark-healthy-peer"))
	o.Saved = func(string, error) { t.Error("a dry run saved a record") }
	o.Starting = func() { t.Error("a dry run started something on the nodes") }
	rec, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Bench.ID != "" || rec.BenchPlan == nil || rec.Command != "bench" || rec.ToolVersion != "test" ||
		!rec.GeneratedAt.Equal(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("record %+v", rec.Report)
	}
	p := rec.BenchPlan
	if len(p.Hosts) != 2 || p.Hosts[0] == p.Hosts[1] {
		t.Errorf("hosts %q, want the two snapshots' nodes", p.Hosts)
	}
	if len(p.Rails) != 2 {
		t.Errorf("%d rails, want the healthy pair's 2", len(p.Rails))
	}
	var ids []string
	for _, s := range p.Steps {
		ids = append(ids, s.ID)
	}
	if len(ids) != 9 || ids[0] != "nccl/all_gather" {
		t.Errorf("steps %q, want 9 from nccl/all_gather", ids)
	}
}

// TestRunRefusesWhatCannotBePlanned: each input the pipeline cannot plan
// from ends it with one reason, before anything is run.
func TestRunRefusesWhatCannotBePlanned(t *testing.T) {
	live := dryRunOptions(nodeTree("spark-healthy"))
	live.DryRun = false
	bad := dryRunOptions(nodeTree("spark-healthy"), filepath.Join(t.TempDir(), "gone.tar.gz"))
	for _, c := range []struct {
		name string
		o    RunOptions
		want string
	}{
		{"nothing named", RunOptions{DryRun: true}, "name the nodes with --hosts A,B (or --hosts localhost)"},
		{"snapshots, not dry", live, "--from-snapshot plans only; add --dry-run, or name live nodes with --hosts"},
		{"the same node twice", dryRunOptions(nodeTree("spark-healthy"), nodeTree("spark-healthy")), " is named twice"},
		{"an unreadable snapshot", bad, "gone.tar.gz: "},
	} {
		_, err := Run(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRefuse: a hard refusal always stops the run; a forceable one stops it
// unless forced, and is then only warned of; hard reasons come first.
func TestRefuse(t *testing.T) {
	p := &Plan{Refusals: []Refusal{{Host: "a", Reason: "GPU busy", Forceable: true}, {Host: "b", Reason: "no rails"}}}
	err := refuse(p, false, nil)
	if err == nil || err.Error() != "refusing to run: b: no rails; a: GPU busy" {
		t.Errorf("unforced: %v", err)
	}
	var warned []string
	err = refuse(p, true, func(s string) { warned = append(warned, s) })
	if err == nil || err.Error() != "refusing to run: b: no rails" {
		t.Errorf("forced: %v", err)
	}
	if !slices.Equal(warned, []string{"going on despite (--force): a: GPU busy"}) {
		t.Errorf("warned %q", warned)
	}
	p.Refusals = p.Refusals[:1]
	if err := refuse(p, true, func(string) {}); err != nil {
		t.Errorf("forced past the only, forceable refusal: %v", err)
	}
}

// TestIsLocalAndHostLine: only names of this machine run here; a node's
// error names it once, on one line.
func TestIsLocalAndHostLine(t *testing.T) {
	for hosts, want := range map[string]bool{"localhost": true, "localhost,127.0.0.1": true, "localhost,spark-1": false, "": false} {
		var hs []string
		if hosts != "" {
			hs = strings.Split(hosts, ",")
		}
		if IsLocal(hs) != want {
			t.Errorf("IsLocal(%q) = %v", hosts, !want)
		}
	}
	if got := hostLine("n1", errors.New("n1: dial tcp: refused\nmore")); got != "n1: dial tcp: refused" {
		t.Errorf("hostLine = %q", got)
	}
	if got := hostLine("n1", errors.New("deadline exceeded")); got != "n1: deadline exceeded" {
		t.Errorf("hostLine = %q", got)
	}
	if got := hostLine("n1", nil); got != "n1: no evidence" {
		t.Errorf("hostLine = %q", got)
	}
}
