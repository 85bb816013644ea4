package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
	"github.com/sparkrig/sparkrig/internal/topology"
)

type analyzeOptions struct {
	format      string
	inputFormat string
	platform    string
	topology    string
}

func newAnalyzeCmd(env *Env) *cobra.Command {
	opts := &analyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze FILE... | -",
		Short: "judge nccl-tests, perftest, iperf3 and nvbandwidth outputs and NCCL logs",
		Long: `analyze reads benchmark outputs and answers, for each file: what was measured,
what this platform and topology should give and where that number comes from,
the ratio, a verdict, and the known causes that fit the gap, most likely first.

Formats are detected from the content (--input-format overrides):
  nccl-tests        text output, any collective, mpirun/srun prefixes, INFO lines mixed in
  nccl-tests-json   the -J FILE document (the embedded environment is never echoed)
  nccl-log          NCCL_DEBUG=INFO lines alone
  perftest          ib_{write,read,send}_{bw,lat}
  iperf3            iperf3 -J, client or server side
  nvbandwidth       nvbandwidth text output
  all_reduce_bench  the Markdown table of all_reduce_bench.py
  sparkrig-json     sparkrig bench gpu collective --format json (or --json-file)

Use - to read standard input.

` + exitHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd.Context(), env, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.format, "format", "text", "output format: "+strings.Join(render.Formats, ", "))
	f.StringVar(&opts.inputFormat, "input-format", "", "input format instead of detecting it: "+strings.Join(analyze.Formats, ", "))
	f.StringVar(&opts.platform, "platform", "", "platform instead of inferring it: "+strings.Join(expect.Platforms, ", "))
	f.StringVar(&opts.topology, "topology", "", "topology instead of inferring it: "+strings.Join(expect.Topologies, ", "))
	return cmd
}

func (o *analyzeOptions) validate() error {
	var err error
	if o.format, err = checkFormat("analyze", o.format, render.Formats); err != nil {
		return err
	}
	ao := analyze.Options{InputFormat: o.inputFormat, Platform: o.platform, Topology: o.topology}
	if err := validateJudging("analyze", &ao); err != nil {
		return err
	}
	o.topology = ao.Topology
	return nil
}

// validateJudging checks the flags that say how raw benchmark outputs are
// read and judged (analyze, report).
// An older topology spelling is replaced by its one name.
func validateJudging(cmd string, o *analyze.Options) error {
	if o.Topology != "" {
		if t, err := topology.Parse(o.Topology); err == nil {
			o.Topology = string(t)
		}
	}
	switch {
	case o.InputFormat != "" && !slices.Contains(analyze.Formats, o.InputFormat):
		return exitf(ExitUnknown, "%s: unknown --input-format %q (want one of %s)", cmd, o.InputFormat, strings.Join(analyze.Formats, ", "))
	case o.Platform != "" && !slices.Contains(expect.Platforms, o.Platform):
		return exitf(ExitUnknown, "%s: unknown --platform %q (want one of %s)", cmd, o.Platform, strings.Join(expect.Platforms, ", "))
	case o.Topology != "" && !slices.Contains(expect.Topologies, o.Topology):
		return exitf(ExitUnknown, "%s: unknown --topology %q (want one of %s)", cmd, o.Topology, strings.Join(expect.Topologies, ", "))
	}
	return nil
}

// analyzeGCPercent is the garbage collector's GOGC while analyze reads:
// its live heap is small and bounded whatever the input's size (one line
// buffer, the tables and lists it keeps capped), so letting it grow to
// five times that before a collection costs a few MiB and spares most of
// the collections a large log's per-table allocations would start.
const analyzeGCPercent = 400

// lessFrequentGC sets analyzeGCPercent unless GOGC is set, and returns
// what restores the setting before it.
func lessFrequentGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(analyzeGCPercent)
	return func() { debug.SetGCPercent(old) }
}

func runAnalyze(ctx context.Context, env *Env, opts *analyzeOptions, args []string) error {
	if err := opts.validate(); err != nil {
		return err
	}
	defer lessFrequentGC()()
	aopt := analyze.Options{InputFormat: opts.inputFormat, Platform: opts.platform, Topology: opts.topology}
	r, err := analyze.Run(ctx, analyze.Inputs{Files: args, Stdin: env.Stdin, ToolVersion: Version, Now: env.Now()}, aopt)
	if err != nil {
		// stdin's read ended with the interrupt, which Main tells
		return statusError(ExitInterrupted)
	}
	for _, res := range r.Analyses {
		if res.Error != "" {
			fmt.Fprintf(env.Stderr, "sparkrig: analyze: %s: %s\n", sanitize.Line(res.File), sanitize.Line(res.Error))
		}
	}
	code := exitFor(r.Status)
	out := *r
	if opts.format == "text" {
		// an input that could not be read has had its one line on stderr
		out.Analyses = slices.DeleteFunc(slices.Clone(r.Analyses), func(a report.AnalysisResult) bool { return a.Error != "" })
		if len(out.Analyses) == 0 {
			return statusError(code)
		}
	}
	if err := render.Write(env.Stdout, &out, opts.format, textOptions(env)); err != nil {
		return exitf(ExitUnknown, "analyze: write report: %v", err)
	}
	return statusError(code)
}

// unreadable is the result for an input that could not be read.
func unreadable(name string, err error) report.AnalysisResult { return analyze.Unreadable(name, err) }
