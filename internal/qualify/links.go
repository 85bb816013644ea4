package qualify

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// LinksOptions are doctor --qualify's inputs: the nodes audited and how
// to reach them.
type LinksOptions struct {
	Runner      runner.Runner
	Nodes       []*facts.Node // each with its Host set
	Topology    string        // the cluster's, as doctor found it
	Self        string        // this binary, copied to the nodes for the TCP probe
	ToolVersion string
	Now         func() time.Time
	Log         io.Writer
}

// LinksResult is doctor --qualify's part of the report.
type LinksResult struct {
	Qualified []report.QualifiedDirection
	Findings  []report.Finding
}

// Links is doctor --qualify's traffic test: every link of the cluster in
// each direction on its own (ib_write_bw where perftest is on every node,
// sparkrig's TCP probe elsewhere), a direct-cabled ring's cables in
// NCCL's even/odd order, with the counters of both ends read before and
// after; directions judged slow are measured once more, and every
// direction is judged by the one link rule.
func Links(ctx context.Context, o LinksOptions) (*LinksResult, error) {
	if len(o.Nodes) < 2 {
		return nil, fmt.Errorf("--qualify needs two or more nodes reached over SSH")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	runDir := "/tmp/sparkrig-qualify-" + strconv.FormatInt(time.Now().UnixNano(), 36) // as bench names its scratch
	bo := bench.Options{Kinds: []string{bench.KindQualify}, Duration: bench.QualifyDuration, Streams: 4, RunDir: runDir, QualifyRDMA: true}
	plan, err := bench.NewPlan(o.Nodes, bo)
	if err != nil {
		return nil, fmt.Errorf("--qualify: %v", err)
	}
	// RDMA where perftest is on every node, sparkrig's TCP probe elsewhere
	if missing := bench.MissingTools(ctx, o.Runner, plan, func(tool string) bool { return tool != "ib_write_bw" }); len(missing) > 0 {
		bo.QualifyRDMA = false
		if plan, err = bench.NewPlan(o.Nodes, bo); err != nil {
			return nil, fmt.Errorf("--qualify: %v", err)
		}
	}
	// a direct-cabled ring's cables in NCCL's even/odd order, as qualify --ring
	plan.Steps = allpairs.RingSchedule(plan.Hosts, plan.Rails, plan.Steps)
	x := &bench.Executor{T: o.Runner, RunDir: runDir, Helper: o.Self, HelperPath: filepath.Join(runDir, "sparkrig")}
	bench.PointProbesAt(plan.Steps, x.HelperPath)
	set, err := expect.Default()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s := &bench.Session{Exec: x, Nodes: o.Nodes, Plan: plan, Set: set, Now: o.Now, ToolVersion: o.ToolVersion}
	rec := s.Run(ctx)
	want, src := Expectation(set, o.Nodes, o.Topology, bo.QualifyRDMA)
	q := bench.Qualify(rec, want, src)
	if ids := q.Suspects(rec); len(ids) > 0 && ctx.Err() == nil {
		again := *plan
		again.Steps = nil
		for _, st := range plan.Steps {
			if slices.Contains(ids, st.ID) {
				again.Steps = append(again.Steps, st)
			}
		}
		s2 := &bench.Session{Exec: x, Nodes: o.Nodes, Plan: &again, Set: set, Now: o.Now, ToolVersion: o.ToolVersion}
		bench.KeepBest(rec, s2.Run(ctx))
		q = bench.Qualify(rec, want, src)
	}
	fmt.Fprintf(o.Log, "qualified %d direction(s) of %d link(s) in %.1f s\n", len(q.Directions), len(plan.Rails), time.Since(start).Seconds())
	return &LinksResult{Qualified: q.Report(), Findings: q.Findings}, nil
}

// Expectation is the rate a direction of a link should reach on the nodes'
// platform with the tool used (ib_write_bw on one twin, or TCP), where
// expectations.yaml has one and every node is of that one platform; 0
// leaves the reference to the best pairs (diagnose.LinkRef).
func Expectation(set expect.Set, nodes []*facts.Node, topo string, rdma bool) (float64, string) {
	plat := ""
	for _, n := range nodes {
		if n == nil {
			return 0, ""
		}
		p := platform.Of(n)
		if plat != "" && p != plat {
			return 0, ""
		}
		plat = p
	}
	if plat == "" {
		return 0, ""
	}
	q := expect.Query{Platform: plat, Topology: topo, Measure: expect.TCPBW, Protocol: "TCP"}
	if rdma {
		q = expect.Query{Platform: plat, Topology: topo, Measure: expect.RDMABW, Verb: "write", Devices: 1}
	}
	for _, e := range set.Find(q) {
		return e.Value, e.Source
	}
	return 0, ""
}
