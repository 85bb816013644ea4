package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/report"
)

// BenchDryRun prints a bench plan: rails, derived environment, notes, and every
// command per host with its environment, in the order they would run. Long
// commands break with a backslash continuation, so each stays pasteable.
func BenchDryRun(w io.Writer, p *bench.Plan, opt Options) {
	opt = textDefaults(opt)
	var b strings.Builder
	hang(&b, "# ", "#   ", fmt.Sprintf("sparkrig bench %s on %s (dry run: nothing is started)", strings.Join(p.Kinds, " "), strings.Join(p.Hosts, ", ")), opt.Width)
	b.WriteString("\n## rails\n")
	if len(p.Rails) == 0 {
		b.WriteString("(none: no two nodes share an IPv4 subnet)\n")
	}
	for _, r := range p.Rails {
		if line := r.String() + "  " + railDetail(r); vlen(line) <= opt.Width {
			b.WriteString(line + "\n")
		} else {
			hang(&b, "", "    ", r.String(), opt.Width)
			hang(&b, "    ", "      ", railDetail(r), opt.Width)
		}
	}
	if len(p.NCCLEnv) > 0 {
		b.WriteString("\n")
		hang(&b, "## ", "   ", "the cluster's environment (as fix writes it to /etc/sparkrig/cluster.env; each command below shows what it gets)", opt.Width)
		for _, v := range p.NCCLEnv {
			b.WriteString(v.Name + "=" + v.Value + "\n")
		}
	}
	benchNotes(&b, p, opt.Width)
	for i, st := range p.Steps {
		fmt.Fprintf(&b, "\n## [%d/%d] %s (timeout %s)\n", i+1, len(p.Steps), st.ID, st.Timeout)
		for _, c := range st.Commands() {
			head := fmt.Sprintf("%s (%s): ", c.Host, c.Role)
			cont := "    "
			cmd := bench.CommandLine(c)
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
	io.WriteString(safe(w), b.String())
}

// clip shortens s for a table cell; the whole text is in the JSON document.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func railDetail(r bench.Rail) string {
	if !r.A.RDMAReady() || !r.B.RDMAReady() {
		return fmt.Sprintf("%s ↔ %s (no RDMA)", r.A.Addr, r.B.Addr)
	}
	return fmt.Sprintf("%s/%d gid %d %s ↔ %s/%d gid %d %s", r.A.RDMADev, r.A.Port, r.A.GIDIndex, r.A.Addr, r.B.RDMADev, r.B.Port, r.B.GIDIndex, r.B.Addr)
}

// benchNotes prints a plan's notes and refusals.
func benchNotes(b *strings.Builder, p *bench.Plan, width int) {
	if len(p.Notes) == 0 && len(p.Refusals) == 0 {
		return
	}
	b.WriteString("\n## notes\n")
	for _, r := range p.Refusals {
		hang(b, "", "  ", fmt.Sprintf("REFUSE %s: %s", r.Host, r.Reason), width)
	}
	for _, n := range p.Notes {
		host := ""
		if n.Host != "" {
			host = n.Host + ": "
		}
		hang(b, "", "  ", host+n.Detail, width)
		labelColumn(b, "  ", 5, "fix:", n.Fix, width, true)
	}
}

// BenchText prints a run's results, one row per judged number.
func BenchText(w io.Writer, rec *bench.Record, opt Options) {
	opt = textDefaults(opt)
	var b strings.Builder
	fmt.Fprintf(&b, "sparkrig bench %s: %s\n\n", rec.Bench.ID, strings.ToUpper(string(rec.Status)))
	var rows [][]string
	for i, a := range rec.Analyses {
		if len(a.Items) == 0 {
			st := rec.Bench.Steps[i]
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
	benchQualify(&b, rec, opt.Width)
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
	for i, m := range rec.Bench.Missing {
		if i == 0 {
			b.WriteString("\n")
		}
		hang(&b, "", "  ", fmt.Sprintf("missing on %s: %s — %s", m.Host, m.Tool, m.Hint), opt.Width)
	}
	benchNotes(&b, rec.Bench.Plan, opt.Width)
	io.WriteString(safe(w), b.String())
}

// benchQualify prints the qualify steps' verdicts per direction and link,
// as the doctor's cluster section does.
func benchQualify(b *strings.Builder, rec *bench.Record, width int) {
	q := bench.Qualify(rec, 0, "")
	if len(q.Directions) == 0 {
		return
	}
	b.WriteString("\n")
	textQualified(b, q.Report(), width)
	for _, f := range q.Findings {
		hang(b, "  ", "    ", fmt.Sprintf("[%s] %s %s: %s", f.Severity, f.ID, f.Subject, f.Observed), width)
	}
}

// benchShares prints, for each step that moved data, what each rail of
// each host carried (the rows the Markdown table has), each direction on
// its own.
func benchShares(b *strings.Builder, rec *bench.Record, width int) {
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

// BenchCompareText prints two runs side by side, one line per result.
func BenchCompareText(w io.Writer, ra, rb *bench.Record, c bench.Comparison, opt Options) error {
	opt = textDefaults(opt)
	var b strings.Builder
	fmt.Fprintf(&b, "before %s (%s)\nafter  %s (%s)\n\n", ra.Bench.ID, ra.Status, rb.Bench.ID, rb.Status)
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
	_, err := io.WriteString(safe(w), b.String())
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
