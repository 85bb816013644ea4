package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// ANSI colours per severity (used only when Options.Color is set).
var sevColor = map[report.Severity]string{
	report.Fail:         esc + "[1;31m",
	report.Warn:         esc + "[33m",
	report.NotEvaluated: esc + "[35m",
	report.Info:         esc + "[36m",
	report.OK:           esc + "[32m",
}

var colorReset = esc + "[0m"

// sevBadge is a fixed-width severity label ("FAIL", "WARN", "N/E ", ...),
// coloured when asked.
func sevBadge(s report.Severity, color bool) string {
	label := map[report.Severity]string{
		report.Fail: "FAIL", report.Warn: "WARN", report.NotEvaluated: "N/E ", report.Info: "INFO", report.OK: "ok  ",
	}[s]
	if label == "" {
		label = strings.ToUpper(string(s))
	}
	return paint(s, label, color)
}

func paint(s report.Severity, text string, color bool) string {
	if !color || sevColor[s] == "" {
		return text
	}
	return sevColor[s] + text + colorReset
}

func bold(text string, color bool) string {
	if !color {
		return text
	}
	return esc + "[1m" + text + colorReset
}

// counts tallies findings per severity.
func counts(fs []report.Finding) map[report.Severity]int {
	c := map[report.Severity]int{}
	for _, f := range fs {
		c[f.Severity]++
	}
	return c
}

// summaryLine is "1 fail · 2 warn · 3 info · 0 not evaluated · 20 ok".
func summaryLine(c map[report.Severity]int, color bool) string {
	part := func(s report.Severity, word string) string {
		t := fmt.Sprintf("%d %s", c[s], word)
		if c[s] == 0 {
			return t
		}
		return paint(s, t, color)
	}
	return strings.Join([]string{
		part(report.Fail, "fail"), part(report.Warn, "warn"), part(report.NotEvaluated, "not evaluated"),
		part(report.Info, "info"), part(report.OK, "ok"),
	}, " · ")
}

// subjectGroups groups findings by subject, worst subject first, then in
// the order the registry produced them.
func subjectGroups(fs []report.Finding) [][]report.Finding {
	idx := map[string]int{}
	var groups [][]report.Finding
	for _, f := range fs {
		i, ok := idx[f.Subject]
		if !ok {
			i = len(groups)
			idx[f.Subject] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], f)
	}
	worst := func(g []report.Finding) int {
		w := -1
		for _, f := range g {
			w = max(w, f.Severity.Rank())
		}
		return w
	}
	sort.SliceStable(groups, func(i, j int) bool { return worst(groups[i]) > worst(groups[j]) })
	return groups
}

