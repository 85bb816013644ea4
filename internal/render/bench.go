package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// BenchDryRun prints a bench plan: rails, derived environment, notes, and every
// command per host with its environment, in the order they would run.
func BenchDryRun(w io.Writer, p *bench.Plan) {
	w = safe(w)
	fmt.Fprintf(w, "# sparkrig bench %s on %s (dry run: nothing is started)\n", strings.Join(p.Kinds, " "), strings.Join(p.Hosts, ", "))
	fmt.Fprintln(w, "\n## rails")
	if len(p.Rails) == 0 {
		fmt.Fprintln(w, "(none: no two nodes share an IPv4 subnet)")
	}
	for _, r := range p.Rails {
		fmt.Fprintf(w, "%s  %s\n", r.String(), railDetail(r))
	}
	if len(p.NCCLEnv) > 0 {
		fmt.Fprintln(w, "\n## the cluster's environment (as fix writes it to /etc/sparkrig/cluster.env; each command below shows what it gets)")
		for _, v := range p.NCCLEnv {
			fmt.Fprintf(w, "%s=%s\n", v.Name, v.Value)
		}
	}
	benchNotes(w, p)
	for i, st := range p.Steps {
		fmt.Fprintf(w, "\n## [%d/%d] %s (timeout %s)\n", i+1, len(p.Steps), st.ID, st.Timeout)
		for _, c := range st.Commands() {
			fmt.Fprintf(w, "%s (%s): %s\n", c.Host, c.Role, bench.CommandLine(c))
		}
	}
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
func benchNotes(w io.Writer, p *bench.Plan) {
	if len(p.Notes) == 0 && len(p.Refusals) == 0 {
		return
	}
	fmt.Fprintln(w, "\n## notes")
	for _, r := range p.Refusals {
		fmt.Fprintf(w, "REFUSE %s: %s\n", r.Host, r.Reason)
	}
	for _, n := range p.Notes {
		host := ""
		if n.Host != "" {
			host = n.Host + ": "
		}
		fmt.Fprintf(w, "%s%s\n", host, n.Detail)
		if n.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", n.Fix)
		}
	}
}

// BenchText prints a run's results, one line per judged number.
func BenchText(w io.Writer, rec *bench.Record) {
	w = safe(w)
	fmt.Fprintf(w, "sparkrig bench %s: %s\n\n", rec.Bench.ID, strings.ToUpper(rec.Status))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tRESULT\tVALUE\tEXPECTED\tVERDICT")
	for i, a := range rec.Analyses {
		if len(a.Items) == 0 {
			st := rec.Bench.Steps[i]
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t%s\n", a.File, clip(st.Error, 90), st.Status)
			continue
		}
		for _, it := range a.Items {
			exp := "-"
			if it.Expectation != nil {
				exp = fmt.Sprintf("%g %s (%s)", it.Expectation.Value, it.Expectation.Unit, it.Expectation.ID)
			}
			fmt.Fprintf(tw, "%s\t%s %s\t%.2f %s\t%s\t%s\n", a.File, it.Subject, it.Metric, it.Value, it.Unit, exp, it.Verdict)
		}
	}
	tw.Flush()
	benchQualify(w, rec)
	benchShares(w, rec)
	for _, a := range rec.Analyses {
		for _, f := range a.Flags {
			if f.ID == "bench.traffic-share" {
				fmt.Fprintf(w, "\n[%s] %s: %s\n  seen: %s\n  fix:  %s\n", f.Severity, a.File, f.Message, f.Evidence, f.Fix)
			}
		}
	}
	for _, m := range rec.Bench.Missing {
		fmt.Fprintf(w, "\nmissing on %s: %s — %s", m.Host, m.Tool, m.Hint)
	}
	if len(rec.Bench.Missing) > 0 {
		fmt.Fprintln(w)
	}
	benchNotes(w, rec.Bench.Plan)
}

// benchQualify prints the qualify steps' verdicts per direction and link,
// as the doctor's cluster section does.
func benchQualify(w io.Writer, rec *bench.Record) {
	q := bench.Qualify(rec, 0, "")
	if len(q.Directions) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\n")
	textQualified(&b, q.Report())
	for _, f := range q.Findings {
		fmt.Fprintf(&b, "  [%s] %s %s: %s\n", f.Severity, f.ID, f.Subject, f.Observed)
	}
	io.WriteString(w, b.String())
}

// benchShares prints, for each step that moved data, what each rail of
// each host carried (the rows the Markdown table has), each direction on
// its own.
func benchShares(w io.Writer, rec *bench.Record) {
	header := false
	for _, a := range rec.Analyses {
		rows := trafficRows(a.Data.RailTraffic)
		if len(rows) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\ntraffic by rail:")
			header = true
		}
		fmt.Fprintf(w, "  %s\n", a.File)
		for _, r := range rows {
			fmt.Fprintf(w, "    %s %-14s sent %s (%s), received %s (%s) [%s]\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6])
		}
	}
}

// BenchCompareText prints two runs side by side, one line per result.
func BenchCompareText(w io.Writer, ra, rb *bench.Record, c bench.Comparison) error {
	w = safe(w)
	fmt.Fprintf(w, "before %s (%s)\nafter  %s (%s)\n\n", ra.Bench.ID, ra.Status, rb.Bench.ID, rb.Status)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tRESULT\tBEFORE\tAFTER\tCHANGE\tVERDICT")
	for _, ch := range c.Changes {
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\t%s\n", ch.Step, ch.Subject, ch.Metric, withUnit(ch.Before, ch.Unit), withUnit(ch.After, ch.Unit),
			pct(ch.DeltaPct), verdicts(ch.VerdictBefore, ch.VerdictAfter))
	}
	tw.Flush()
	if len(c.Setup) > 0 {
		fmt.Fprintln(w, "\nsetup changes:")
		for _, s := range c.Setup {
			fmt.Fprintln(w, "  "+s)
		}
	}
	return nil
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

func verdicts(a, b string) string {
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
