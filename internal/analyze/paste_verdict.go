package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// input says how the format was told and what reading the text undid.
func (a *analysis) input(p Parsed) {
	if d := p.Detection; d.Format != "" && d.Evidence != "" {
		a.note("format %s, told from the lines' shapes: %s (sure: %s)", p.Format, d.Evidence, d.Sure)
	}
	in := p.Input
	if in.UTF16 != "" {
		a.note("the text is %s; read as UTF-8", in.UTF16)
	}
	if in.LeadingNULs > 0 {
		a.note("%d NUL bytes at the start skipped: the log was truncated in place (logrotate copytruncate) while its writer kept its offset", in.LeadingNULs)
	}
	if in.LongLines > 0 {
		a.note("%d over-long line%s skipped (a progress bar or binary data without newlines: over %d KiB at the start, %d MiB elsewhere)", in.LongLines, plural(in.LongLines), sampleSize>>10, maxPasteLine>>20)
	}
	if in.Redrawn > 0 {
		a.note("%d line%s redrawn with carriage returns: the last drawing of each was read", in.Redrawn, plural(in.Redrawn))
	}
	if in.Restored > 0 {
		a.note("%d nccl-tests header line%s had lost their \"#\" (Markdown read it as a heading): read as header lines", in.Restored, plural(in.Restored))
	}
	if in.Unquoted > 0 {
		a.note("%d line%s read without the quote marks, code fences, list markers, timestamps or launcher tags around them", in.Unquoted, plural(in.Unquoted))
	}
}

// errors puts the error signatures found and the causes the startup
// lines show first among the flags, ranked by weight (most telling
// first), each signature with what it means on this platform.
func (a *analysis) errors(hits []diagnose.ErrorHit) {
	ranked := make([]rankedFlag, 0, len(hits)+len(a.causes))
	for _, h := range hits {
		s := h.Signature
		sev := report.Fail
		if s.Severity == "warn" {
			sev = report.Warn
		}
		meaning := s.Meaning(a.res.Platform)
		if a.res.Platform == "" {
			meaning = "on GPU servers: " + s.MeaningServer + "; on DGX Spark: " + s.MeaningSpark
		}
		ev := fmt.Sprintf("line %d: %s", h.Line, h.First)
		if h.Count > 1 {
			ev += fmt.Sprintf(" (%d lines)", h.Count)
		}
		if s.ID == "xla-nccl-failure" {
			meaning += quotedWarnClass(h.First)
		}
		ranked = append(ranked, rankedFlag{h.Score, report.AnalysisFlag{ID: "error." + s.ID, Severity: sev, Message: s.Title + ": " + meaning,
			Evidence: ev, Fix: s.Fix, Source: strings.Join(s.Sources, "; ")}})
	}
	crashAfterRemoteError(ranked, hits)
	ranked = append(ranked, a.causes...)
	if len(ranked) == 0 {
		return
	}
	// hits come sorted by score; a stable sort keeps their order and
	// slots each cause after the signatures that outweigh it
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].weight > ranked[j].weight })
	flags := make([]report.AnalysisFlag, len(ranked))
	for i, r := range ranked {
		flags[i] = r.flag
	}
	a.res.Flags = append(flags, a.res.Flags...)
}

// ras judges NCCL's RAS status: its errors are critical, its warnings a
// warning, a status whose every communicator is OK is ok.
func (a *analysis) ras(r *results.NCCLRAS) {
	a.res.Data.RAS = r
	parts := []string{"NCCL RAS status"}
	if r.Version != "" {
		parts = append(parts, "NCCL "+r.Version)
	}
	if r.Nodes > 0 {
		parts = append(parts, fmt.Sprintf("%d node%s", r.Nodes, plural(r.Nodes)))
	}
	if r.GPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d GPU%s", r.GPUs, plural(r.GPUs)))
	}
	a.res.Measured = strings.Join(parts, ", ")
	it := report.AnalysisItem{Subject: "NCCL communicators", Metric: "groups with errors", Unit: "groups", Verdict: report.VerdictOK}
	bad := 0
	for _, g := range r.Groups {
		if g.Errors != "OK" {
			bad++
		}
	}
	it.Value = float64(bad)
	n := len(r.Groups)
	if n == 0 {
		n = r.Communicators
		it.Metric, it.Unit = "findings", "findings"
		it.Value = float64(len(r.Findings))
	}
	it.Summary = fmt.Sprintf("%d communicator group%s, %d finding%s", n, plural(n), len(r.Findings), plural(len(r.Findings)))
	for _, f := range r.Findings {
		note := strings.TrimSpace(f.Severity + " " + f.Kind + " " + f.Comm)
		if len(f.Details) > 0 {
			note += ": " + strings.Join(f.Details[:min(3, len(f.Details))], "; ")
		}
		it.Notes = append(it.Notes, note)
		switch f.Severity {
		case "error":
			it.Verdict = report.VerdictCritical
		case "warning":
			if it.Verdict == report.VerdictOK {
				it.Verdict = report.VerdictWarning
			}
		}
	}
	for _, g := range r.Groups {
		if g.Errors != "OK" && it.Verdict == report.VerdictOK {
			it.Verdict = report.VerdictWarning
		}
	}
	if r.Dropped > 0 {
		a.note("%d further RAS findings not kept", r.Dropped)
	}
	a.res.Items = append(a.res.Items, it)
}