func textHosts(w io.Writer, r *report.Report, opt Options) error {
	if len(r.Hosts) == 0 {
		return nil
	}
	var b strings.Builder
	for _, g := range r.HostGroups() {
		textHost(&b, r.Hosts[g.Host], opt)
		if line := g.OthersLine(); line != "" {
			hang(&b, "  ", "    ", sanitize.Line(line), opt.Width)
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textSummary ends the hosts and the cluster with one line over both, so
// the last line a reader sees agrees with the exit status.
// Summary writes the report's summary line alone (doctor --quiet).
func Summary(w io.Writer, r *report.Report, opt Options) error {
	opt = textDefaults(opt)
	return textSummary(safe(w), r, opt)
}

func textSummary(w io.Writer, r *report.Report, opt Options) error {
	if len(r.Hosts) == 0 {
		return nil
	}
	all := map[report.Severity]int{}
	audited := 0
	for _, h := range r.Hosts {
		for s, n := range counts(h.Findings) {
			all[s] += n
		}
		if h.Status == report.HostAudited {
			audited++
		}
	}
	what := fmt.Sprintf("%d of %d host(s) audited", audited, len(r.Hosts))
	if r.Cluster != nil {
		for s, n := range counts(r.Cluster.Findings) {
			all[s] += n
		}
		what += " and the cluster"
	}
	var b strings.Builder
	hang(&b, "", "  ", fmt.Sprintf("%s %s: %s", bold("summary", opt.Color), what, summaryLine(all, opt.Color)), opt.Width)
	_, err := io.WriteString(w, b.String())
	return err
}

func textHost(b *strings.Builder, h report.Host, opt Options) {
	head := sanitize.Line(h.Host)
	if h.Profile != "" {
		head += " · " + h.Profile
	}
	if h.Source != "" && h.Source != h.Host {
		head += " · " + sanitize.Line(h.Source)
	}
	hang(b, "", "  ", bold(head, opt.Color), opt.Width)
	if h.Status != report.HostAudited {
		hang(b, "  ", "    ", fmt.Sprintf("%s not audited (%s): %s", paint(report.Fail, "UNKNOWN", opt.Color), h.Status, h.Error), opt.Width)
		b.WriteString("\n")
		return
	}
	for _, g := range subjectGroups(h.Findings) {
		textSubject(b, g, opt)
	}
	if opt.Verbose && len(h.Skipped) > 0 {
		fmt.Fprintln(b, "  skipped checks")
		for _, s := range h.Skipped {
			labelColumn(b, "    ", 28, s.ID, s.Reason, opt.Width, false)
		}
	}
	hang(b, "  ", "  ", summaryLine(counts(h.Findings), opt.Color), opt.Width)
	b.WriteString("\n")
}

// textSubject writes one subject's findings: problems in full, info and
// (with --verbose) ok findings on one line each.
func textSubject(b *strings.Builder, g []report.Finding, opt Options) {
	var shown []report.Finding
	for _, f := range g {
		if f.Severity != report.OK || opt.Verbose {
			shown = append(shown, f)
		}
	}
	if len(shown) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s\n", g[0].Subject)
	for _, f := range shown {
		line := f.ID + " — " + f.Title
		if f.Severity == report.OK || f.Severity == report.Info {
			line += ": " + f.Observed
		}
		hang(b, "    "+sevBadge(f.Severity, opt.Color)+"  ", "          ", line, opt.Width)
		if f.Severity == report.OK || f.Severity == report.Info {
			continue
		}
		const ind = "          "
		writeField(b, ind, "seen", f.Observed, opt.Width, false)
		writeField(b, ind, "expected", f.Expected, opt.Width, false)
		writeField(b, ind, "why", f.Why, opt.Width, false)
		// a change is pasted into a shell and keeps its lines; what only a
		// person can do is prose
		writeField(b, ind, "fix", remedyText(f.Remedy), opt.Width, f.Remedy != nil && f.Remedy.Kind == report.RemedyChange)
		writeField(b, ind, "source", f.Source, opt.Width, false)
	}
}

func mdHosts(w io.Writer, r *report.Report, opt Options) error {
	for _, h := range r.Hosts {
		head := "### " + sanitize.Markdown(h.Host)
		if h.Profile != "" {
			head += " (" + h.Profile + ")"
		}
		if _, err := fmt.Fprintf(w, "%s\n\n", head); err != nil {
			return err
		}
		if h.Status != report.HostAudited {
			if _, err := fmt.Fprintf(w, "Not audited (%s): %s\n\n", h.Status, mdCell(sanitize.Markdown(h.Error))); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n\n", summaryLine(counts(h.Findings), false)); err != nil {
			return err
		}
		var rows [][]string
		var long []report.Finding
		for _, g := range subjectGroups(h.Findings) {
			for _, f := range g {
				if f.Severity == report.OK && !opt.Verbose {
					continue
				}
				fixText := remedyText(f.Remedy)
				fix := mdCode(fixText)
				if strings.Contains(fixText, "\n") {
					long = append(long, f)
					fix = fmt.Sprintf("fix %d below", len(long))
				}
				rows = append(rows, []string{mdSeverity(string(f.Severity)), mdCode(f.ID), sanitize.Markdown(f.Subject), sanitize.Markdown(f.Observed), sanitize.Markdown(f.Expected), fix})
			}
		}
		if len(rows) > 0 {
			if err := mdTable(w, []string{"severity", "check", "subject", "observed", "expected", "fix"}, rows); err != nil {
				return err
			}
		}
		if err := mdWhy(w, h.Findings); err != nil {
			return err
		}
		// Multi-line fixes (commands with file contents) keep their lines in a
		// collapsible code block.
		for i, f := range long {
			if err := mdDetails(w, fmt.Sprintf("fix %d: %s on %s", i+1, f.ID, sanitize.Line(f.Subject)), "sh", remedyText(f.Remedy)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mdWhy folds, for every problem (warn, fail, not evaluated), why it matters
// and where the expectation comes from into one collapsible list.
func mdWhy(w io.Writer, fs []report.Finding) error {
	var b strings.Builder
	for _, f := range fs {
		if f.Severity.Rank() < report.NotEvaluated.Rank() || (f.Why == "" && f.Source == "") {
			continue
		}
		fmt.Fprintf(&b, "- `%s` (%s): %s", f.ID, mdCell(sanitize.Markdown(f.Subject)), mdCell(f.Why))
		if f.Source != "" {
			fmt.Fprintf(&b, " *Source:* %s", mdCell(f.Source))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "<details><summary>why these matter, and sources</summary>\n\n%s\n</details>\n\n", b.String())
	return err
}

// oneLine joins a multi-line fix with " ⏎ " for a table cell.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ⏎ ")
}
