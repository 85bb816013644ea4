package fix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/topology"
)

// Audited is an audit of the nodes a plan is for: the doctor's report, the
// plan its change remedies come from (nil with PlanErr), how the topology
// was told, and the findings no change of the plan resolves.
type Audited struct {
	Report     *report.Report
	Plan       *Plan
	PlanErr    error
	Detected   string
	Unresolved []report.Finding
}

// RunOptions are the inputs of the fix command's planning pipeline (Run,
// Prepare).
type RunOptions struct {
	// Plan chooses the plan (topology, addressing, subnets, MTU, port).
	Plan Options
	// Targets are the nodes reached over their runner, captured as root
	// through Acquire; without them Snapshots are read, in node order.
	Targets   []Target
	Acquire   acquire.Options
	Snapshots []string
	// Audit audits the nodes as the doctor does, planning with the options
	// given (doctor.Audit, handed in: the doctor plans through this package),
	// so the plan and the findings it leaves to a person come from one audit.
	Audit func(nodes []acquire.Node, plan Options) Audited
	// Output, when set, also gets each host's proposed files under
	// Output/<host>/<path>.
	Output string
	// Version and Now stamp the report.
	Version string
	Now     func() time.Time
	// Notice hears the topology told from the nodes when none was given,
	// and each node given twice.
	Notice func(string)
}

// Prepare acquires every node (as root over the runner, or from snapshots,
// keeping what fix reads) and audits them with the plan's options. A plan
// is for the whole cluster, so a node that cannot be read stops it; a plan
// the guard refuses is an error wrapping ErrRefused.
func Prepare(ctx context.Context, o RunOptions) (Audited, error) {
	var nodes []acquire.Node
	if len(o.Targets) > 0 {
		ao := o.Acquire
		if ao.Runner == nil {
			ao.Runner = o.Targets[0].Runner
		}
		ao.Sudo = true // the ping mesh runs as the doctor's does: its findings are the plan's too
		hosts := make([]string, len(o.Targets))
		for i, t := range o.Targets {
			hosts[i] = t.Host
		}
		nodes = acquire.Remote(ctx, hosts, ao)
	} else {
		nodes = acquire.Snapshots(o.Snapshots, Evidence)
	}
	var bad []string
	for _, c := range nodes {
		if c.Err != nil || c.Snap == nil {
			bad = append(bad, hostLine(c.Host, c.Err))
			continue
		}
		c.Facts.Host = c.Host
	}
	switch {
	case len(bad) == 1 && len(o.Targets) == 0:
		return Audited{}, errors.New(bad[0])
	case len(bad) > 0:
		return Audited{}, fmt.Errorf("cannot read every node, so no plan:\n  %s", strings.Join(bad, "\n  "))
	}
	a := o.Audit(nodes, o.Plan)
	switch err := a.PlanErr; {
	case err != nil && strings.HasPrefix(err.Error(), "cannot tell the topology"):
		return a, fmt.Errorf("%w; give --topology %s", err, topology.Names(Topologies))
	case err != nil:
		return a, err
	}
	if o.Notice != nil {
		for _, h := range a.Report.Hosts {
			if h.SameAs != "" {
				o.Notice(fmt.Sprintf("sparkrig: fix: %s is given twice (%s and %s, the same host name and machine id): planned once", h.Host, h.SameAs, h.Source))
			}
		}
	}
	if o.Plan.Topology == "" && a.Plan.Topology != Local && o.Notice != nil {
		o.Notice(fmt.Sprintf("topology %s (%s); override with --topology", a.Plan.Topology, a.Detected))
	}
	return a, nil
}

// Run is the fix command's planning pipeline (fix --plan): Prepare, the
// files written under Output when asked, and the report of the plan with
// the findings it leaves to a person. Its verdict is the doctor's on the
// same evidence: ok only where no warn or fail finding remains.
func Run(ctx context.Context, o RunOptions) (*report.Report, error) {
	a, err := Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.Output != "" {
		if err := WriteFiles(o.Output, a.Plan); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Output, err)
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.Version, Command: "fix",
		GeneratedAt: now().UTC(), Hosts: []report.Host{}, FixPlan: a.Plan.Report(a.Unresolved), Status: a.Report.Status}, nil
}

// ApplyAll applies each host's part of the plan through its target, all at
// once; the outcomes are in the plan's host order (targets in that order).
func ApplyAll(ctx context.Context, p *Plan, ts []Target, opt ApplyOptions) []Outcome {
	outs := make([]Outcome, len(p.Hosts))
	var wg sync.WaitGroup
	for i, h := range p.Hosts {
		wg.Go(func() { outs[i] = Apply(ctx, h, ts[i], opt) })
	}
	wg.Wait()
	return outs
}

// hostLine is the first line of a node's error, naming the node once, as
// the doctor writes it (this package cannot import the doctor, which plans
// through it).
func hostLine(host string, err error) string {
	s := "no evidence"
	if err != nil {
		s, _, _ = strings.Cut(err.Error(), "\n")
	}
	if strings.HasPrefix(s, host+": ") {
		return s
	}
	return host + ": " + s
}
