package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

func textBenchPlan(w io.Writer, r *report.Report, opt Options) error {
	if r.BenchPlan == nil {
		return nil
	}
	return BenchDryRun(w, r.BenchPlan, opt)
}

// BenchDryRun prints a bench plan: rails, derived environment, notes, and every
// command per host with its environment, in the order they would run. Long
// commands break with a backslash continuation, so each stays pasteable.
func BenchDryRun(w io.Writer, p *report.BenchPlan, opt Options) error {
	opt = textDefaults(opt)
	var b strings.Builder
	hang(&b, "# ", "#   ", fmt.Sprintf("sparkrig bench %s on %s (dry run: nothing is started)", strings.Join(p.Kinds, " "), strings.Join(p.Hosts, ", ")), opt.Width)
	b.WriteString("\n## rails\n")
	if len(p.Rails) == 0 {
		b.WriteString("(none: no two nodes share an IPv4 subnet)\n")
	}
	for _, r := range p.Rails {
		if line := r.Name + "  " + r.Detail; vlen(line) <= opt.Width {
			b.WriteString(line + "\n")
		} else {
			hang(&b, "", "    ", r.Name, opt.Width)
			hang(&b, "    ", "      ", r.Detail, opt.Width)
		}
	}
	if len(p.Env) > 0 {
		b.WriteString("\n")
		hang(&b, "## ", "   ", "the cluster's environment (as fix writes it to /etc/sparkrig/cluster.env; each command below shows what it gets)", opt.Width)
		for _, v := range p.Env {
			b.WriteString(v.Name + "=" + v.Value + "\n")
		}
	}
	benchNotes(&b, p.Notes, p.Refusals, opt.Width)
	for i, st := range p.Steps {
		fmt.Fprintf(&b, "\n## [%d/%d] %s (timeout %s)\n", i+1, len(p.Steps), st.ID, st.Timeout)
		for _, c := range st.Commands {
			head := fmt.Sprintf("%s (%s): ", c.Host, c.Role)
			cont := "    "
			cmd := c.Line
			if vlen(head)+vlen(cmd) <= opt.Width {
				b.WriteString(head + cmd + "\n")
				continue
			}
			// A command too long for the line goes under its host, broken
			// with backslash continuations, so it pastes as one command.
			b.WriteString(strings.TrimRight(head, " ") + "\n")
			for _, part := range wrapShell(cmd, opt.Width-vlen(cont)-2) {
				b.WriteString(cont + part + "\n")
			}
		}
	}
	_, err := io.WriteString(safe(w), b.String())
	return err
}

// clip shortens s for a table cell; the whole text is in the JSON document.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// benchNotes prints a plan's notes and refusals.
func benchNotes(b *strings.Builder, notes []report.PlanNote, refusals []report.BenchRefusal, width int) {
	if len(notes) == 0 && len(refusals) == 0 {
		return
	}
	b.WriteString("\n## notes\n")
	for _, r := range refusals {
		hang(b, "", "  ", fmt.Sprintf("REFUSE %s: %s", r.Host, r.Reason), width)
	}
	for _, n := range notes {
		host := ""
		if n.Host != "" {
			host = n.Host + ": "
		}
		hang(b, "", "  ", host+n.Detail, width)
		labelColumn(b, "  ", 5, "fix:", n.Fix, width, true)
	}
}

