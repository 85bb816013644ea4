package render

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
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

// A bench step's traffic by rail reaches every format: the HTML bar chart
// (the idle twin's bar marked low), the Markdown table and Prometheus.
func TestTrafficByRailInEveryFormat(t *testing.T) {
	r := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "bench", Analyses: []report.AnalysisResult{{
		File: "nccl/all_reduce", Status: report.VerdictWarning, Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{},
		Data: report.AnalysisData{RailTraffic: []report.RailTraffic{
			{Host: "spark-1", NetDev: "enp1s0f1np1", TxBytes: 995 << 20, RxBytes: 990 << 20, TxShare: 0.995, RxShare: 0.99, Source: "rdma"},
			{Host: "spark-1", NetDev: "enP2p1s0f1np1", TxBytes: 5 << 20, RxBytes: 10 << 20, TxShare: 0.005, RxShare: 0.01, Source: "rdma"},
		}}}}}
	svg := string(trafficSVG(r))
	if !strings.Contains(svg, `class="bar low"`) || !strings.Contains(svg, "nccl/all_reduce · spark-1 enP2p1s0f1np1: 0.5 %") {
		t.Errorf("svg lacks the idle twin's low bar:\n%s", svg)
	}
	var md, prom strings.Builder
	if err := Write(&md, r, "markdown", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| spark-1 | enP2p1s0f1np1 | 5 MiB | 0.5 % | 10 MiB | 1.0 % | rdma |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := Prometheus(&prom, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prom.String(), `sparkrig_rail_transmit_share_ratio{step="nccl/all_reduce",host="spark-1",netdev="enP2p1s0f1np1"} 0.005`) {
		t.Errorf("prometheus:\n%s", prom.String())
	}
}
