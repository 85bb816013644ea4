package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// textAnalyses writes each analysed file: what was measured, what was
// expected and from where, the verdict, and the causes that fit.
func textAnalyses(w io.Writer, r *report.Report, opt Options) error {
	var b strings.Builder
	for i, a := range r.Analyses {
		if i > 0 {
			b.WriteString("\n")
		}
		textAnalysis(&b, &a, opt)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func verdictWord(v report.Verdict, opt Options) string {
	word := strings.ToUpper(string(v))
	if !opt.Color {
		return word
	}
	switch v {
	case report.VerdictCritical:
		return esc + "[31m" + word + esc + "[0m"
	case report.VerdictWarning, report.VerdictUnknown:
		return esc + "[33m" + word + esc + "[0m"
	case report.VerdictOK:
		return esc + "[32m" + word + esc + "[0m"
	}
	return word
}

func textAnalysis(b *strings.Builder, a *report.AnalysisResult, opt Options) {
	if a.Error != "" {
		hang(b, "", "  ", fmt.Sprintf("%s: %s: %s", a.File, verdictWord(report.VerdictUnknown, opt), a.Error), opt.Width)
		return
	}
	// The file's name stays whole on its line; the verdict follows it, or
	// goes under it when both do not fit.
	if head := fmt.Sprintf("%s  %s  (%s)", a.File, verdictWord(a.Status, opt), a.Format); vlen(head) <= opt.Width {
		b.WriteString(head + "\n")
	} else {
		fmt.Fprintf(b, "%s\n  %s  (%s)\n", a.File, verdictWord(a.Status, opt), a.Format)
	}
	field := func(label, value string) { labelColumn(b, "  ", 10, label, value, opt.Width, false) }
	field("measured", a.Measured)
	field("platform", given(a.Platform, a.PlatformInferred, a.PlatformEvidence))
	field("topology", given(a.Topology, a.TopologyInferred, a.TopologyEvidence))
	for _, n := range a.Notes {
		field("note", n)
	}
	for _, it := range a.Items {
		textItem(b, &it, opt)
	}
	if len(a.Flags) > 0 {
		b.WriteString("\n  " + flagsHeading(a.Format) + "\n")
		for _, f := range a.Flags {
			hang(b, "    ", "        ", fmt.Sprintf("[%s] %s: %s", f.Severity, f.ID, f.Message), opt.Width)
			labelColumn(b, "        ", 6, "seen:", f.Evidence, opt.Width, false)
			labelColumn(b, "        ", 6, "fix:", f.Fix, opt.Width, true)
		}
	}
}

// flagsHeading names where an analysis's flags were read: an NCCL log
// (alone or among nccl-tests' lines), or the tool's own output.
func flagsHeading(format string) string {
	if strings.HasPrefix(format, "nccl") {
		return "NCCL log"
	}
	return format + " output"
}

func given(v string, inferred bool, evidence string) string {
	switch {
	case v == "":
		return "unknown"
	case inferred:
		return v + " (inferred: " + evidence + ")"
	}
	return v + " (given)"
}

func textItem(b *strings.Builder, it *report.AnalysisItem, opt Options) {
	b.WriteString("\n")
	hang(b, "  ", "    ", it.Subject, opt.Width)
	field := func(label, value string) { labelColumn(b, "    ", 15, label, value, opt.Width, false) }
	at := ""
	if it.AtSize > 0 {
		at = " at " + results.HumanSize(it.AtSize)
	}
	field(it.Metric, fmt.Sprintf("%s %s%s  %s", num(it.Value), it.Unit, at, verdictWord(it.Verdict, opt)))
	if e := it.Expectation; e != nil {
		cmp := "<"
		if e.Better == "lower" {
			cmp = ">"
		}
		field("expected", fmt.Sprintf("%s %s (%s); warn %s %s, fail %s %s; ratio %.3f", num(e.Value), e.Unit, e.Conditions, cmp, num(e.Warn), cmp, num(e.Pass), *it.Ratio))
		field("source", e.Source)
	} else if it.NoExpectation != "" {
		field("expected", it.NoExpectation)
	}
	if wr := it.Wire; wr != nil {
		field("wire", fmt.Sprintf("%s of %s %s = %.1f %% of %s", num(wr.Compared), num(wr.Value), wr.Unit, wr.Fraction*100, wr.Name))
	}
	field("result", it.Summary)
	for _, n := range it.Notes {
		field("note", n)
	}
	textCauses(b, it.Causes, opt.Width)
}

func textCauses(b *strings.Builder, causes []report.Cause, width int) {
	if len(causes) == 0 {
		return
	}
	b.WriteString("    causes, most likely first:\n")
	for i, c := range causes {
		hang(b, fmt.Sprintf("     %d. ", i+1), "        ", fmt.Sprintf("[%s] %s", c.Likelihood, c.Title), width)
		for _, e := range c.Evidence {
			hang(b, "        + ", "          ", e, width)
		}
		for _, e := range c.Against {
			hang(b, "        - ", "          ", e, width)
		}
		if c.Likelihood != "ruled-out" {
			labelColumn(b, "        ", 9, "confirm:", c.Confirm, width, false)
			labelColumn(b, "        ", 9, "fix:", c.Fix, width, false)
		}
	}
}

// num prints a measured value with the precision the tools print: three
// decimals for small values (latencies in µs), two from 10 up.
func num(v float64) string {
	prec := 3
	if math.Abs(v) >= 10 {
		prec = 2
	}
	s := fmt.Sprintf("%.*f", prec, v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// mdAnalyses writes the analysed files for a GitHub issue or forum post: a
// compact table of the judged results per file, the expectation and causes
// of each, and the measured rows folded into <details>.
func mdAnalyses(w io.Writer, r *report.Report, opt Options) error {
	p := &printer{w: w}
	if len(r.Analyses) == 0 {
		return nil
	}
	p.line("## Benchmark analysis")
	for _, a := range r.Analyses {
		p.line("")
		if a.Error != "" {
			p.line("### %s: UNKNOWN", mdCode(sanitize.Line(a.File)))
			p.line("")
			p.line("%s", sanitize.Markdown(a.Error))
			continue
		}
		p.line("### %s: %s", mdCode(sanitize.Line(a.File)), strings.ToUpper(string(a.Status)))
		p.line("")
		p.line("- **Measured:** %s (%s)", a.Measured, a.Format)
		p.line("- **Platform:** %s", given(a.Platform, a.PlatformInferred, a.PlatformEvidence))
		p.line("- **Topology:** %s", given(a.Topology, a.TopologyInferred, a.TopologyEvidence))
		for _, n := range a.Notes {
			p.line("- **Note:** %s", sanitize.Markdown(n))
		}
		if len(a.Items) > 0 {
			p.line("")
			if p.err == nil {
				p.err = mdTable(w, []string{"result", "+value", "+expected", "+ratio", "+wire", "verdict"}, mdResultRows(a.Items))
			}
		}
		for _, it := range a.Items {
			mdItem(p, &it)
		}
		if len(a.Flags) > 0 {
			p.line("")
			p.line("**%s**", flagsHeading(a.Format))
			p.line("")
			for _, f := range a.Flags {
				line := fmt.Sprintf("- `%s` **%s**: %s", f.Severity, f.ID, sanitize.Markdown(f.Message))
				if f.Evidence != "" {
					line += " (seen: " + sanitize.Markdown(f.Evidence) + ")"
				}
				if f.Fix != "" {
					line += "; fix: " + sanitize.Markdown(f.Fix)
				}
				p.line("%s", line)
			}
		}
		mdRows(p, &a.Data)
		if rows := trafficRows(a.Data.RailTraffic); len(rows) > 0 {
			for _, r := range rows {
				r[0], r[1] = sanitize.Markdown(r[0]), sanitize.Markdown(r[1])
			}
			p.line("")
			p.line("**Traffic by rail** (bytes from the counters before and after; each direction on its own)")
			p.line("")
			if p.err == nil {
				p.err = mdTable(w, []string{"host", "rail", "+sent", "+share", "+received", "+share", "counters"}, rows)
			}
		}
	}
	return p.err
}

// trafficRows lists the rails that carried a MiB or more.
func trafficRows(ts []report.RailTraffic) [][]string {
	var rows [][]string
	for _, t := range ts {
		if t.TxBytes+t.RxBytes < 1<<20 {
			continue
		}
		rows = append(rows, []string{sanitize.Line(t.Host), sanitize.Line(t.NetDev), fmt.Sprintf("%.0f MiB", float64(t.TxBytes)/(1<<20)), fmt.Sprintf("%.1f %%", 100*t.TxShare),
			fmt.Sprintf("%.0f MiB", float64(t.RxBytes)/(1<<20)), fmt.Sprintf("%.1f %%", 100*t.RxShare), t.Source})
	}
	return rows
}

func mdResultRows(items []report.AnalysisItem) [][]string {
	var rows [][]string
	for _, it := range items {
		exp, ratio, wire := "no expectation", "", ""
		if e := it.Expectation; e != nil {
			exp = fmt.Sprintf("%s %s", num(e.Value), e.Unit)
			ratio = fmt.Sprintf("%.3f", *it.Ratio)
		}
		if it.Wire != nil {
			wire = fmt.Sprintf("%.1f %%", it.Wire.Fraction*100)
		}
		rows = append(rows, []string{fmt.Sprintf("%s (%s)", sanitize.Markdown(it.Subject), it.Metric), num(it.Value) + " " + it.Unit, exp, ratio, wire, strings.ToUpper(string(it.Verdict))})
	}
	return rows
}

// mdRows folds the measured rows of each NCCL table and perftest run into a
// <details> block, so a thread shows the verdict first and the numbers on demand.
func mdRows(p *printer, d *report.AnalysisData) {
	for _, t := range d.NCCLTables {
		rows := make([][]string, len(t.Rows))
		for i, r := range t.Rows {
			rows[i] = append([]string{results.HumanSize(r.SizeBytes), fmt.Sprint(r.Count), r.Type, r.RedOp}, append(mdTiming(r.OOP), mdTiming(r.IP)...)...)
		}
		p.details(fmt.Sprintf("%s: %d size%s, %d ranks", collectiveName(t.Collective), len(t.Rows), plural(len(t.Rows)), t.Ranks),
			[]string{"size", "+count", "type", "redop", "+time µs", "+algbw GB/s", "+busbw GB/s", "+#wrong", "+in-place time µs", "+algbw GB/s", "+busbw GB/s", "+#wrong"}, rows)
	}
	for i := range d.Perftest {
		r := &d.Perftest[i]
		name := perftestSubject(r)
		if len(r.BW) > 0 {
			rows := make([][]string, len(r.BW))
			for i, b := range r.BW {
				rows[i] = []string{fmt.Sprint(b.Bytes), fmt.Sprint(b.Iterations), num(b.PeakGbps), num(b.AvgGbps), optNum(b.MsgRateMpps)}
			}
			p.details(fmt.Sprintf("%s: %d row%s", name, len(rows), plural(len(rows))),
				[]string{"+bytes", "+iterations", "+BW peak Gb/s", "+BW average Gb/s", "+MsgRate Mpps"}, rows)
		}
		if len(r.Lat) > 0 {
			rows := make([][]string, len(r.Lat))
			for i, l := range r.Lat {
				rows[i] = []string{fmt.Sprint(l.Bytes), fmt.Sprint(l.Iterations), optNum(l.MinUS), optNum(l.MaxUS), optNum(l.TypicalUS), optNum(l.AvgUS), optNum(l.StdevUS), optNum(l.P99US), optNum(l.P999US)}
			}
			p.details(fmt.Sprintf("%s: %d row%s", name, len(rows), plural(len(rows))),
				[]string{"+bytes", "+iterations", "+t_min µs", "+t_max µs", "+t_typical µs", "+t_avg µs", "+t_stdev µs", "+99% µs", "+99.9% µs"}, rows)
		}
	}
}

// details writes a collapsible Markdown table.
func (p *printer) details(summary string, header []string, rows [][]string) {
	p.line("")
	p.line("<details><summary>%s</summary>", htmlEscapeText(summary))
	p.line("")
	if p.err == nil {
		p.err = mdTable(p.w, header, rows)
	}
	p.line("</details>")
}

func mdTiming(t results.Timing) []string {
	wrong := "N/A"
	if t.WrongErrs != nil {
		wrong = fmt.Sprint(*t.WrongErrs)
	}
	return []string{optNum(t.TimeUS), optNum(t.AlgBWGBs), optNum(t.BusBWGBs), wrong}
}

// optNum prints an optional value as num does, "N/A" when absent.
func optNum(v *float64) string {
	if v == nil {
		return "N/A"
	}
	return num(*v)
}

func collectiveName(c string) string {
	if c == "" {
		return "unknown collective"
	}
	return c
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func mdItem(p *printer, it *report.AnalysisItem) {
	if it.Expectation == nil && len(it.Causes) == 0 && len(it.Notes) == 0 {
		return
	}
	p.line("")
	p.line("**%s**: %s", sanitize.Markdown(it.Subject), sanitize.Markdown(it.Summary))
	if e := it.Expectation; e != nil {
		p.line("")
		p.line("Expected %s %s (%s). Source: %s", num(e.Value), e.Unit, e.Conditions, e.Source)
	}
	for _, n := range it.Notes {
		p.line("")
		p.line("> %s", sanitize.Markdown(n))
	}
	for i, c := range it.Causes {
		if i == 0 {
			p.line("")
		}
		p.line("%d. **%s** (%s)", i+1, c.Title, c.Likelihood)
		for _, e := range c.Evidence {
			p.line("   - evidence: %s", sanitize.Markdown(e))
		}
		for _, e := range c.Against {
			p.line("   - against: %s", sanitize.Markdown(e))
		}
		if c.Likelihood != "ruled-out" {
			p.line("   - confirm: %s", c.Confirm)
		}
	}
}
