package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

func nodeTree(name string) string {
	return filepath.Join("..", "..", "testdata", "nodes", name+".tar.gz")
}

var at = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// TestRunSnapshots: the healthy pair's snapshots are audited together (one
// cluster of two nodes), a snapshot that cannot be read is a host not
// audited with its reason, and the report's verdict is set.
func TestRunSnapshots(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone.tar.gz")
	r, err := Run(context.Background(), RunOptions{Audit: Options{Version: "test"}, Now: func() time.Time { return at },
		Snapshots: []string{nodeTree("spark-healthy"), nodeTree("spark-healthy-peer"), gone}})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, h := range r.Hosts {
		statuses = append(statuses, h.Status)
	}
	if !slices.Equal(statuses, []string{report.HostAudited, report.HostAudited, report.HostBadSnapshot}) {
		t.Errorf("host statuses %q", statuses)
	}
	if r.Cluster == nil || len(r.Cluster.Links) == 0 {
		t.Errorf("no links between the healthy pair: %+v", r.Cluster)
	}
	if r.Status == "" || r.Status != r.Overall() || !r.GeneratedAt.Equal(at) || r.ToolVersion != "test" || r.Command != "doctor" {
		t.Errorf("status %q (overall %q), generated %v, version %q, command %q", r.Status, r.Overall(), r.GeneratedAt, r.ToolVersion, r.Command)
	}
	if !strings.Contains(r.Hosts[2].Error, "gone.tar.gz") {
		t.Errorf("bad snapshot's reason %q does not name it", r.Hosts[2].Error)
	}
}

// unreachable is a runner none of whose nodes answers.
type unreachable struct{ hosts []string }

func (u *unreachable) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	u.hosts = append(u.hosts, host)
	return fmt.Errorf("%s: %w", host, runner.ErrUnreachable)
}

// TestRunRemote: the hosts go through the runner handed in; one that does
// not answer is a host not audited, named with its reason, the others'
// fates unchanged; the qualify step gets the acquired nodes and the report.
func TestRunRemote(t *testing.T) {
	u := &unreachable{}
	var qualified []string
	r, err := Run(context.Background(), RunOptions{Remote: true, Hosts: []string{"n1", "n2"}, Now: func() time.Time { return at },
		Acquire: acquire.Options{Runner: u, Parallel: 2, HostTimeout: 30 * time.Second, Timeout: 60 * time.Second, NoPing: true},
		Qualify: func(_ context.Context, nodes []acquire.Node, r *report.Report) error {
			for _, n := range nodes {
				qualified = append(qualified, n.Host)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(u.hosts)
	if !slices.Equal(slices.Compact(u.hosts), []string{"n1", "n2"}) {
		t.Errorf("runner reached %q", u.hosts)
	}
	if !slices.Equal(qualified, []string{"n1", "n2"}) {
		t.Errorf("qualify step got %q", qualified)
	}
	for _, h := range r.Hosts {
		if h.Status == report.HostAudited || !strings.HasPrefix(h.Error, h.Host+": ") {
			t.Errorf("host %+v", h)
		}
	}
	if r.Status != report.VerdictUnknown {
		t.Errorf("status %s, want unknown (no node audited)", r.Status)
	}
}

// TestRunRefuses: snapshots and hosts together, and a qualify step without
// hosts, are refused before anything is audited; the qualify step's own
// error ends the run.
func TestRunRefuses(t *testing.T) {
	q := func(context.Context, []acquire.Node, *report.Report) error { return nil }
	if _, err := Run(context.Background(), RunOptions{Remote: true, Snapshots: []string{"x"}}); !errors.Is(err, ErrMixed) {
		t.Errorf("mixed: %v", err)
	}
	if _, err := Run(context.Background(), RunOptions{Snapshots: []string{nodeTree("spark-healthy")}, Qualify: q}); !errors.Is(err, ErrQualifyNeedsHosts) {
		t.Errorf("qualify from snapshots: %v", err)
	}
	boom := errors.New("the probe would not start")
	_, err := Run(context.Background(), RunOptions{Remote: true, Hosts: []string{"n1"},
		Acquire: acquire.Options{Runner: &unreachable{}, Parallel: 1, HostTimeout: 30 * time.Second, Timeout: 60 * time.Second, NoPing: true},
		Qualify: func(context.Context, []acquire.Node, *report.Report) error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("qualify step's error: %v", err)
	}
}
