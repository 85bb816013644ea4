package cli

import (
	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Helpers that moved below cli, kept under their old names for the
// commands whose pipelines have not moved yet (the exporter's merge of
// result documents).

// reportMerge is report.Merge under the names the exporter still calls.
type reportMerge struct{ *report.Merge }

func newReportMerge(r *report.Report) reportMerge { return reportMerge{report.NewMerge(r)} }

func (m reportMerge) finish() report.Verdict { return m.Finish() }

// addFile merges a sparkrig document or analyses a raw output (report.Merge.AddFile).
func addFile(m reportMerge, path string, aopt analyze.Options) error {
	return m.AddFile(path, rawReader(aopt))
}
