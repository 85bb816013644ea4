package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

func planHeadline(p report.Plan) string {
	return fmt.Sprintf("%s · %s · %.1fB parameters (%.2fB active per token) · weights %.1f GB",
		p.Model, p.Weights, p.TotalParams/1e9, p.ActiveParams/1e9, p.WeightsGB)
}

func planRow(o report.PlanRow) []string {
	if o.Note != "" && !o.Fits && o.WeightsGB == 0 {
		return []string{o.Layout, "-", "", "", "", "", "", "", "", "", o.Note}
	}
	if !o.Fits {
		return []string{o.Layout, "no", fmt.Sprintf("%.1f GB", o.WeightsGB), "-", "-", "-", "-", "-", "-", "", ""}
	}
	speed := ""
	if o.Speedup > 0 {
		speed = fmt.Sprintf("%.2f×", o.Speedup)
	}
	return []string{o.Layout, "yes", fmt.Sprintf("%.1f GB", o.WeightsGB), groupDigits(o.KVTokens), groupDigits(o.Sequences),
		groupDigits(int64(o.TTFTms)), fmt.Sprintf("%.1f", o.TPOTms), fmt.Sprintf("%.1f", o.TokensPerSec),
		fmt.Sprintf("%.1f", o.ConcTokensPerS), speed, o.Bound}
}

// recommendedRow is the plan's recommended layout, if any fits.
func recommendedRow(p report.Plan) (report.PlanRow, bool) {
	for _, o := range p.Layouts {
		if p.Recommended != "" && o.Layout == p.Recommended {
			return o, true
		}
	}
	return report.PlanRow{}, false
}

// planColumns: weights and KV are per node; tok/s is one user's, total the
// sum at --concurrency; speedup is decode's over the smallest layout that fits.
var planColumns = []string{"layout", "fits", "weights", "KV tokens", "seqs", "TTFT ms", "TPOT ms", "tok/s", "total", "speedup", "bound"}

// textPlans writes each plan of r for a terminal.
func textPlans(w io.Writer, r *report.Report, opt Options) error {
	for i, p := range r.Plans {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := planText(w, p, opt); err != nil {
			return err
		}
	}
	return nil
}

func planText(w io.Writer, p report.Plan, opt Options) error {
	var b strings.Builder
	hang(&b, "", "", planHeadline(p), opt.Width)
	labelColumn(&b, "", 10, "cluster", fmt.Sprintf("%d × %s", p.Nodes, p.Platform), opt.Width, false)
	for _, n := range p.Numbers {
		labelColumn(&b, "  ", 20, n.Name, n.Text, opt.Width, false)
	}
	labelColumn(&b, "", 10, "workload", p.Workload, opt.Width, false)
	b.WriteString("\n")
	var rows [][]string
	for _, o := range p.Layouts {
		rows = append(rows, planRow(o))
	}
	textTable(&b, "", opt.Width, planColumns, rows)
	b.WriteString("\n")
	hang(&b, "", "", "weights and KV tokens per node; tok/s for one user, total at the given concurrency", opt.Width)
	for _, o := range p.Layouts {
		if o.Note != "" {
			hang(&b, "", "  ", o.Layout+": "+o.Note, opt.Width)
		}
	}
	if o, ok := recommendedRow(p); !ok {
		hang(&b, "", "", "does not fit on this cluster in any layout: more nodes, a smaller weight format or a lower --gpu-memory-utilization reserve", opt.Width)
	} else {
		hang(&b, "", "", fmt.Sprintf("recommended: %s — %.1f tok/s for one user, %.1f tok/s total at %d concurrent; decode is bound by %s (memory %.1f ms, network %.1f ms, compute %.1f ms per token)",
			o.Layout, o.TokensPerSec, o.ConcTokensPerS, p.Concurrency, o.Bound, o.MemoryMs, o.NetworkMs, o.ComputeMs), opt.Width)
	}
	for _, l := range p.Launch {
		fmt.Fprintf(&b, "\nlaunch (%s):\n", l.Engine)
		// Commands break only with a backslash continuation: they paste as is.
		b.WriteString(ReflowShell("  "+strings.Join(l.Lines, "\n  "), opt.Width) + "\n")
	}
	b.WriteString("\nwhere the numbers come from:\n")
	source := func(label, text string) {
		hang(&b, "  ", "    ", label, opt.Width)
		hang(&b, "      ", "      ", text, opt.Width)
	}
	for _, n := range p.Numbers {
		source(n.Name+": "+n.Text, n.Source)
	}
	for _, a := range p.Assumed {
		source(a.Text, a.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdPlans writes each plan of r as Markdown.
func mdPlans(w io.Writer, r *report.Report, _ Options) error {
	for _, p := range r.Plans {
		if err := planMarkdown(w, p); err != nil {
			return err
		}
	}
	return nil
}

func planMarkdown(w io.Writer, p report.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### sparkrig plan: %s\n\n", mdCell(planHeadline(p)))
	fmt.Fprintf(&b, "%d × %s · %s\n\n", p.Nodes, p.Platform, mdCell(p.Workload))
	b.WriteString("| " + strings.Join(planColumns, " | ") + " |\n|" + strings.Repeat("---|", len(planColumns)) + "\n")
	for _, o := range p.Layouts {
		cells := planRow(o)
		for i := range cells {
			cells[i] = mdCell(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if o, ok := recommendedRow(p); ok {
		fmt.Fprintf(&b, "\n**Recommended: %s** (decode bound by %s).\n", o.Layout, o.Bound)
	}
	for _, l := range p.Launch {
		fmt.Fprintf(&b, "\n```sh\n# %s\n%s\n```\n", l.Engine, strings.Join(l.Lines, "\n"))
	}
	b.WriteString("\n<details><summary>Where the numbers come from</summary>\n\n")
	for _, n := range p.Numbers {
		fmt.Fprintf(&b, "- **%s** %s: %s\n", n.Name, mdCell(n.Text), mdCell(n.Source))
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
