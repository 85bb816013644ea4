package cli

import (
	"io"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/capped"
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
// Unattended (the exporter's --results), it takes regular files alone: a
// FIFO or a device would hold the audit past its deadline.
func addFile(m reportMerge, path string, aopt analyze.Options) error {
	m.Open = func(p string) (io.ReadCloser, error) { return capped.Open(p, false) }
	return m.AddFile(path, rawReader(aopt))
}
