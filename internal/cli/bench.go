package cli

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// benchOptions are the flags of `sparkrig bench`.
type benchOptions struct {
	remote      remoteOptions
	hosts       []string // expanded from --hosts and --hostfile
	snapshots   []string
	dryRun      bool
	force       bool
	native      bool
	nativeNCCL  bool
	format      string
	resultsDir  string
	duration    time.Duration
	streams     int
	qps         int
	port        int
	collectives []string
	minBytes    string
	maxBytes    string
	memFraction float64
	tools       bench.Tools
	bootstrapIf string
	mpiHosts    []string
	probePath   string
}

func newBenchCmd(env *Env) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [rdma|tcp|nccl|qualify|all]... --hosts A,B",
		Short: "run network and NCCL benchmarks and judge the results",
		Long: `bench runs the network and NCCL benchmarks of a set of nodes the way they are meant
to be run, derived from each node's facts, then judges every result against its
expectation:

  rdma     ib_write_bw and ib_write_lat on every rail (the RoCE devices facing
           each other across a link), server on one node, client on the other;
           then ib_write_bw on all rails at once for the aggregate
  tcp      iperf3 per rail (-P streams, JSON), or with --native sparkrig's own
           probe (nothing installed on the nodes: a short-lived copy of
           sparkrig runs it)
  qualify  every rail in each direction on its own for a few seconds
           (sparkrig's probe), with both ends' error counters: what doctor
           --qualify runs
  nccl     nccl-tests (all_gather_perf, all_reduce_perf) through mpirun from
           the first host, with NCCL_SOCKET_IFNAME, NCCL_IB_HCA,
           NCCL_IB_GID_INDEX, UCX_NET_DEVICES and OMPI_MCA_btl_tcp_if_include
           derived from the facts; NCCL_DEBUG=INFO kept. Where a node lacks
           nccl-tests (or with --native-nccl), sparkrig's own collectives run
           instead: one "bench gpu collective" rank per node, through the
           node's libnccl, meeting at rank 0's TCP rendezvous on the first
           node's bootstrap address; no MPI, nothing to build
  all      rdma, tcp and nccl (the default)

Safety: message sizes are capped so a test takes at most --mem-fraction of the free
memory of any node (MemAvailable on unified memory); a GPU already running a process
stops the run unless --force. Both are read again as each NCCL test starts. --dry-run
prints every command per host with its environment and runs nothing. Every process started on a node is stopped on success,
failure, timeout and Ctrl-C.

Each run is written as one JSON document to --results (plan, facts summary,
commands, raw outputs, parsed results, verdicts); "sparkrig bench compare" shows
what changed between two of them.

` + exitHelp,
		Example: `  sparkrig bench --hosts spark-1,spark-2 --dry-run
  sparkrig bench rdma --hosts spark-1,spark-2
  sparkrig bench tcp --native --hosts spark-1,spark-2
  sparkrig bench nccl --hosts spark-1,spark-2 --nccl-tests ~/nccl-tests/build --collective all_gather
  sparkrig bench compare sparkrig-results/bench-A.json sparkrig-results/bench-B.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBench(cmd.Context(), env, o, args) },
	}
	f := cmd.Flags()
	addRemoteFlags(f, &o.remote)
	f.Lookup("hosts").Usage = "nodes to benchmark: names, ssh_config aliases, [user@]host[:port], pdsh ranges (spark-[01-02]); the first runs the servers and mpirun; \"localhost\" runs here"
	for _, name := range []string{"no-ping", "parallel", "host-timeout", "timeout"} {
		f.MarkHidden(name) // capture-only settings of the doctor
	}
	f.StringArrayVar(&o.snapshots, "from-snapshot", nil, "plan from captured snapshots instead of capturing (with --dry-run; repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print every command per host with its environment; run nothing")
	f.BoolVar(&o.force, "force", false, "run even when a GPU already runs a process or free memory is unknown")
	f.BoolVar(&o.native, "native", false, "tcp: use sparkrig's own probe instead of iperf3")
	f.BoolVar(&o.nativeNCCL, "native-nccl", false, "nccl: run the collectives with sparkrig's own benchmark (one process per node over its TCP rendezvous, no MPI) even where nccl-tests is installed")
	f.StringVar(&o.format, "format", "text", "output: text, json (the run's document), markdown, html or prometheus")
	f.StringVar(&o.resultsDir, "results", "sparkrig-results", "directory the run's JSON document is written to")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "length of each bandwidth test")
	f.IntVar(&o.streams, "streams", 4, "TCP streams per rail")
	f.IntVar(&o.qps, "qps", 1, "ib_write_bw queue pairs (-q)")
	intVarRange(f, &o.port, "port", bench.DefaultBasePort, 1024, 65535-bench.PortSpan+1,
		fmt.Sprintf("1024 to %d (the run listens on %d ports from there)", 65535-bench.PortSpan+1, bench.PortSpan), "first TCP port the servers listen on")
	choicesVar(f, &o.collectives, "collective", []string{"all_gather", "all_reduce"}, results.Collectives, results.CanonicalCollective,
		"nccl-tests collectives, comma-separated: "+strings.Join(results.Collectives, ", "))
	f.StringVar(&o.minBytes, "min-bytes", "32M", "nccl-tests -b")
	f.StringVar(&o.maxBytes, "max-bytes", "16G", "nccl-tests -e before the memory cap")
	f.Float64Var(&o.memFraction, "mem-fraction", 0.5, "largest share of a node's free memory one test may take")
	f.StringVar(&o.tools.Perftest, "perftest", "", "directory of ib_write_bw and ib_write_lat on the nodes (default: PATH)")
	f.StringVar(&o.tools.IPerf3, "iperf3", "", "path of iperf3 on the nodes (default: PATH)")
	f.StringVar(&o.tools.MPIRun, "mpirun", "", "path of mpirun on the first node (default: PATH)")
	f.StringVar(&o.tools.NCCLTests, "nccl-tests", "", "directory of the nccl-tests binaries on the nodes (default: PATH)")
	f.StringVar(&o.bootstrapIf, "bootstrap-if", "", "interface for NCCL bootstrap and MPI (default: derived)")
	f.StringSliceVar(&o.mpiHosts, "mpi-hosts", nil, "names mpirun on the first node uses for the nodes (default: rail addresses)")
	f.StringVar(&o.probePath, "probe-path", "", "sparkrig on the nodes for --native and the native NCCL collectives (default: copy this binary)")
	cmd.AddCommand(newBenchGPUCmd(env), newBenchCompareCmd(env), newProbeServerCmd(env), newProbeClientCmd(env))
	return cmd
}

func runBench(ctx context.Context, env *Env, o *benchOptions, args []string) error {
	kinds, err := benchKinds(args)
	if err != nil {
		return err
	}
	if o.hosts, err = o.remote.nodes(ctx, env); err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	formats := render.Formats
	if o.dryRun {
		formats = render.TextAndJSON
	}
	if o.format, err = checkFormat("bench", o.format, formats); err != nil {
		return err
	}
	if len(o.hosts) == 0 && len(o.snapshots) == 0 {
		return exitf(ExitUnknown, "bench: name the nodes with --hosts A,B (or --hosts localhost)")
	}
	if len(o.snapshots) > 0 && !o.dryRun {
		return exitf(ExitUnknown, "bench: --from-snapshot plans only; add --dry-run, or name live nodes with --hosts")
	}
	opts, err := o.planOptions(kinds)
	if err != nil {
		return err
	}
	t, closeT, err := o.transport(env)
	if err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	defer closeT()
	nodes, err := o.nodes(ctx, env)
	if err != nil {
		return err
	}
	if dup := duplicateHost(nodes); dup != "" {
		return exitf(ExitUnknown, "bench: %s is named twice", dup)
	}
	if slices.Contains(kinds, bench.KindNCCL) {
		opts.NCCLJSON = bench.NCCLJSONSupported(ctx, t, nodes[0].Host, opts.Tools)
		// Without nccl-tests on some node, the collectives run through the nodes' own NCCL.
		if o.nativeNCCL || len(o.snapshots) == 0 && !o.haveNCCLTests(ctx, t, nodes, opts.Tools) {
			opts.NativeNCCL = o.nativeNCCLPath(opts.RunDir)
		}
	}
	if len(nodes) > 1 {
		opts.Links, opts.Topology = bench.FromCluster(cluster.Analyze(nodes))
	}
	if len(o.snapshots) == 0 {
		opts.Live = bench.ReadLive(ctx, t, nodes)
	}
	plan, err := bench.NewPlan(nodes, opts)
	if err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	if o.dryRun {
		r := newDocument(env, "bench")
		r.BenchPlan = plan.Report()
		if err := writeDocument(env, r, o.format); err != nil {
			return exitf(ExitUnknown, "bench: %v", err)
		}
		return nil
	}
	if err := refuse(env, plan, o.force); err != nil {
		return err
	}
	return o.execute(ctx, env, t, nodes, plan, opts)
}

// benchKinds turns the positional arguments into benchmark kinds.
func benchKinds(args []string) ([]string, error) {
	if len(args) == 0 {
		args = []string{"all"}
	}
	var kinds []string
	for _, a := range args {
		switch a {
		case "all":
			kinds = append(kinds, bench.KindRDMA, bench.KindTCP, bench.KindNCCL)
		case bench.KindRDMA, bench.KindTCP, bench.KindNCCL, bench.KindQualify:
			kinds = append(kinds, a)
		default:
			return nil, exitf(ExitUnknown, "bench: unknown benchmark %q (want rdma, tcp, nccl, qualify, all, or a subcommand: compare, gpu)", a)
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds), nil
}

func (o *benchOptions) planOptions(kinds []string) (bench.Options, error) {
	minB, err := results.ParseSize(o.minBytes)
	if err != nil {
		return bench.Options{}, exitf(ExitUnknown, "bench: --min-bytes: %v", err)
	}
	maxB, err := results.ParseSize(o.maxBytes)
	if err != nil {
		return bench.Options{}, exitf(ExitUnknown, "bench: --max-bytes: %v", err)
	}
	if minB <= 0 {
		return bench.Options{}, exitf(ExitUnknown, "bench: --min-bytes must be above 0")
	}
	if minB > maxB {
		return bench.Options{}, exitf(ExitUnknown, "bench: --min-bytes %s is above --max-bytes %s", o.minBytes, o.maxBytes)
	}
	if o.memFraction <= 0 || o.memFraction > 0.9 {
		return bench.Options{}, exitf(ExitUnknown, "bench: --mem-fraction %.2f: want more than 0 and at most 0.9", o.memFraction)
	}
	switch {
	case o.streams < 1 || o.streams > 128:
		return bench.Options{}, exitf(ExitUnknown, "bench: --streams %d: want 1 to 128", o.streams)
	case o.qps < 1:
		return bench.Options{}, exitf(ExitUnknown, "bench: --qps %d: want 1 or more", o.qps)
	case o.duration < time.Second:
		return bench.Options{}, exitf(ExitUnknown, "bench: --duration %s: want 1s or more", o.duration)
	}
	runDir := "/tmp/sparkrig-bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return bench.Options{Kinds: kinds, Tools: o.tools, Duration: o.duration, Streams: o.streams, QPs: o.qps,
		BasePort: o.port, Collectives: o.collectives, MinBytes: minB, MaxBytes: maxB, MemFraction: o.memFraction,
		BootstrapIf: o.bootstrapIf, MPIHosts: o.mpiHosts, Native: o.native, ProbePath: o.probePath, RunDir: runDir,
		AcceptNewHostKeys: o.remote.acceptNew}, nil
}

// isLocal reports whether every host is this machine ("localhost",
// "127.0.0.1"): commands then run through sh here, not SSH.
func (o *benchOptions) isLocal() bool {
	for _, h := range o.hosts {
		if h != "localhost" && h != "127.0.0.1" {
			return false
		}
	}
	return len(o.hosts) > 0
}

// haveNCCLTests reports whether every node has the first collective's
// nccl-tests binary.
func (o *benchOptions) haveNCCLTests(ctx context.Context, t runner.Runner, nodes []*facts.Node, tools bench.Tools) bool {
	for _, n := range nodes {
		if !bench.HaveTool(ctx, t, n.Host, tools.Path(o.collectives[0]+"_perf")) {
			return false
		}
	}
	return true
}

// nativeNCCLPath is the sparkrig that runs the native collectives on the
// nodes: this binary when they are this machine, --probe-path when given,
// otherwise the copy execute places in the run directory.
func (o *benchOptions) nativeNCCLPath(runDir string) string {
	if o.isLocal() {
		if self, err := os.Executable(); err == nil {
			return self
		}
	}
	if o.probePath != "" {
		return o.probePath
	}
	return filepath.Join(runDir, "sparkrig")
}

// transport is how commands reach the nodes: sh here for localhost, SSH otherwise.
func (o *benchOptions) transport(env *Env) (runner.Runner, func(), error) {
	if o.isLocal() || len(o.hosts) == 0 {
		return runner.Local{}, func() {}, nil
	}
	r, err := o.remote.runner(env) // the capture's: each host is dialled once
	if err != nil {
		return nil, nil, err
	}
	return r, o.remote.closeRunner, nil
}

// nodes returns every host's facts: from snapshots, or captured now. Any
// host that cannot be captured stops the run: a plan needs all of them.
func (o *benchOptions) nodes(ctx context.Context, env *Env) ([]*facts.Node, error) {
	if len(o.snapshots) > 0 {
		var nodes []*facts.Node
		for _, p := range o.snapshots {
			s, err := snapshot.Read(p)
			if err != nil {
				return nil, exitf(ExitUnknown, "bench: %s: %v", p, err)
			}
			nodes = append(nodes, facts.FromSnapshot(s))
		}
		return nodes, nil
	}
	if o.isLocal() || len(o.hosts) == 0 {
		// Every host is this machine: one capture, named as the user named it.
		local := acquire.Local(ctx, Version, env.Now)
		var nodes []*facts.Node
		for _, h := range o.hosts {
			n := *local.Facts
			n.Host = h
			nodes = append(nodes, &n)
		}
		return nodes, nil
	}
	ro := o.remote
	ro.noPing = true // the bench measures the links itself
	caps, err := captureRemote(ctx, env, &ro)
	if err != nil {
		return nil, exitf(ExitUnknown, "bench: %v", err)
	}
	var nodes []*facts.Node
	var bad []string
	for _, c := range caps {
		if c.Err != nil || c.Facts == nil {
			bad = append(bad, doctor.HostLine(c.Host, c.Err))
			continue
		}
		n := *c.Facts
		n.Host = c.Host
		nodes = append(nodes, &n)
	}
	if len(bad) > 0 {
		return nil, exitf(ExitUnknown, "bench: a plan needs every node: %s", strings.Join(bad, "; "))
	}
	return nodes, nil
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

// refuse stops a run the plan says must not happen.
func refuse(env *Env, p *bench.Plan, force bool) error {
	var hard, soft []string
	for _, r := range p.Refusals {
		line := r.Host + ": " + r.Reason
		if r.Forceable && force {
			fmt.Fprintln(env.Stderr, "sparkrig: bench: going on despite (--force): "+line)
			continue
		}
		if r.Forceable {
			soft = append(soft, line)
		} else {
			hard = append(hard, line)
		}
	}
	if all := append(hard, soft...); len(all) > 0 {
		return exitf(ExitUnknown, "bench: refusing to run: %s", strings.Join(all, "; "))
	}
	return nil
}

func (o *benchOptions) execute(ctx context.Context, env *Env, t runner.Runner, nodes []*facts.Node, plan *bench.Plan, opts bench.Options) error {
	set, err := expect.Default()
	if err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	x := &bench.Executor{T: t, RunDir: opts.RunDir}
	if (o.native || opts.NativeNCCL != "" || slices.Contains(opts.Kinds, bench.KindQualify)) && o.probePath == "" {
		if err := helper(x, o.isLocal(), plan); err != nil {
			return exitf(ExitUnknown, "bench: %v", err)
		}
	}
	s := &bench.Session{Exec: x, Nodes: nodes, Plan: plan, Set: set, Args: os.Args[1:], Now: env.Now, ToolVersion: Version, Force: o.force}
	if env.StdoutTTY {
		s.Progress = progress(env.Stderr)
	}
	env.cleansUp.Store(true) // an interrupt waits for the nodes to be cleaned up
	rec := s.Run(ctx)
	path, err := bench.Save(o.resultsDir, rec)
	if err != nil {
		fmt.Fprintf(env.Stderr, "sparkrig: bench: writing the result: %v\n", err)
	}
	if o.format == "json" { // the run's whole document: the report and the raw outputs
		if err := render.JSON(env.Stdout, rec); err != nil {
			return exitf(ExitUnknown, "bench: writing JSON: %v", err)
		}
	} else if err := writeDocument(env, &rec.Report, o.format); err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	if path != "" {
		fmt.Fprintf(env.Stderr, "wrote %s\n", path)
	}
	if rec.Bench.Interrupted {
		return statusError(ExitInterrupted)
	}
	return statusError(exitFor(rec.Status))
}

// helper arranges for the probe: this very binary here, a copy elsewhere.
func helper(x *bench.Executor, local bool, plan *bench.Plan) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if local {
		replaceArg0(plan.Steps, self)
		return nil
	}
	x.Helper, x.HelperPath = self, filepath.Join(x.RunDir, "sparkrig")
	replaceArg0(plan.Steps, x.HelperPath)
	return nil
}

// replaceArg0 points the probe commands at the helper's path.
func replaceArg0(steps []bench.Step, path string) {
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

// progress prints a line as each step starts and ends (terminal only).
func progress(w io.Writer) func(bench.Event) {
	return func(e bench.Event) {
		if !e.Done {
			fmt.Fprintf(w, "[%d/%d] %s ...\n", e.Index, e.Total, e.Step.ID)
			return
		}
		line := e.Status
		if e.Result != nil && e.Result.Measured != "" {
			line = e.Result.Measured + " → " + string(e.Result.Status)
		} else if e.Result != nil && e.Result.Error != "" {
			line = e.Status + ": " + e.Result.Error
		}
		fmt.Fprintf(w, "[%d/%d] %s: %s\n", e.Index, e.Total, e.Step.ID, line)
	}
}
