package render

import (
	"io"

	"github.com/sparkrig/sparkrig/internal/report"
)

func textHosts(w io.Writer, r *report.Report, opt Options) error { return nil }

func mdHosts(w io.Writer, r *report.Report, opt Options) error { return nil }
