package render

import (
	"testing"

	"github.com/sparkrig/sparkrig/internal/results"
)

// Runs of different setups (a two-Spark all_gather, a single-node H200 run)
// sit side by side without a change; runs of one setup are compared.
func TestComparisonOnlyRelatesLikeRuns(t *testing.T) {
	sparks := &results.NCCLTable{Collective: "all_gather", Ranks: 2, Nodes: 2, PeakBusBWGBs: 20.95,
		Devices: []results.NCCLDevice{{Name: "NVIDIA GB10"}}}
	again := *sparks
	again.PeakBusBWGBs = 21.97
	h200 := &results.NCCLTable{Collective: "all_gather", Ranks: 2, Nodes: 1, PeakBusBWGBs: 301.82,
		Devices: []results.NCCLDevice{{Name: "NVIDIA H200"}}}
	c := newComparison([]ncclRun{{Run: "spark-mtu1500", Table: sparks}, {Run: "h200", Table: h200}, {Run: "spark-mtu9000", Table: &again}}, []string{"all_gather"})
	if got := c.Rows[1].Cells[0]; got.Value != "301.82" || got.Delta != "" {
		t.Errorf("h200 against the Sparks: %+v, want no change", got)
	}
	if got := c.Rows[2].Cells[0]; got.Delta != "+4.9%" {
		t.Errorf("Sparks at MTU 9000 against 1500: %+v, want +4.9%%", got)
	}
}
