package cli

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/report"
)

// addSnapshot audits a captured snapshot as `sparkrig doctor --snapshot`
// would and adds its host.
func addSnapshot(r *report.Report, path string) error {
	return fmt.Errorf("auditing snapshots needs the doctor, which is not in this build")
}

// addRaw analyses a raw benchmark output as `sparkrig analyze` would.
func addRaw(r *report.Report, path string, data []byte) error {
	return fmt.Errorf("not a sparkrig JSON document, and raw benchmark outputs need analyze, which is not in this build")
}
