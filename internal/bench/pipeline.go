package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// RunOptions are the inputs of the bench command's pipeline (Run): which
// nodes, how they are reached and acquired, the plan's settings and what to
// do with the plan.
type RunOptions struct {
	// Plan holds the benchmarks' settings (kinds, tools, ports, sizes, the
	// run directory); Run fills in what the nodes tell.
	Plan Options
	// Hosts are the nodes as named; "localhost" (every one of them) runs
	// here (IsLocal). Snapshots, when given, plan from captured nodes
	// instead (DryRun only).
	Hosts     []string
	Snapshots []string
	// Runner reaches the nodes (the caller closes it); Acquire bounds their
	// capture over it (no ping mesh: the bench measures the links itself).
	Runner  runner.Runner
	Acquire acquire.Options
	// DryRun returns the plan and runs nothing; Force runs despite the
	// refusals that may be overridden; NativeNCCL runs the collectives
	// through the nodes' own NCCL even where nccl-tests is installed.
	DryRun, Force, NativeNCCL bool
	// Self is this program's path: the probe and the native collectives
	// run as a copy of it on the nodes unless Plan.ProbePath names one.
	Self string
	// ResultsDir is where the run's record is written (Save).
	ResultsDir string
	// Saved hears where the record was written, or why it was not.
	Saved func(path string, err error)
	// Args are the command line the record keeps; Now, ToolVersion stamp it.
	Args        []string
	Now         func() time.Time
	ToolVersion string
	// Progress hears each step start and end; Warn each refusal run past
	// with Force; Starting is called once, just before anything runs on
	// the nodes (from then on an interrupt must wait for their cleanup).
	Progress func(Event)
	Warn     func(string)
	Starting func()
}

// Run is the bench command's pipeline: the nodes acquired (snapshots,
// this machine, or a capture over the runner; a plan needs every node),
// the plan made from their facts, links and live state, then, unless
// DryRun, the run refused or executed, judged and saved. A dry run's
// record holds the plan alone (Report.BenchPlan); a run's record is the
// whole run (Record.Bench) with its raw outputs.
func Run(ctx context.Context, o RunOptions) (*Record, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.Hosts) == 0 && len(o.Snapshots) == 0 {
		return nil, errors.New("name the nodes with --hosts A,B (or --hosts localhost)")
	}
	if len(o.Snapshots) > 0 && !o.DryRun {
		return nil, errors.New("--from-snapshot plans only; add --dry-run, or name live nodes with --hosts")
	}
	t := o.Runner
	if t == nil || IsLocal(o.Hosts) {
		t = runner.Local{}
	}
	nodes, err := acquireNodes(ctx, t, o)
	if err != nil {
		return nil, err
	}
	if dup := duplicateHost(nodes); dup != "" {
		return nil, fmt.Errorf("%s is named twice", dup)
	}
	opts := o.Plan
	if slices.Contains(opts.Kinds, KindNCCL) {
		opts.NCCLJSON = NCCLJSONSupported(ctx, t, nodes[0].Host, opts.Tools)
		// Without nccl-tests on some node, the collectives run through the nodes' own NCCL.
		if o.NativeNCCL || len(o.Snapshots) == 0 && !haveNCCLTests(ctx, t, nodes, opts) {
			opts.NativeNCCL = nativeNCCLPath(o, opts.RunDir)
		}
	}
	if len(nodes) > 1 {
		opts.Links, opts.Topology = FromCluster(cluster.Analyze(nodes))
	}
	if len(o.Snapshots) == 0 {
		opts.Live = ReadLive(ctx, t, nodes)
	}
	plan, err := NewPlan(nodes, opts)
	if err != nil {
		return nil, err
	}
	if o.DryRun {
		return &Record{Report: report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.ToolVersion,
			Command: "bench", GeneratedAt: o.Now().UTC(), Hosts: []report.Host{}, BenchPlan: plan.Report()}}, nil
	}
	if err := refuse(plan, o.Force, o.Warn); err != nil {
		return nil, err
	}
	return execute(ctx, t, nodes, plan, opts, o)
}

// IsLocal reports whether every host named is this machine ("localhost",
// "127.0.0.1"): commands then run through sh here, not over a runner.
func IsLocal(hosts []string) bool {
	for _, h := range hosts {
		if h != "localhost" && h != "127.0.0.1" {
			return false
		}
	}
	return len(hosts) > 0
}

