package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/sanitize"
	"github.com/sparkrig/sparkrig/internal/triage"
)

// triageOptions are the flags of `sparkrig triage`.
type triageOptions struct {
	remote   remoteOptions
	interval time.Duration
	log      string
	logLines int
	rasPort  int
	format   string
	output   string
}

func newTriageCmd(env *Env) *cobra.Command {
	o := &triageOptions{}
	cmd := &cobra.Command{
		Use:   "triage [--hosts A,B...]",
		Short: "say why a running NCCL job is stuck or slow, and which rank and node",
		Long: `triage looks at a running NCCL job from outside, on this machine or on every node
given (over SSH, as doctor): the processes that map a libnccl, each library's path,
version and ELF build ID, the job's state from NCCL's RAS service (ncclras where
installed, else sparkrig's own client of its protocol on localhost:28028, each
query bounded to half the interval), GPU utilisation, power and clocks, and the
tail of a job log; twice, --interval apart (once when no job is found).
It never signals, traces or attaches to the job's processes.

Verdicts: a rank missing from RAS (its process or node died or stopped); operation
counts frozen and equal on every rank (a stuck kernel or host); frozen but different
(out of sync: the rank with the lowest count is the suspect); a GPU busy at idle power (a spinning
kernel); ranks running different libnccl builds under one version string.`,
		Example: `  sparkrig triage --hosts 'spark-[01-04]' --log /scratch/job-1234.out
  sparkrig triage --interval 30s --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTriage(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	addRemoteFlags(f, &o.remote)
	f.DurationVar(&o.interval, "interval", 20*time.Second, "time between the two samples (0: one sample, which cannot tell frozen from slow)")
	f.StringVar(&o.log, "log", "", "a job log on the nodes to show the tail of")
	f.IntVar(&o.logLines, "log-lines", 40, "lines of --log to show")
	f.IntVar(&o.rasPort, "ras-port", triage.RASPort, "port of NCCL's RAS service on each node (NCCL_RAS_ADDR)")
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(qualifyFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout")
	return cmd
}

func runTriage(ctx context.Context, env *Env, o *triageOptions) error {
	var err error
	if o.format, err = checkFormat("triage", o.format, qualifyFormats); err != nil {
		return err
	}
	if o.interval < 0 {
		return exitf(ExitUnknown, "triage: --interval must not be negative")
	}
	if err := triage.CheckRASPort(o.rasPort); err != nil {
		return exitf(ExitUnknown, "triage: %v", err)
	}
	to := triage.Options{Runner: runner.Local{}, Hosts: []string{"localhost"}, Interval: o.interval, Log: o.log, LogLines: o.logLines,
		RASPort: o.rasPort, Parallel: o.remote.parallel, HostTimeout: o.remote.hostTimeout, ToolVersion: Version, Now: env.Now}
	if o.remote.enabled() {
		defer o.remote.closeRunner()
		if to.Hosts, err = o.remote.nodes(ctx, env); err != nil {
			return exitf(ExitUnknown, "triage: %v", err)
		}
		if to.Runner, err = o.remote.runner(env); err != nil {
			return exitf(ExitUnknown, "triage: %v", err)
		}
	}
	rep, err := triage.Run(ctx, to)
	if ctx.Err() != nil {
		return exitf(ExitInterrupted, "triage: interrupted")
	}
	if err != nil {
		return exitf(ExitUnknown, "triage: %v", err)
	}
	for _, n := range rep.Triage.Nodes {
		if n.Error != "" {
			fmt.Fprintf(env.Stderr, "sparkrig: triage: %s: %s\n", sanitize.Line(n.Host), sanitize.Line(n.Error))
		}
	}
	if err := writeRendered(env, o.output, o.format, rep); err != nil {
		return exitf(ExitUnknown, "triage: %v", err)
	}
	return statusError(exitFor(rep.Status))
}
