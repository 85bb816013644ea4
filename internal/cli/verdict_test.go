package cli

import (
	"testing"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// TestBenchAndReportOneVerdict: the exit status bench gives a run is the one
// report gives over the run's saved document (recorded runs: one measured,
// one whose only step failed).
func TestBenchAndReportOneVerdict(t *testing.T) {
	for path, want := range map[string]int{"testdata/bench/h200x2-native.json": ExitOK, "testdata/bench/no-gpu.json": ExitUnknown} {
		rec := loadBenchRecord(t, path)
		if got := exitFor(bench.Status(rec)); got != want {
			t.Errorf("%s: bench's verdict exits %d, want %d", path, got, want)
		}
		if code, _, errOut := runMain(t, "report", "--format", "json", path); code != want {
			t.Errorf("%s: report exits %d, want %d (as bench)\n%s", path, code, want, errOut)
		}
	}
}
