package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// reportOptions are the flags of `sparkrig report`.
type reportOptions struct {
	Output string
	Format string
	Title  string
	// Analyze is how raw benchmark outputs are read and judged.
	Analyze analyze.Options
}

func newReportCmd(env *Env) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report INPUT... [-o report.html]",
		Short: "render one HTML report from doctor, analyze and bench outputs",
		Long: `Render one report from several inputs:

  sparkrig JSON documents   any command's --format json: doctor, qualify, triage, fix --plan,
                            bench (runs, --dry-run, compare, gpu), plan; each part shown
  snapshots                 a snapshot directory or .tar.gz: audited as sparkrig doctor would
  raw benchmark outputs     nccl-tests (text or -J JSON), NCCL_DEBUG=INFO logs, perftest, iperf3 -J,
                            nvbandwidth, sparkrig bench gpu JSON: parsed as sparkrig analyze would

The HTML is one self-contained file: it makes no network request when opened.
A host keeps its latest audit; a part two documents hold (two qualify runs)
comes from the one generated last, and the report says so. The status is never
better than a kept document's own. An input that cannot be read is named in the
report and makes the exit status 3; the others are still rendered.`,
		Example: `  sparkrig doctor --hosts spark-1,spark-2 --format json > doctor.json
  sparkrig report doctor.json all_gather.txt ib_write_bw.txt -o report.html
  sparkrig report doctor.json --format prometheus -o /var/lib/node_exporter/textfile/sparkrig.prom`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd.Context(), env, o, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", `write here, replacing the file ("-" for stdout; default stdout, or report.html when stdout is a terminal, never replacing one)`)
	f.StringVar(&o.Format, "format", "html", "output format: "+strings.Join(render.Formats, ", "))
	f.StringVar(&o.Title, "title", "", "page title of the HTML report")
	f.StringVar(&o.Analyze.InputFormat, "input-format", "", "read every raw benchmark output as this format instead of detecting it")
	f.StringVar(&o.Analyze.Platform, "platform", "", "judge raw benchmark outputs for this platform (as sparkrig analyze --platform)")
	f.StringVar(&o.Analyze.Topology, "topology", "", "judge raw benchmark outputs for this topology (as sparkrig analyze --topology)")
	return cmd
}

func runReport(ctx context.Context, env *Env, o *reportOptions, inputs []string) error {
	var err error
	if o.Format, err = checkFormat("report", o.Format, render.Formats); err != nil {
		return err
	}
	if err := validateJudging("report", &o.Analyze); err != nil {
		return err
	}
	r, err := report.Run(ctx, reportRunOptions(env, o.Analyze, inputs))
	if err != nil {
		return exitf(ExitUnknown, "report: %v", err)
	}
	out := o.Output
	if out == "" && env.StdoutTTY && o.Format == "html" {
		// The default name never replaces a file: an earlier report may
		// be the one kept for comparison. Naming it with -o replaces it,
		// as any output named on the command line does.
		out = defaultReportName
		if _, err := os.Lstat(out); err == nil {
			return exitf(ExitUnknown, "report: %s exists: name the output with -o (-o %s replaces it)", out, out)
		}
	}
	if err := writeReport(env, r, o, out, inputs); err != nil {
		return exitf(ExitUnknown, "report: %v", err)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(env.Stderr, "wrote %s (%s)\n", out, reportSummary(r))
	}
	return statusError(exitFor(r.Status))
}

// reportRunOptions are report.Run's inputs: raw outputs read as analyze
// reads them, snapshots audited as doctor audits them, each input that
// fails named on stderr.
func reportRunOptions(env *Env, aopt analyze.Options, inputs []string) report.Options {
	return report.Options{Inputs: inputs, Version: Version, Now: env.Now(),
		Raw:        rawReader(aopt),
		IsSnapshot: snapshot.IsArchiveName,
		AuditSnapshots: func(paths []string) *report.Report {
			return auditReport(readSnapshots(paths), check.ProfileUnknown, env)
		},
		Warn: func(in, msg string) { fmt.Fprintf(env.Stderr, "sparkrig: report: %s: %s\n", in, msg) },
	}
}

// rawReader reads a raw benchmark output as `sparkrig analyze` would.
func rawReader(aopt analyze.Options) report.RawReader {
	return func(path string, r io.Reader) report.AnalysisResult { return analyze.Reader(path, r, aopt) }
}

// reportMerge is report.Merge under the names the exporter still calls.
type reportMerge struct{ *report.Merge }

func newReportMerge(r *report.Report) reportMerge { return reportMerge{report.NewMerge(r)} }

func (m reportMerge) finish() report.Verdict { return m.Finish() }

// addFile merges a sparkrig document or analyses a raw output (report.Merge.AddFile).
func addFile(m reportMerge, path string, aopt analyze.Options) error {
	return m.AddFile(path, rawReader(aopt))
}

// writeReport renders to a temporary file next to out and renames it, so a
// textfile collector or a browser never sees half a report.
func writeReport(env *Env, r *report.Report, o *reportOptions, out string, inputs []string) error {
	var buf bytes.Buffer
	var err error
	if o.Format == "html" {
		err = render.HTML(&buf, r, render.HTMLOptions{Title: o.Title, Inputs: baseNames(inputs)})
	} else {
		err = render.Write(&buf, r, o.Format, render.Options{})
	}
	if err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err = env.Stdout.Write(buf.Bytes())
		return err
	}
	return writeAtomic(out, buf.Bytes())
}

// defaultReportName is where report writes HTML when stdout is a terminal
// and no -o is given.
const defaultReportName = "report.html"

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(filepath.Clean(p))
	}
	return out
}

func reportSummary(r *report.Report) string {
	n := 0
	for _, h := range r.Hosts {
		n += len(h.Findings)
	}
	if r.Cluster != nil {
		n += len(r.Cluster.Findings)
	}
	parts := []string{plural(len(r.Hosts), "host"), plural(n, "finding")}
	if len(r.Analyses) > 0 {
		parts = append(parts, plural(len(r.Analyses), "analysed input"))
	}
	parts = append(parts, report.PartNames(r)...)
	return string(r.Status) + ": " + strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
