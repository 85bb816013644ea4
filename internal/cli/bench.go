package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/sanitize"
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

// benchHelp is bench's description.
const benchHelp = `bench runs the network and NCCL benchmarks of a set of nodes the way they are meant
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

` + exitHelp

func newBenchCmd(env *Env) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [rdma|tcp|nccl|qualify|all]... --hosts A,B",
		Short: "run network and NCCL benchmarks and judge the results",
		Long:  benchHelp,
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
	f.StringVar(&o.format, "format", "text", "output: text, json (the run's document), markdown, html or prometheus; a --dry-run plan: "+strings.Join(render.TextAndJSON, " or "))
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
	formats, cmd := render.Formats, "bench"
	if o.dryRun {
		formats, cmd = render.TextAndJSON, "bench --dry-run"
	}
	if o.format, err = checkFormat(cmd, o.format, formats); err != nil {
		return err
	}
	ro, err := o.runOptions(env, kinds)
	if err != nil {
		return err
	}
	if !bench.IsLocal(o.hosts) && len(o.hosts) > 0 {
		defer o.remote.closeRunner()
		if ro.Acquire, err = o.remote.acquireOptions(env, false); err != nil { // the capture's runner: each host is dialled once
			return exitf(ExitUnknown, "bench: %v", err)
		}
		ro.Runner = ro.Acquire.Runner
	}
	saved := ""
	ro.Saved = func(path string, err error) {
		if saved = path; err != nil {
			fmt.Fprintf(env.Stderr, "sparkrig: bench: writing the result: %s\n", sanitize.Line(err.Error()))
		}
	}
	rec, err := bench.Run(ctx, ro)
	if err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	return writeBench(env, rec, o, saved)
}

// runOptions are bench.Run's inputs from the flags.
func (o *benchOptions) runOptions(env *Env, kinds []string) (bench.RunOptions, error) {
	if len(o.hosts) == 0 && len(o.snapshots) == 0 {
		return bench.RunOptions{}, exitf(ExitUnknown, "bench: name the nodes with --hosts A,B (or --hosts localhost)")
	}
	if len(o.snapshots) > 0 && !o.dryRun {
		return bench.RunOptions{}, exitf(ExitUnknown, "bench: --from-snapshot plans only; add --dry-run, or name live nodes with --hosts")
	}
	opts, err := o.planOptions(kinds)
	if err != nil {
		return bench.RunOptions{}, err
	}
	self, _ := os.Executable()
	ro := bench.RunOptions{Plan: opts, Hosts: o.hosts, Snapshots: o.snapshots, DryRun: o.dryRun, Force: o.force,
		NativeNCCL: o.nativeNCCL, Self: self, ResultsDir: o.resultsDir, Args: os.Args[1:], Now: env.Now, ToolVersion: Version,
		Warn:     func(s string) { fmt.Fprintln(env.Stderr, "sparkrig: bench: "+sanitize.Line(s)) },
		Starting: func() { env.cleansUp.Store(true) }, // an interrupt waits for the nodes to be cleaned up
	}
	if env.StdoutTTY {
		ro.Progress = progress(env.Stderr)
	}
	return ro, nil
}

// writeBench renders a dry run's plan, or a run (--format json: its whole
// record, raw outputs included), and exits with the run's verdict.
func writeBench(env *Env, rec *bench.Record, o *benchOptions, saved string) error {
	if o.dryRun {
		if err := writeDocument(env, &rec.Report, o.format); err != nil {
			return exitf(ExitUnknown, "bench: %v", err)
		}
		return nil
	}
	if o.format == "json" {
		if err := render.JSON(env.Stdout, rec); err != nil {
			return exitf(ExitUnknown, "bench: writing JSON: %v", err)
		}
	} else if err := writeDocument(env, &rec.Report, o.format); err != nil {
		return exitf(ExitUnknown, "bench: %v", err)
	}
	if saved != "" {
		fmt.Fprintf(env.Stderr, "wrote %s\n", sanitize.Line(saved))
	}
	if rec.Bench.Interrupted {
		return statusError(ExitInterrupted)
	}
	return statusError(exitFor(rec.Status))
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
