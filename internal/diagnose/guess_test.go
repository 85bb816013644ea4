package diagnose

import (
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// A cause whose every piece of evidence is the ratio's signature is a
// guess; one a log line supports is not.
func TestGuessedFromRatio(t *testing.T) {
	guess := Causes(Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.13,
		Verdict: report.VerdictCritical, Table: &results.NCCLTable{Nodes: 2}})
	found := false
	for _, c := range guess {
		if c.ID == "net-socket" {
			found = true
			if !GuessedFromRatio(c) {
				t.Errorf("net-socket from the ratio alone: %v", c.Evidence)
			}
		}
	}
	if !found {
		t.Fatalf("no net-socket cause: %+v", guess)
	}
	log := &results.NCCLLog{InfoLines: 10, Network: "Socket"}
	for _, c := range Causes(Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.13,
		Verdict: report.VerdictCritical, Table: &results.NCCLTable{Nodes: 2}, Log: log}) {
		if c.ID == "net-socket" && GuessedFromRatio(c) {
			t.Errorf("net-socket the log shows: %v", c.Evidence)
		}
	}
	if GuessedFromRatio(report.Cause{ID: "x"}) {
		t.Error("a cause without evidence is not a guess from the ratio")
	}
}
