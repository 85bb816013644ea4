// Package render writes a report.Report as text, JSON or Markdown (and, in
// their own files, HTML and Prometheus metrics). Every format renders the same
// model; nothing here computes findings.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// Options tune the text renderers.
type Options struct {
	Color   bool // ANSI colours (only on a TTY, never with NO_COLOR)
	Verbose bool // also list skipped checks and passing findings
	Width   int  // terminal width; 100 when unknown
}

// Write renders r in the named format: the one format switch of every
// command. Each command accepts the formats that suit what it returns.
func Write(w io.Writer, r *report.Report, format string, opt Options) error {
	// qualify's and triage's own documents render as those commands show
	// them; a report that holds more renders every part in one document.
	if format != "json" && format != "markdown" && format != "md" && alone(r) {
		if r.AllPairs != nil {
			return writeAllPairs(w, r, format, opt)
		}
		return writeTriage(w, r, format, opt)
	}
	switch format {
	case "text", "":
		return Text(w, r, opt)
	case "json":
		return JSON(w, r)
	case "markdown", "md":
		return Markdown(w, r, opt)
	case "html":
		return HTML(w, r, HTMLOptions{})
	case "prometheus", "prom":
		return Prometheus(w, r)
	}
	return fmt.Errorf("unknown format %q", format)
}

// JSON writes doc as one indented JSON document: a *report.Report, or a
// type that embeds one and keeps more beside it (a bench run's record keeps
// its raw outputs), so every document opens with the same envelope. The
// compact encoding (json.Encoder's, written once and not copied) is
// indented a block at a time (indentJSON): json.Encoder's SetIndent grows
// its buffer step by step, and json.Indent validates every byte again,
// which cost more than the encoding on a large report; a block ends
// outside any string and is written as soon as it is full, so a large
// report is not held twice more in memory. Every rune a terminal could act
// on is escaped (sanitize.JSON): the values decode unchanged. Nothing is
// written when doc cannot be encoded.
func JSON(w io.Writer, doc any) error {
	return json.NewEncoder(&indentWriter{w: w}).Encode(doc)
}

// jsonBlock is the size at which an indented block is written.
const jsonBlock = 64 << 10

// indentWriter indents the compact document json.Encoder writes to it in
// one Write (the encoding and its newline), a block at a time.
type indentWriter struct{ w io.Writer }

func (iw *indentWriter) Write(b []byte) (int, error) {
	var esc []byte // a block escaped, its storage reused
	flush := func(dst []byte) ([]byte, error) {
		esc = sanitize.AppendJSON(esc[:0], dst)
		_, err := iw.w.Write(esc)
		return dst[:0], err
	}
	dst, err := indentJSONBlocks(make([]byte, 0, jsonBlock+jsonBlock/4), bytes.TrimSuffix(b, []byte("\n")), jsonBlock, flush)
	if err == nil {
		_, err = flush(append(dst, '\n'))
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// alone reports whether r holds an all-pairs run or a triage and nothing
// else but its findings: a qualify or triage document.
func alone(r *report.Report) bool {
	c := r.Cluster
	return (r.AllPairs != nil) != (r.Triage != nil) && len(r.Hosts) == 0 && len(r.Analyses) == 0 && len(r.Plans) == 0 &&
		r.FixPlan == nil && r.BenchPlan == nil && r.BenchRun == nil && r.Comparison == nil && r.GPU == nil &&
		r.LinkEvidence == nil && (c == nil || len(c.Links) == 0 && len(c.Qualified) == 0 && c.Topology == "")
}

// audited reports whether r holds a doctor's audit: hosts, or links
// between nodes.
func audited(r *report.Report) bool {
	return len(r.Hosts) > 0 || r.Cluster != nil && len(r.Cluster.Links) > 0
}

// Text writes r for a terminal: hosts, then the cluster, an all-pairs run
// and a triage, then analysed files or a bench run, then whatever else the
// command returned (a bench or fix plan, a comparison, GPU results, model
// plans).
func Text(w io.Writer, r *report.Report, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	sections := []func(io.Writer, *report.Report, Options) error{textHosts, textCluster, textAllPairs, textTriage, textSummary,
		textAnalyses, textBenchPlan, textFixPlan, textComparison, textGPU, textPlans}
	if r.BenchRun != nil { // a bench run's table, its qualify verdicts among it
		sections[5] = textBenchRun
		if !audited(r) && r.Cluster != nil && len(r.Cluster.Qualified) > 0 {
			sections[1] = noSection // the table lists the cluster's findings
		}
	}
	for _, section := range sections {
		if err := section(w, r, opt); err != nil {
			return err
		}
	}
	return nil
}

func noSection(io.Writer, *report.Report, Options) error { return nil }

// Markdown writes r for a GitHub issue or forum post.
func Markdown(w io.Writer, r *report.Report, opt Options) error {
	w = safe(w)
	for _, section := range []func(io.Writer, *report.Report, Options) error{mdHosts, mdCluster, mdAllPairs, mdTriage, mdAnalyses, mdParts, mdPlans} {
		if err := section(w, r, opt); err != nil {
			return err
		}
	}
	return nil
}

// writeAllPairs renders a qualification: its matrix and suspects, then its
// findings (the cluster's).
func writeAllPairs(w io.Writer, r *report.Report, format string, opt Options) error {
	switch format {
	case "html":
		return AllPairsHTML(w, r.AllPairs)
	case "prometheus", "prom":
		return Prometheus(w, r) // sparkrig_status and the findings with the run's series
	case "text", "":
		if err := AllPairsText(w, r.AllPairs, opt); err != nil {
			return err
		}
		return FindingsText(w, clusterFindings(r), opt)
	}
	return fmt.Errorf("unknown format %q", format)
}

// writeTriage renders a live triage: ranks, verdict and evidence.
func writeTriage(w io.Writer, r *report.Report, format string, opt Options) error {
	switch format {
	case "html":
		return TriageHTML(w, r.Triage, clusterFindings(r))
	case "prometheus", "prom":
		return TriagePrometheus(w, r.Triage)
	case "text", "":
		return TriageText(w, r.Triage, clusterFindings(r), opt)
	}
	return fmt.Errorf("unknown format %q", format)
}

func clusterFindings(r *report.Report) []report.Finding {
	if r.Cluster == nil {
		return nil
	}
	return r.Cluster.Findings
}
