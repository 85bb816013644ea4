package render

import (
	"io"

	"github.com/sparkrig/sparkrig/internal/report"
)

func textCluster(w io.Writer, r *report.Report, opt Options) error { return nil }

func mdCluster(w io.Writer, r *report.Report, opt Options) error { return nil }