// textBenchRun prints a run's results, one row per judged number.
func textBenchRun(w io.Writer, rec *report.Report, opt Options) error {
	run := rec.BenchRun
	var b strings.Builder
	fmt.Fprintf(&b, "sparkrig bench %s: %s\n\n", run.ID, strings.ToUpper(string(rec.Status)))
	var rows [][]string
	for i, a := range rec.Analyses {
		if len(a.Items) == 0 {
			var st report.BenchOutcome
			if i < len(run.Steps) {
				st = run.Steps[i]
			}
			rows = append(rows, []string{a.File, clip(st.Error, 90), "-", "-", st.Status})
			continue
		}
		for _, it := range a.Items {
			exp := "-"
			if it.Expectation != nil {
				exp = fmt.Sprintf("%g %s (%s)", it.Expectation.Value, it.Expectation.Unit, it.Expectation.ID)
			}
			rows = append(rows, []string{a.File, it.Subject + " " + it.Metric, fmt.Sprintf("%.2f %s", it.Value, it.Unit), exp, string(it.Verdict)})
		}
	}
	textTable(&b, "", opt.Width, []string{"STEP", "RESULT", "VALUE", "EXPECTED", "VERDICT"}, rows)
	benchQualify(&b, rec.Cluster, opt.Width)
	benchShares(&b, rec, opt.Width)
	for _, a := range rec.Analyses {
		for _, f := range a.Flags {
			if f.ID == "bench.traffic-share" {
				b.WriteString("\n")
				hang(&b, "", "  ", fmt.Sprintf("[%s] %s: %s", f.Severity, a.File, f.Message), opt.Width)
				labelColumn(&b, "  ", 6, "seen:", f.Evidence, opt.Width, false)
				labelColumn(&b, "  ", 6, "fix:", f.Fix, opt.Width, true)
			}
		}
	}
	for i, m := range run.Missing {
		if i == 0 {
			b.WriteString("\n")
		}
		hang(&b, "", "  ", fmt.Sprintf("missing on %s: %s — %s", m.Host, m.Tool, m.Hint), opt.Width)
	}
	benchNotes(&b, run.Notes, run.Refusals, opt.Width)
	_, err := io.WriteString(w, b.String())
	return err
}

// benchQualify prints the qualify steps' verdicts per direction and link,
// as the doctor's cluster section does.
func benchQualify(b *strings.Builder, c *report.Cluster, width int) {
	if c == nil || len(c.Qualified) == 0 {
		return
	}
	b.WriteString("\n")
	textQualified(b, c.Qualified, width)
	for _, f := range c.Findings {
		hang(b, "  ", "    ", fmt.Sprintf("[%s] %s %s: %s", f.Severity, f.ID, f.Subject, f.Observed), width)
	}
}

// benchShares prints, for each step that moved data, what each rail of
// each host carried (the rows the Markdown table has), each direction on
// its own.
func benchShares(b *strings.Builder, rec *report.Report, width int) {
	header := false
	for _, a := range rec.Analyses {
		rows := trafficRows(a.Data.RailTraffic)
		if len(rows) == 0 {
			continue
		}
		if !header {
			b.WriteString("\ntraffic by rail:\n")
			header = true
		}
		fmt.Fprintf(b, "  %s\n", a.File)
		for _, r := range rows {
			hang(b, "    ", "      ", fmt.Sprintf("%s %-14s sent %s (%s), received %s (%s) [%s]", r[0], r[1], r[2], r[3], r[4], r[5], r[6]), width)
		}
	}
}

// textComparison prints two runs side by side, one line per result.
func textComparison(w io.Writer, r *report.Report, opt Options) error {
	c := r.Comparison
	if c == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "before %s (%s)\nafter  %s (%s)\n\n", c.Before, c.BeforeStatus, c.After, c.AfterStatus)
	var rows [][]string
	for _, ch := range c.Changes {
		rows = append(rows, []string{ch.Step, ch.Subject + " " + ch.Metric, withUnit(ch.Before, ch.Unit), withUnit(ch.After, ch.Unit),
			pct(ch.DeltaPct), verdicts(ch.VerdictBefore, ch.VerdictAfter)})
	}
	textTable(&b, "", opt.Width, []string{"STEP", "RESULT", "BEFORE", "AFTER", "CHANGE", "VERDICT"}, rows)
	if len(c.Setup) > 0 {
		b.WriteString("\nsetup changes:\n")
		for _, s := range c.Setup {
			hang(&b, "  ", "    ", s, opt.Width)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func withUnit(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f %s", *v, unit)
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func verdicts(va, vb report.Verdict) string {
	a, b := string(va), string(vb)
	switch {
	case a == b:
		return a
	case a == "":
		return "new: " + b
	case b == "":
		return "gone (was " + a + ")"
	}
	return a + " → " + b
}
