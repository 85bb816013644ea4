package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/plan"
	"github.com/sparkrig/sparkrig/internal/report"
)

// PlanFormats are the formats `sparkrig plan` writes.
var PlanFormats = []string{"text", "json", "markdown"}

// PlanView is a plan with what the user named, as rendered.
type PlanView struct {
	*plan.Plan
	ModelArg string        `json:"model_arg"`
	Launch   []plan.Launch `json:"launch,omitempty"`
}

// PlanDocument is `sparkrig plan --format json`: a report (so `sparkrig
// report` draws it) with the whole plan beside it.
type PlanDocument struct {
	report.Report
	Plan PlanView `json:"plan"`
}

// PlanSummary is the part of a plan the report model carries.
func PlanSummary(v PlanView) report.Plan {
	p := v.Plan
	s := report.Plan{Model: p.Model.Name, Weights: p.Format.Name, Platform: p.Cluster.Platform, Nodes: p.Cluster.Nodes,
		Workload: planWorkload(p)}
	if p.Recommended >= 0 {
		s.Recommended = layoutName(p.Options[p.Recommended])
	}
	for _, o := range p.Options {
		row := report.PlanRow{Layout: layoutName(o), Fits: o.Fits}
		if o.Fits {
			row.TTFTms, row.TPOTms, row.TokensPerSec, row.Bound = o.TTFTms, o.TPOTms, o.TokensPerSec, o.Dominant
		}
		s.Layouts = append(s.Layouts, row)
	}
	return s
}

// WritePlan renders a plan in one of PlanFormats.
func WritePlan(w io.Writer, v PlanView, format string, opt Options) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		doc := PlanDocument{Report: report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: opt.ToolVersion,
			Command: "plan", GeneratedAt: opt.Now, Status: "ok", Hosts: []report.Host{}, Plans: []report.Plan{PlanSummary(v)}}, Plan: v}
		if v.Recommended < 0 {
			doc.Status = "critical"
		}
		return enc.Encode(doc)
	case "markdown", "md":
		return planMarkdown(w, v)
	case "text", "":
		return planText(w, v, opt)
	}
	return fmt.Errorf("unknown format %q", format)
}

func planHeadline(v PlanView) string {
	p := v.Plan
	return fmt.Sprintf("%s · %s · %.1fB parameters (%.2fB active per token) · weights %.1f GB",
		p.Model.Name, p.Format.Name, p.TotalParams/1e9, p.ActiveParam/1e9, p.WeightsGB)
}

func planWorkload(p *plan.Plan) string {
	w := p.Workload
	return fmt.Sprintf("%d in · %d out · %d concurrent · KV cache %s · gpu-memory-utilization %.2f",
		w.Input, w.Output, w.Concurrency, w.KVDType, w.GPUMemUtil)
}

func planNumbers(p *plan.Plan) [][3]string {
	c := p.Cluster
	row := func(name string, n plan.Number, f string) [3]string {
		return [3]string{name, fmt.Sprintf(f, n.Value) + " " + n.Unit, n.Source}
	}
	return [][3]string{
		row("memory per node", c.MemoryGB, "%.0f"),
		row("memory bandwidth", c.MemoryBandwidth, "%.0f"),
		row("16-bit GEMM", c.BF16TFLOPS, "%.1f"),
		row("all-reduce busbw", c.AllReduceBusBW, "%.2f"),
		{"all-reduce latency", fmt.Sprintf("%.2f us at %d B", c.AllReduceLatency.Value, c.LatencyBytes), c.AllReduceLatency.Source},
	}
}

func layoutName(o plan.Option) string {
	if o.PP > 1 {
		return fmt.Sprintf("PP%d", o.PP)
	}
	return fmt.Sprintf("TP%d", o.TP)
}

func planRow(o plan.Option) []string {
	if o.Note != "" && !o.Fits && o.WeightsGB == 0 {
		return []string{layoutName(o), "-", "", "", "", "", "", "", "", "", o.Note}
	}
	if !o.Fits {
		return []string{layoutName(o), "no", fmt.Sprintf("%.1f GB", o.WeightsGB), "-", "-", "-", "-", "-", "-", "", ""}
	}
	fits := "yes"
	speed := ""
	if o.Speedup > 0 {
		speed = fmt.Sprintf("%.2f×", o.Speedup)
	}
	return []string{layoutName(o), fits, fmt.Sprintf("%.1f GB", o.WeightsGB), groupDigits(o.KVTokens), groupDigits(o.Sequences),
		groupDigits(int64(o.TTFTms)), fmt.Sprintf("%.1f", o.TPOTms), fmt.Sprintf("%.1f", o.TokensPerSec),
		fmt.Sprintf("%.1f", o.ConcTokensPerS), speed, o.Dominant}
}

