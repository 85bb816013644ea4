package render

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// benchData collects from the report what the benchmark section draws: NCCL
// tables per run with their expectation and wire limit, RDMA bandwidth per
// rail, and inputs that could not be read.
func benchData(r *report.Report) (runs []ncclRun, rails []railResult, failed []report.AnalysisResult) {
	for i := range r.Analyses {
		a := &r.Analyses[i]
		if a.Error != "" && len(a.Data.NCCLTables) == 0 && len(a.Data.Perftest) == 0 {
			failed = append(failed, *a)
			continue
		}
		label := runLabel(a.File)
		runs = append(runs, ncclRuns(a, label)...)
		rails = append(rails, perftestRails(a, label)...)
	}
	return runs, rails, failed
}

// runLabel names a run in legends: the file name without its directory and
// extension, or for a bench record's step ("<run id> · <step id>", as the
// report command names them) the run's id.
func runLabel(file string) string {
	if file == "" {
		return "run"
	}
	if run, _, ok := strings.Cut(file, " · "); ok {
		return run
	}
	if strings.ContainsAny(file, `/\`) {
		file = filepath.Base(file)
	}
	for _, ext := range []string{".txt", ".log", ".out", ".json"} {
		file = strings.TrimSuffix(file, ext)
	}
	return file
}

// ncclRuns pairs each table with its judged item: the analysis appends one
// busbw item per table, in table order.
func ncclRuns(a *report.AnalysisResult, label string) []ncclRun {
	var items []*report.AnalysisItem
	for i := range a.Items {
		if strings.HasPrefix(a.Items[i].Metric, "busbw") {
			items = append(items, &a.Items[i])
		}
	}
	var out []ncclRun
	for i := range a.Data.NCCLTables {
		run := ncclRun{Run: label, Input: label, Table: &a.Data.NCCLTables[i]}
		if len(a.Data.NCCLTables) > 1 { // several tables in one file: number them
			run.Run = fmt.Sprintf("%s #%d", label, i+1)
		}
		if i < len(items) && len(items) == len(a.Data.NCCLTables) {
			it := items[i]
			run.ExpectedGBs = expectedGBs(it)
			run.WireGBs = wireBusBWGBs(it)
			run.Verdicts = itemVerdicts(it)
		}
		out = append(out, run)
	}
	return out
}

// expectedGBs is the item's expectation in GB/s, or 0.
func expectedGBs(it *report.AnalysisItem) float64 {
	if e := it.Expectation; e != nil {
		return toGBs(e.Value, e.Unit)
	}
	return 0
}

// wireBusBWGBs states the wire limit in busbw terms. The analysis compares
// the wire with a value derived from busbw (the per-GPU network share), so
// the limit scales by busbw/compared.
func wireBusBWGBs(it *report.AnalysisItem) float64 {
	w := it.Wire
	if w == nil || w.Compared <= 0 || it.Value <= 0 || it.Unit != "GB/s" {
		return 0
	}
	return toGBs(w.Value, w.Unit) * it.Value / toGBs(w.Compared, w.Unit)
}

// toGBs converts a bandwidth to GB/s (1e9 bytes per second). Units are
// case-sensitive: GB/s is bytes, Gb/s bits.
func toGBs(v float64, unit string) float64 {
	switch unit {
	case "Gb/s", "Gbit/s", "Gb/sec":
		return v / 8
	case "MB/s", "MB/sec":
		return v / 1000
	case "Mb/s", "Mbit/s":
		return v / 8000
	}
	return v // GB/s
}

// itemVerdicts says what was judged, in one line, and names the likely causes.
func itemVerdicts(it *report.AnalysisItem) []string {
	var out []string
	if e := it.Expectation; e != nil {
		s := fmt.Sprintf("%s: %s %.2f %s", it.Verdict, it.Metric, it.Value, it.Unit)
		if it.AtSize > 0 {
			s += " at " + humanSize(it.AtSize)
		}
		s += fmt.Sprintf(", expected %.4g %s", e.Value, e.Unit)
		if it.Ratio != nil {
			s += fmt.Sprintf(" (%.0f %%)", *it.Ratio*100)
		}
		out = append(out, s)
	}
	for _, c := range it.Causes {
		if c.Likelihood == "likely" || c.Likelihood == "possible" {
			out = append(out, c.Likelihood+" cause: "+c.Title)
		}
	}
	return out
}

// perftestRails gives one bar per bandwidth run with a device, with the
// expectation of its judged item when there is one. The bench command puts
// the rails before an item's subject ("rocep1s0f1: ib_write_bw on ..."), so
// the subject is matched at its end.
func perftestRails(a *report.AnalysisResult, label string) []railResult {
	expected := func(subject string) float64 {
		for _, it := range a.Items {
			if e := it.Expectation; e != nil && (it.Subject == subject || strings.HasSuffix(it.Subject, ": "+subject)) {
				return toGBs(e.Value, e.Unit) * 8
			}
		}
		return 0
	}
	var out []railResult
	for i := range a.Data.Perftest {
		p := &a.Data.Perftest[i]
		if p.Kind != "bw" || len(p.BW) == 0 {
			continue
		}
		g, _ := p.SteadyAvgGbps() // the value the analysis judged
		rail := p.Device
		if rail == "" {
			rail = p.Tool()
		}
		out = append(out, railResult{Run: label, Rail: rail, Gbps: g, ExpectedGbps: expected(perftestSubject(p))})
	}
	return out
}

// perftestSubject is the subject the analysis gives a perftest run.
func perftestSubject(p *results.PerftestRun) string {
	s := p.Tool()
	if p.Device != "" {
		s += " on " + p.Device
	}
	return s
}

// resultRow is one judged item of an analysed input, for the results table.
type resultRow struct {
	Input, Subject, Metric, Value, Expected, Ratio, Verdict, Class, Note string
}

// flagRow is a problem an NCCL log shows on its own.
type flagRow struct {
	Input string
	report.AnalysisFlag
}

// resultRows lists every judged item and log flag of the analysed inputs.
func resultRows(r *report.Report) ([]resultRow, []flagRow) {
	var rows []resultRow
	var flags []flagRow
	for _, a := range r.Analyses {
		for _, it := range a.Items {
			row := resultRow{Input: runLabel(a.File), Subject: it.Subject, Metric: it.Metric,
				Value: fmt.Sprintf("%.4g %s", it.Value, it.Unit), Verdict: string(it.Verdict), Class: verdictClass(it.Verdict), Note: it.NoExpectation}
			if it.AtSize > 0 {
				row.Value += " at " + humanSize(it.AtSize)
			}
			if e := it.Expectation; e != nil {
				row.Expected = fmt.Sprintf("%.4g %s", e.Value, e.Unit)
			}
			if it.Ratio != nil {
				row.Ratio = fmt.Sprintf("%.0f %%", *it.Ratio*100)
			}
			rows = append(rows, row)
		}
		for _, f := range a.Flags {
			flags = append(flags, flagRow{Input: runLabel(a.File), AnalysisFlag: f})
		}
	}
	return rows, flags
}

// verdictClass maps an analysis verdict to the severity classes of the page.
func verdictClass(v report.Verdict) string {
	switch v {
	case report.VerdictCritical:
		return "fail"
	case report.VerdictWarning:
		return "warn"
	case report.VerdictOK:
		return "ok"
	case report.VerdictUnknown:
		return "not-evaluated"
	}
	return "info"
}