// acquireNodes returns every host's facts through acquire: from snapshots,
// this machine captured once (named as the user named it), or captured over
// the runner. Any host that cannot be had stops the run.
func acquireNodes(ctx context.Context, t runner.Runner, o RunOptions) ([]*facts.Node, error) {
	var got []acquire.Node
	switch {
	case len(o.Snapshots) > 0:
		// Only the facts are needed: the snapshots' data are let go.
		got = acquire.Snapshots(o.Snapshots, func(string) bool { return false })
		for _, n := range got {
			if n.Err != nil {
				return nil, fmt.Errorf("%s: %v", n.Source, n.Err)
			}
		}
	case IsLocal(o.Hosts) || len(o.Hosts) == 0:
		local := acquire.Local(ctx, o.ToolVersion, o.Now)
		for _, h := range o.Hosts {
			n := local
			n.Host = h
			got = append(got, n)
		}
	default:
		ao := o.Acquire
		ao.Runner, ao.NoPing = t, true
		if ao.ToolVersion == "" {
			ao.ToolVersion = o.ToolVersion
		}
		got = acquire.Remote(ctx, o.Hosts, ao)
	}
	var nodes []*facts.Node
	var bad []string
	for _, c := range got {
		if c.Err != nil || c.Facts == nil {
			bad = append(bad, hostLine(c.Host, c.Err))
			continue
		}
		n := *c.Facts
		if len(o.Snapshots) == 0 {
			n.Host = c.Host
		}
		nodes = append(nodes, &n)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("a plan needs every node: %s", strings.Join(bad, "; "))
	}
	return nodes, nil
}

// hostLine is the first line of a node's error, naming the node once (as
// the doctor names it): an error from dialling it starts with its name
// already, one from the fan-out's deadlines does not.
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

func duplicateHost(nodes []*facts.Node) string {
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.Host] {
			return n.Host
		}
		seen[n.Host] = true
	}
	return ""
}

// haveNCCLTests reports whether every node has the first collective's
// nccl-tests binary.
func haveNCCLTests(ctx context.Context, t runner.Runner, nodes []*facts.Node, o Options) bool {
	coll := "all_gather"
	if len(o.Collectives) > 0 {
		coll = o.Collectives[0]
	}
	for _, n := range nodes {
		if !HaveTool(ctx, t, n.Host, o.Tools.Path(coll+"_perf")) {
			return false
		}
	}
	return true
}

// nativeNCCLPath is the sparkrig that runs the native collectives on the
// nodes: this program when they are this machine, Plan.ProbePath when
// given, otherwise the copy execute places in the run directory.
func nativeNCCLPath(o RunOptions, runDir string) string {
	if IsLocal(o.Hosts) && o.Self != "" {
		return o.Self
	}
	if o.Plan.ProbePath != "" {
		return o.Plan.ProbePath
	}
	return filepath.Join(runDir, "sparkrig")
}

// refuse stops a run the plan says must not happen; with force, the
// refusals that may be overridden are only warned of.
func refuse(p *Plan, force bool, warn func(string)) error {
	var hard, soft []string
	for _, r := range p.Refusals {
		line := r.Host + ": " + r.Reason
		if r.Forceable && force {
			if warn != nil {
				warn("going on despite (--force): " + line)
			}
			continue
		}
		if r.Forceable {
			soft = append(soft, line)
		} else {
			hard = append(hard, line)
		}
	}
	if all := append(hard, soft...); len(all) > 0 {
		return fmt.Errorf("refusing to run: %s", strings.Join(all, "; "))
	}
	return nil
}

// execute runs the plan, judges it against the expectations and saves the
// record.
func execute(ctx context.Context, t runner.Runner, nodes []*facts.Node, plan *Plan, opts Options, o RunOptions) (*Record, error) {
	set, err := expect.Default()
	if err != nil {
		return nil, err
	}
	x := &Executor{T: t, RunDir: opts.RunDir}
	if (opts.Native || opts.NativeNCCL != "" || slices.Contains(opts.Kinds, KindQualify)) && opts.ProbePath == "" {
		if o.Self == "" {
			return nil, errors.New("the probe needs this program's path")
		}
		placeHelper(x, IsLocal(o.Hosts), plan, o.Self)
	}
	s := &Session{Exec: x, Nodes: nodes, Plan: plan, Set: set, Args: o.Args, Now: o.Now, ToolVersion: o.ToolVersion,
		Force: o.Force, Progress: o.Progress}
	if o.Starting != nil {
		o.Starting()
	}
	rec := s.Run(ctx)
	path, err := Save(o.ResultsDir, rec)
	if o.Saved != nil {
		o.Saved(path, err)
	}
	return rec, nil
}

// placeHelper arranges for the probe: self here, a copy of it elsewhere.
func placeHelper(x *Executor, local bool, plan *Plan, self string) {
	if local {
		PointProbesAt(plan.Steps, self)
		return
	}
	x.Helper, x.HelperPath = self, filepath.Join(x.RunDir, "sparkrig")
	PointProbesAt(plan.Steps, x.HelperPath)
}

// replaceArg0 points the probe commands at the helper's path.
func PointProbesAt(steps []Step, path string) {
	for i := range steps {
		if steps[i].Tool != "sparkrig-probe" {
			continue
		}
		for j := range steps[i].Servers {
			steps[i].Servers[j].Argv[0] = path
		}
		for j := range steps[i].Clients {
			steps[i].Clients[j].Argv[0] = path
		}
	}
}
