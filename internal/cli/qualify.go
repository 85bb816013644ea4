package cli

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/qualify"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/results"
)

// qualifyOptions are the flags of `sparkrig qualify`.
type qualifyOptions struct {
	remote    remoteOptions
	allPairs  bool
	ring      bool
	subnet    string
	budget    time.Duration
	testTime  time.Duration
	expected  float64
	streams   int
	port      int
	format    string
	output    string
	probePath string
	nccl      string
	ncclBytes string
	ncclLibs  []string
}

// qualifyFormats are the formats qualify and triage write: all render draws.
var qualifyFormats = render.Formats

func newQualifyCmd(env *Env) *cobra.Command {
	o := &qualifyOptions{}
	cmd := &cobra.Command{
		Use:   "qualify --all-pairs --hosts A,B,C...",
		Short: "measure every pair of nodes and name the bad node or cable",
		Long: `qualify --all-pairs measures the links between every pair of nodes that share a
network segment (nodes on one switch): the circle method's rounds of disjoint
pairs run at once, each pair in both directions together, with sparkrig's TCP
probe (the sparkrig binary is copied to each node's scratch directory and
removed after). A direction passes at 70 % of the reference or more: the
rate --expected-gbps gives, else the platform's for the tool (where every node
is of one platform that expectations.yaml knows), else the best rate two
directions confirm within 10 % (what the best pairs show the hardware can do;
never the median, which a cluster with many bad nodes drags down). With no
credible reference nothing passes and the report asks for --expected-gbps.
Each node's sending and receiving sides get a pass ratio over the rounds,
counting the tests with partners shown sound; a side passing fewer than half,
or a pair failing while both its ends pass elsewhere, is a suspect, and
suspects are measured again against a known-good node to tell which side is
bad. A node not reached is named and left out while the others are measured;
one that stops answering during the run is named as lost; an interrupted run
says what it did not measure. --ring instead
qualifies the cables of a direct-cabled ring, nodes in the order given, in
NCCL's even/odd order.

Where both nodes of a pair have a GPU and NCCL, the pair also runs a 2-rank
NCCL all_reduce (sparkrig's own collective benchmark, one rank on each node's
first GPU, NCCL kept to the pair's netdev and RDMA port), in rounds of their
own after the bandwidth tests; each pair's bus bandwidth at the largest
message (--nccl-bytes) is judged against the best pairs' by the same
rule. The report says which pairs were not tested and why (--nccl off skips
them).

The time budget sets each test's length: the budget shared over the rounds
plus two rounds kept for re-tests (--test-time sets it directly). The NCCL
rounds come on top: each takes its communicators' set-up and a sweep of four
sizes.`,
		Example: `  sparkrig qualify --all-pairs --hosts 'spark-[01-08]'
  sparkrig qualify --all-pairs --hostfile hosts --budget 2m --format html -o pairs.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQualify(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	addRemoteFlags(f, &o.remote)
	f.BoolVar(&o.allPairs, "all-pairs", false, "measure every pair of nodes of the segment they share")
	f.BoolVar(&o.ring, "ring", false, "the nodes form a direct-cabled ring in the order given: qualify each cable in NCCL's even/odd order")
	f.StringVar(&o.subnet, "subnet", "", "the segment to measure (CIDR); default: the subnet the most nodes share")
	f.DurationVar(&o.budget, "budget", 60*time.Second, "time for the whole run; sets each test's length")
	f.DurationVar(&o.testTime, "test-time", 0, "each test's length, instead of the one --budget gives")
	f.Float64Var(&o.expected, "expected-gbps", 0, "the rate each direction should reach (Gb/s); default: the platform's, else the best pairs'")
	f.IntVar(&o.streams, "streams", 4, "parallel TCP streams per direction")
	f.IntVar(&o.port, "port", bench.DefaultBasePort+bench.RendezvousPortOffset, "TCP port the probe servers listen on")
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(qualifyFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout")
	f.StringVar(&o.probePath, "probe-path", "", "a sparkrig already on every node (skips the copy)")
	f.StringVar(&o.nccl, "nccl", "auto", "a 2-rank NCCL test per pair: auto (where both nodes have a GPU and NCCL) or off")
	f.StringVar(&o.ncclBytes, "nccl-bytes", bench.SizeString(allpairs.DefaultNCCLBytes), "the NCCL test's largest message, the one judged")
	f.StringSliceVar(&o.ncclLibs, "nccl-lib-dir", nil, "directories on the nodes searched first for libnccl and libcudart (a venv's nvidia/nccl/lib)")
	return cmd
}

func runQualify(ctx context.Context, env *Env, o *qualifyOptions) error {
	opts, err := qualifyOpts(o)
	if err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	defer o.remote.closeRunner()
	if opts.Hosts, err = o.remote.nodes(ctx, env); err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if err := opts.Check(); err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if opts.Runner, err = o.remote.runner(env); err != nil { // SSH, or srun or kubectl as chosen
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if opts.ProbePath == "" {
		if opts.Self, err = os.Executable(); err != nil {
			return exitf(ExitUnknown, "qualify: %v", err)
		}
	}
	opts.Parallel, opts.HostTimeout, opts.Timeout = o.remote.parallel, o.remote.hostTimeout, o.remote.timeout
	opts.ToolVersion, opts.Now, opts.Log = Version, env.Now, env.Stderr
	// an interrupt waits for the nodes to be cleaned up and the report of
	// what was measured (every wait in the run is bounded, a dead node's too)
	env.cleansUp.Store(true)
	rep, runErr := qualify.Run(ctx, opts)
	if rep == nil {
		return exitf(ExitUnknown, "qualify: %v", runErr)
	}
	if err := writeRendered(env, o.output, o.format, rep); err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if runErr != nil {
		return exitf(ExitInterrupted, "qualify: interrupted")
	}
	return statusError(exitFor(rep.Status))
}

// qualifyOpts checks the flags and turns them into the pipeline's options
// (the nodes and the runner come after).
func qualifyOpts(o *qualifyOptions) (qualify.Options, error) {
	var err error
	if o.format, err = checkFormat("qualify", o.format, qualifyFormats); err != nil {
		return qualify.Options{}, err
	}
	opts := qualify.Options{Ring: o.ring, Budget: o.budget, TestTime: o.testTime, Expected: o.expected, Streams: o.streams,
		Port: o.port, ProbePath: o.probePath, NCCL: o.nccl == "auto", NCCLLibs: o.ncclLibs}
	switch {
	case o.allPairs == o.ring:
		return opts, fmt.Errorf("give one of --all-pairs or --ring")
	case o.nccl != "auto" && o.nccl != "off":
		return opts, fmt.Errorf("--nccl %q: want auto or off", o.nccl)
	case o.expected < 0:
		return opts, fmt.Errorf("--expected-gbps %g: want a rate above 0 Gb/s (or leave it out to judge against the best pairs)", o.expected)
	}
	if opts.NCCLBytes, err = results.ParseSize(o.ncclBytes); err != nil || opts.NCCLBytes < 8 {
		return opts, fmt.Errorf("--nccl-bytes %q: want a size such as 256M", o.ncclBytes)
	}
	if o.subnet != "" {
		if opts.Subnet, err = netip.ParsePrefix(o.subnet); err != nil {
			return opts, fmt.Errorf("--subnet %q: %v", o.subnet, err)
		}
	}
	return opts, nil
}

// writeOut writes to the named file (mode 644, replaced whole) or stdout.
func writeOut(env *Env, output string, b []byte) error {
	if output == "" || output == "-" {
		_, err := env.Stdout.Write(b)
		return err
	}
	tmp := output + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, output)
}