// diagFlags merges NCCL's own diagnostics (DIAG lines, ATTN lines, the
// revision-mismatch warning) into the verdict.
func (a *analysis) diagFlags(l *results.NCCLLog) {
	if l.RevisionMismatch != "" {
		a.flag(report.Fail, "nccl.revision-mismatch", "ranks run different NCCL builds (git revisions): the same version string may hide different binaries",
			l.RevisionMismatch, "install one NCCL build on every node (the same package or wheel) and check which libnccl.so.2 each process loads", "NCCL 2.32 release notes (mismatched git revisions reported at init)")
	}
	if l.AttnCount > 0 {
		a.flag(report.Warn, "nccl.attn", fmt.Sprintf("NCCL printed %d ATTN line%s (a condition that needs attention, e.g. degraded NVLink)", l.AttnCount, plural(int(l.AttnCount))),
			l.Attention[0], "read the ATTN lines: they name the degraded link or setting", "NCCL 2.32 release notes (ATTN log level)")
	}
	if len(l.DiagCounts) == 0 {
		return
	}
	var parts []string
	for _, lv := range []string{"OK", "INFO", "WARN", "FAIL", "ERROR"} {
		if n := l.DiagCounts[lv]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, lv))
		}
	}
	a.note("NCCL diagnostics: %s", strings.Join(parts, ", "))
	for _, d := range l.Diag {
		switch d.Level {
		case "OK":
			continue
		case "WARN", "FAIL", "ERROR":
			a.flag(report.Fail, "nccl.diag", "NCCL's diagnostics report a failure", d.Host+": "+d.Message, "", "NCCL diagnostics (NCCL_RUN_RAS_DIAGNOSTICS, ncclras -D)")
		default:
			// the network check's [INFO] lines name ranks more than 30 %
			// off the median; other [INFO] lines inform
			sev := report.Info
			if strings.Contains(strings.ToLower(d.Message), "median") {
				sev = report.Warn
			}
			a.flag(sev, "nccl.diag", "NCCL's diagnostics report: "+d.Message, d.Host+": "+d.Message, "", "NCCL diagnostics (NCCL_RUN_RAS_DIAGNOSTICS, ncclras -D)")
		}
		a.offMedian(d)
	}
}

// offMedian applies sparkrig's rule to a DIAG bandwidth line that gives
// "min X median Y max Z": the same 30 % rule NCCL applies to its ranks.
func (a *analysis) offMedian(d results.NCCLDiag) {
	var min, med, max float64
	if _, err := fmt.Sscanf(afterWord(d.Message, "min"), "%g", &min); err != nil {
		return
	}
	if _, err := fmt.Sscanf(afterWord(d.Message, "median"), "%g", &med); err != nil {
		return
	}
	if _, err := fmt.Sscanf(afterWord(d.Message, "max"), "%g", &max); err != nil {
		return
	}
	if _, out := diagnose.OffMedian([]float64{min, med, max}, diagnose.OffMedianFraction); len(out) > 0 {
		a.flag(report.Warn, "nccl.diag-spread", fmt.Sprintf("the slowest link is more than %.0f %% below the median (min %g, median %g, max %g)", diagnose.OffMedianFraction*100, min, med, max),
			d.Host+": "+d.Message, "rerun ib_write_bw on the pairs NCCL names to find the slow link", "diagnose.OffMedian (NCCL's 30 % rule)")
	}
}

func afterWord(s, w string) string {
	f := strings.Fields(strings.NewReplacer("=", " ", ":", " ", ",", " ", "/", " ").Replace(s))
	for i := 0; i+1 < len(f); i++ {
		if strings.EqualFold(f[i], w) {
			return f[i+1]
		}
	}
	return ""
}

// quotedWarnClass names where the NCCL warning XLA quotes ("Last NCCL
// warning(error) log entry (may be unrelated) '…'") is raised, from the
// catalogue of NCCL's WARN formats; "" when there is none.
func quotedWarnClass(line string) string {
	const tag = "Last NCCL warning(error) log entry (may be unrelated) '"
	i := strings.Index(line, tag)
	if i < 0 {
		return ""
	}
	msg := line[i+len(tag):]
	if j := strings.LastIndex(msg, "'"); j >= 0 {
		msg = msg[:j]
	}
	cat, err := expect.NCCLWarns()
	if err != nil {
		return ""
	}
	if w, ok := cat.Match(msg); ok {
		return fmt.Sprintf("; the quoted warning %q comes from %s (%s)", msg, expect.NCCLWarnClassText[w.Class], w.Where)
	}
	if c := expect.NCCLWarnClassOf(msg); c != "" {
		return fmt.Sprintf("; the quoted warning %q comes from %s", msg, expect.NCCLWarnClassText[c])
	}
	return ""
}

// crashAfterRemoteError ranks a segmentation fault printed after NCCL's
// remote error below it. ncclRemoteError says a peer process exited or the
// network failed (NVIDIA/nccl src/init.cc v2.30.7-1, ncclGetErrorString:
// "remote process exited or there was a network error"); the framework
// then tears the surviving process down (PyTorch's watchdog rethrows the
// error, std::terminate), and a crash printed after the error is that
// teardown's, not the cause the error reports.
func crashAfterRemoteError(ranked []rankedFlag, hits []diagnose.ErrorHit) {
	remote := -1
	for _, h := range hits {
		if h.Signature.ID == "nccl-remote-error" {
			remote = h.Line
		}
	}
	if remote < 0 {
		return
	}
	for i, h := range hits {
		if h.Signature.ID == "process-segfault" && h.Line > remote {
			for _, r := range hits {
				if r.Signature.ID == "nccl-remote-error" {
					ranked[i].weight = min(ranked[i].weight, r.Score-0.01)
				}
			}
		}
	}
}
