package render

import "github.com/sparkrig/sparkrig/internal/report"

// benchData collects from the report what the benchmark section draws: NCCL
// tables per run, RDMA measurements per rail, and inputs that failed.
func benchData(r *report.Report) (runs []ncclRun, rails []railResult, failed []report.AnalysisResult) {
	for _, a := range r.Analyses {
		if a.Error != "" {
			failed = append(failed, a)
		}
	}
	return runs, rails, failed
}
