package render

import (
	"io"

	"github.com/sparkrig/sparkrig/internal/report"
)

func textAnalyses(w io.Writer, r *report.Report, opt Options) error { return nil }

func mdAnalyses(w io.Writer, r *report.Report, opt Options) error { return nil }
