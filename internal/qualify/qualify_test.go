package qualify

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// floodingNode answers every command with endless output until stopped,
// as a broken or hostile node may.
type floodingNode struct{}

func (floodingNode) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	line := []byte(strings.Repeat("eth0 UP 10.0.0.1/24 ", 50) + "\n")
	for written := 0; written < 256<<20; written += len(line) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := stdout.Write(line); err != nil {
			return err
		}
	}
	return nil
}

func (floodingNode) String() string { return "flooding" }

// A node whose address listing never ends is left out, named with its
// output past the bound, instead of being held whole.
func TestListAddrsBoundsWhatANodeSends(t *testing.T) {
	_, gone := listAddrs(context.Background(), floodingNode{}, []string{"node-1"}, 60*time.Second)
	if why := gone["node-1"]; !strings.Contains(why, runner.ErrTooMuchOutput.Error()) {
		t.Fatalf("node-1 left out for %q, want its output past the bound", why)
	}
}

// deadOrAlive answers `ip -br addr` on every node but dead, which refuses
// the connection as a node that is down does.
type deadOrAlive struct{ dead string }

func (d deadOrAlive) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	if host == d.dead {
		return errors.New("ssh: connect to host " + host + " port 22: Connection refused")
	}
	_, err := io.WriteString(stdout, "lo UNKNOWN 127.0.0.1/8\nenp1s0f1np1 UP 10.77.0."+strings.TrimPrefix(host, "node-")+"/24\n")
	return err
}

func (deadOrAlive) String() string { return "test" }

// A node that does not answer is left out with why; the others' addresses
// are read.
func TestListAddrsLeavesOutADeadNode(t *testing.T) {
	addrs, gone := listAddrs(context.Background(), deadOrAlive{dead: "node-2"}, []string{"node-1", "node-2", "node-3"}, 60*time.Second)
	if len(gone) != 1 || gone["node-2"] != "ssh: connect to host node-2 port 22: Connection refused" {
		t.Fatalf("gone %q", gone)
	}
	if len(addrs[0]) == 0 || len(addrs[2]) == 0 || len(addrs[1]) != 0 {
		t.Fatalf("addrs %v", addrs)
	}
}

// What a direction of a Spark link should reach with each tool, from
// expectations.yaml; other platforms, and nodes of two platforms, leave it
// to the best pairs.
func TestExpectation(t *testing.T) {
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	spark := &facts.Node{DGX: &facts.DGXRelease{Name: "DGX Spark"}}
	for _, tt := range []struct {
		nodes []*facts.Node
		rdma  bool
		want  float64
	}{{[]*facts.Node{spark, spark}, true, 96}, {[]*facts.Node{spark, spark}, false, 35}, {[]*facts.Node{{}, {}}, false, 0},
		{[]*facts.Node{spark, {}}, false, 0}, {[]*facts.Node{spark, nil}, false, 0}} {
		if got, src := Expectation(set, tt.nodes, "switch", tt.rdma); got != tt.want || (got > 0) != (src != "") {
			t.Errorf("rdma=%v: %v (%q), want %v", tt.rdma, got, src, tt.want)
		}
	}
}

// Options are refused, one line each, before any node is reached.
func TestCheckRefusesBadOptions(t *testing.T) {
	ok := Options{Hosts: []string{"a", "b"}, Budget: time.Minute}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Expected = -5 }, "--expected-gbps -5: want a rate above 0 Gb/s (or leave it out to judge against the best pairs)"},
		{func(o *Options) { o.Hosts = o.Hosts[:1] }, "needs two or more nodes (--hosts or --hostfile)"},
		{func(o *Options) { o.TestTime = time.Millisecond }, "--test-time 1ms is under 1s"},
		{func(o *Options) { o.Budget = time.Second }, "--budget: a budget of 1s is too small for 2 nodes (3 rounds): at least 3s"},
	} {
		o := ok
		tt.change(&o)
		err := o.Check()
		if err == nil || err.Error() != tt.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}

// With one node of three answering, Run measures nothing and says which
// nodes could not be reached, one line.
func TestRunNeedsTwoNodesReached(t *testing.T) {
	o := Options{Runner: deadOrAlive{dead: "node-2"}, Hosts: []string{"node-1", "node-2"}, Budget: time.Minute}
	rep, err := Run(context.Background(), o)
	if rep != nil || err == nil || err.Error() != "fewer than two nodes could be reached: node-2: ssh: connect to host node-2 port 22: Connection refused" {
		t.Fatalf("report %v, error %v", rep, err)
	}
}

// qualify's Prometheus output carries sparkrig_status as every command's
// does, and its wall time in milliseconds, never a float's last digits.
func TestPrometheusStatusAndWallTime(t *testing.T) {
	res := &allpairs.Result{Names: []string{"n1", "n2", "n3"}, Rounds: allpairs.Circle(3), Wall: 7616027200 * time.Nanosecond}
	for _, round := range res.Rounds {
		for _, p := range round {
			g := 9.4
			if p.A == 2 || p.B == 2 {
				g = 0.9
			}
			res.Measurements = append(res.Measurements, allpairs.Measurement{Test: allpairs.Test{From: p.A, To: p.B}, Gbps: g},
				allpairs.Measurement{Test: allpairs.Test{From: p.B, To: p.A}, Gbps: g})
		}
	}
	res.Judgement = allpairs.Judge(res.Names, res.Measurements, allpairs.DefaultRules)
	ap, fs := res.Report(allpairs.AllPairs, allpairs.ToolTCP, "")
	rep := &report.Report{Command: "qualify", AllPairs: ap, Cluster: &report.Cluster{Findings: fs}}
	rep.Status = report.FindingsVerdict(fs, false)
	var b strings.Builder
	if err := render.Write(&b, rep, "prometheus", render.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nsparkrig_status 1\n", "\nsparkrig_allpairs_wall_seconds 7.616\n", `sparkrig_allpairs_reference_gbps{reference="best pairs"} 9.4`} {
		if !strings.Contains("\n"+b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