// planColumns: weights and KV are per node; tok/s is one user's, total the
// sum at --concurrency; speedup is decode's over the smallest layout that fits.
var planColumns = []string{"layout", "fits", "weights", "KV tokens", "seqs", "TTFT ms", "TPOT ms", "tok/s", "total", "speedup", "bound"}

func planText(w io.Writer, v PlanView, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	p := v.Plan
	var b strings.Builder
	hang(&b, "", "", planHeadline(v), opt.Width)
	labelColumn(&b, "", 10, "cluster", fmt.Sprintf("%d × %s", p.Cluster.Nodes, p.Cluster.Platform), opt.Width, false)
	for _, n := range planNumbers(p) {
		labelColumn(&b, "  ", 20, n[0], n[1], opt.Width, false)
	}
	labelColumn(&b, "", 10, "workload", planWorkload(p), opt.Width, false)
	b.WriteString("\n")
	var rows [][]string
	for _, o := range p.Options {
		rows = append(rows, planRow(o))
	}
	textTable(&b, "", opt.Width, planColumns, rows)
	b.WriteString("\n")
	hang(&b, "", "", "weights and KV tokens per node; tok/s for one user, total at the given concurrency", opt.Width)
	for _, o := range p.Options {
		if o.Note != "" {
			hang(&b, "", "  ", layoutName(o)+": "+o.Note, opt.Width)
		}
	}
	if p.Recommended < 0 {
		hang(&b, "", "", "does not fit on this cluster in any layout: more nodes, a smaller weight format or a lower --gpu-memory-utilization reserve", opt.Width)
	} else {
		o := p.Options[p.Recommended]
		hang(&b, "", "", fmt.Sprintf("recommended: %s — %.1f tok/s for one user, %.1f tok/s total at %d concurrent; decode is bound by %s (memory %.1f ms, network %.1f ms, compute %.1f ms per token)",
			layoutName(o), o.TokensPerSec, o.ConcTokensPerS, p.Workload.Concurrency, o.Dominant, o.MemoryMs, o.NetworkMs, o.ComputeMs), opt.Width)
	}
	for _, l := range v.Launch {
		fmt.Fprintf(&b, "\nlaunch (%s):\n", l.Engine)
		// Commands break only with a backslash continuation: they paste as is.
		b.WriteString(ReflowShell("  "+strings.Join(l.Lines, "\n  "), opt.Width) + "\n")
	}
	b.WriteString("\nwhere the numbers come from:\n")
	source := func(label, text string) {
		hang(&b, "  ", "    ", label, opt.Width)
		hang(&b, "      ", "      ", text, opt.Width)
	}
	for _, n := range planNumbers(p) {
		source(n[0]+": "+n[1], n[2])
	}
	for _, a := range p.Assumed {
		source(fmt.Sprintf("%g %s", a.Value, a.Unit), a.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func planMarkdown(w io.Writer, v PlanView) error {
	w = safe(w)
	p := v.Plan
	var b strings.Builder
	fmt.Fprintf(&b, "### sparkrig plan: %s\n\n", mdCell(planHeadline(v)))
	fmt.Fprintf(&b, "%d × %s · %s\n\n", p.Cluster.Nodes, p.Cluster.Platform, mdCell(planWorkload(p)))
	b.WriteString("| " + strings.Join(planColumns, " | ") + " |\n|" + strings.Repeat("---|", len(planColumns)) + "\n")
	for _, o := range p.Options {
		cells := planRow(o)
		for i := range cells {
			cells[i] = mdCell(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if p.Recommended >= 0 {
		o := p.Options[p.Recommended]
		fmt.Fprintf(&b, "\n**Recommended: %s** (decode bound by %s).\n", layoutName(o), o.Dominant)
	}
	for _, l := range v.Launch {
		fmt.Fprintf(&b, "\n```sh\n# %s\n%s\n```\n", l.Engine, strings.Join(l.Lines, "\n"))
	}
	b.WriteString("\n<details><summary>Where the numbers come from</summary>\n\n")
	for _, n := range planNumbers(p) {
		fmt.Fprintf(&b, "- **%s** %s: %s\n", n[0], mdCell(n[1]), mdCell(n[2]))
	}
	for _, a := range p.Assumed {
		fmt.Fprintf(&b, "- **%g** %s: %s\n", a.Value, mdCell(a.Unit), mdCell(a.Source))
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
