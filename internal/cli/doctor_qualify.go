package cli

import (
	"context"
	"fmt"
	"os"
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
)

// qualify runs doctor --qualify: a short traffic test of every link of the
// cluster in each direction on its own, with the counters of both ends read
// before and after, and adds the per-direction results and their findings
// to the report.
func qualify(ctx context.Context, env *Env, opts *doctorOptions, caps []hostCapture, r *report.Report) error {
	var nodes []*facts.Node
	for _, c := range caps {
		if c.Err == nil && c.Facts != nil {
			n := *c.Facts
			n.Host = c.Host
			nodes = append(nodes, &n)
		}
	}
	if len(nodes) < 2 {
		return exitf(ExitUnknown, "doctor: --qualify needs two or more nodes reached over SSH")
	}
	t, err := opts.remote.runner(env) // the capture's: each host is dialled once
	if err != nil {
		return exitf(ExitUnknown, "doctor: %v", err)
	}
	runDir := "/tmp/sparkrig-qualify-" + strconv.FormatInt(time.Now().UnixNano(), 36) // as bench names its scratch
	bo := bench.Options{Kinds: []string{bench.KindQualify}, Duration: bench.QualifyDuration, Streams: 4, RunDir: runDir, QualifyRDMA: true}
	plan, err := bench.NewPlan(nodes, bo)
	if err != nil {
		return exitf(ExitUnknown, "doctor: --qualify: %v", err)
	}
	// RDMA where perftest is on every node, sparkrig's TCP probe elsewhere
	if missing := bench.MissingTools(ctx, t, plan, func(tool string) bool { return tool != "ib_write_bw" }); len(missing) > 0 {
		bo.QualifyRDMA = false
		if plan, err = bench.NewPlan(nodes, bo); err != nil {
			return exitf(ExitUnknown, "doctor: --qualify: %v", err)
		}
	}
	// a direct-cabled ring's cables in NCCL's even/odd order, as qualify --ring
	plan.Steps = allpairs.RingSchedule(plan.Hosts, plan.Rails, plan.Steps)
	self, err := os.Executable()
	if err != nil {
		return exitf(ExitUnknown, "doctor: --qualify: %v", err)
	}
	x := &bench.Executor{T: t, RunDir: runDir, Helper: self, HelperPath: filepath.Join(runDir, "sparkrig")}
	replaceArg0(plan.Steps, x.HelperPath)
	set, err := expect.Default()
	if err != nil {
		return exitf(ExitUnknown, "doctor: %v", err)
	}
	start := time.Now()
	s := &bench.Session{Exec: x, Nodes: nodes, Plan: plan, Set: set, Now: env.Now, ToolVersion: Version}
	env.cleansUp.Store(true) // an interrupt waits for the nodes to be cleaned up
	rec := s.Run(ctx)
	want, src := qualifyExpectation(set, nodes, r.Cluster.Topology, bo.QualifyRDMA)
	q := bench.Qualify(rec, want, src)
	if ids := q.Suspects(rec); len(ids) > 0 && ctx.Err() == nil {
		again := *plan
		again.Steps = nil
		for _, st := range plan.Steps {
			if slices.Contains(ids, st.ID) {
				again.Steps = append(again.Steps, st)
			}
		}
		s2 := &bench.Session{Exec: x, Nodes: nodes, Plan: &again, Set: set, Now: env.Now, ToolVersion: Version}
		bench.KeepBest(rec, s2.Run(ctx))
		q = bench.Qualify(rec, want, src)
	}
	r.Cluster.Qualified = q.Report()
	r.Cluster.Findings = append(r.Cluster.Findings, q.Findings...)
	fmt.Fprintf(env.Stderr, "qualified %d direction(s) of %d link(s) in %.1f s\n", len(q.Directions), len(plan.Rails), time.Since(start).Seconds())
	return nil
}

// qualifyExpectation is the rate a direction of a link should reach on the
// nodes' platform with the tool used (ib_write_bw on one twin, or TCP),
// where expectations.yaml has one; 0 compares the directions with the best
// one measured instead.
func qualifyExpectation(set expect.Set, nodes []*facts.Node, topo string, rdma bool) (float64, string) {
	plat := ""
	for _, n := range nodes {
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
