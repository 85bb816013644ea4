package bench

import (
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// A run whose raw RDMA reached ~110 Gb/s on each twin while all_gather ran
// at 3.0 GB/s, on nodes whose kernel log shows a cable plugged in after
// boot: the NCCL result names the stale-NIC cause first and rules out the
// degraded NIC and the IOMMU cap.
func TestRunNamesFieldCauses(t *testing.T) {
	raw := func(rail string, gbps float64) StepRecord {
		return StepRecord{StepResult: StepResult{ID: "rdma/" + rail + "/ib_write_bw", Kind: KindRDMA, Tool: "ib_write_bw", Rails: []string{rail}, Status: StatusOK},
			Parsed: Parsed{Perftest: []results.PerftestRun{{BW: []results.PerftestBWRow{{Bytes: 65536, AvgGbps: gbps}}}}}}
	}
	rec := &Record{Report: report.Report{Analyses: []report.AnalysisResult{
		{Items: []report.AnalysisItem{{Unit: "Gb/s", Value: 110.1, Verdict: report.VerdictOK}}},
		{Items: []report.AnalysisItem{{Unit: "Gb/s", Value: 109.8, Verdict: report.VerdictOK}}},
		{Items: []report.AnalysisItem{{Subject: "all_gather", Unit: "GB/s", Value: 3.0, Verdict: report.VerdictCritical,
			Expectation: &report.ExpectationRef{ID: "spark-2n1c-all-gather-large", Value: 21.99}}}},
	}}}
	rec.Bench.Steps = []StepRecord{raw("enp1s0f1np1", 110.1), raw("enP2p1s0f1np1", 109.8),
		{StepResult: StepResult{ID: "nccl/all_gather", Kind: KindNCCL, Tool: "all_gather_perf", Status: StatusOK}}}
	speed := 200000
	w := "0x15b3"
	node := func(host string, log string) *facts.Node {
		n := &facts.Node{Host: host, IOMMU: facts.IOMMU{GroupTypes: map[string]string{"3": "DMA-FQ"}},
			NetDevs: []facts.NetDev{{Name: "enp1s0f1np1", Driver: "mlx5_core", SpeedMbps: &speed}},
			PCI:     []facts.PCIFunc{{Addr: "0000:01:00.1", Vendor: &w, CapWidth: 4, StaWidth: 4}}}
		if log != "" {
			n.KernelLog.Events = []facts.NICEvent{{Kind: facts.EventCablePlugged, Device: "0005:03:00.1", Line: log}}
		}
		return n
	}
	nodes := []*facts.Node{node("spark1", "[ 3712.267103] mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged"), node("spark2", "")}
	addFieldCauses(rec, nodes)
	if got := rec.Analyses[0].Items[0].Causes; len(got) != 0 {
		t.Errorf("a raw result that met its expectation got causes: %+v", got)
	}
	cs := rec.Analyses[2].Items[0].Causes
	if len(cs) != 3 || cs[0].ID != "stale-nic-after-hotplug" || cs[0].Likelihood != "likely" {
		t.Fatalf("%+v", cs)
	}
	for _, c := range cs[1:] {
		if c.Likelihood != "ruled-out" {
			t.Errorf("%s: %s", c.ID, c.Likelihood)
		}
	}
}
