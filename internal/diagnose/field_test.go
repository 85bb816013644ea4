package diagnose

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Each scenario holds the numbers of its public report; the cause it
// names is likely and the look-alikes are ruled out or at most possible.
func TestFieldCausesToldApart(t *testing.T) {
	tests := []struct {
		name  string
		e     report.LinkEvidence
		want  string   // the likely cause
		ruled []string // causes the evidence must rule out
	}{
		{
			// PR #108: ib_write_bw 13.23 Gb/s with the link at 200G and PCIe
			// Gen5 x4, on a node whose IOMMU passes DMA through.
			name: "degraded ConnectX-7, passthrough IOMMU",
			e: report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "passthrough",
				RawGbps: map[string]float64{"enp1s0f1np1": 13.23}},
			want: "cx7-degraded", ruled: []string{"iommu-dma-cap", "stale-nic-after-hotplug"},
		},
		{
			// PR #108's 13.23 Gb/s on one twin while the other reaches the
			// playbook's 97.28 Gb/s in the same (default, translated) mode.
			name: "degraded ConnectX-7 beside a healthy twin",
			e: report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "translated",
				RawGbps: map[string]float64{"enp1s0f1np1": 97.28, "enP2p1s0f1np1": 13.23}},
			want: "cx7-degraded", ruled: []string{"iommu-dma-cap", "stale-nic-after-hotplug"},
		},
		{
			// ServeTheHome: 12.7 Gb/s per port of direct DMA in translated
			// mode while NCCL, staging through the CPU, reached 17.57 GB/s.
			name: "IOMMU translated, NCCL above the raw rails",
			e: report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "translated",
				RawGbps:     map[string]float64{"enp1s0f1np1": 12.7, "enP2p1s0f1np1": 12.7},
				NCCLBusGBps: 17.57, NCCLExpectGBps: 21.99},
			want: "iommu-dma-cap", ruled: []string{"cx7-degraded", "stale-nic-after-hotplug"},
		},
		{
			// Raw RDMA ~110 Gb/s per twin, NCCL 3.0 GB/s, a cable plugged in
			// while the node ran (the daqiri kernel-log line).
			name: "stale NIC after hot-plug",
			e: report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "translated",
				RawGbps:     map[string]float64{"enp1s0f1np1": 110, "enP2p1s0f1np1": 110},
				NCCLBusGBps: 3.0, NCCLExpectGBps: 21.99,
				Hotplug: []string{"[ 3712.267103] mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged"}},
			want: "stale-nic-after-hotplug", ruled: []string{"cx7-degraded", "iommu-dma-cap"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := FieldCauses(tt.e)
			if len(cs) == 0 || cs[0].ID != tt.want || cs[0].Likelihood != "likely" {
				t.Fatalf("first cause %+v, want %s likely\n%s", first(cs), tt.want, dump(cs))
			}
			for _, id := range tt.ruled {
				for _, c := range cs {
					if c.ID == id && c.Likelihood != "ruled-out" {
						t.Errorf("%s is %s, want ruled-out\n%s", id, c.Likelihood, dump(cs))
					}
				}
			}
			if cs[0].Fix == "" || cs[0].Source == "" {
				t.Errorf("%s has no fix or source", cs[0].ID)
			}
		})
	}
}

// Without the telling evidence the look-alikes stay open: every rail at
// the cap in translated mode and no NCCL figure is the mode or the NIC.
func TestFieldCausesAmbiguous(t *testing.T) {
	cs := FieldCauses(report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "translated",
		RawGbps: map[string]float64{"enp1s0f1np1": 12.86, "enP2p1s0f1np1": 13.23}})
	got := map[string]string{}
	for _, c := range cs {
		got[c.ID] = c.Likelihood
	}
	if got["iommu-dma-cap"] != "possible" || got["cx7-degraded"] != "possible" {
		t.Errorf("%v\n%s", got, dump(cs))
	}
	// A slow link explains a slow rail: not a degraded NIC.
	cs = FieldCauses(report.LinkEvidence{LinkGbps: 100, PCIeFull: true, RawGbps: map[string]float64{"enp1s0f1np1": 20}})
	for _, c := range cs {
		if c.ID == "cx7-degraded" && c.Likelihood != "ruled-out" {
			t.Errorf("100G link: %+v", c)
		}
	}
	// A healthy run names nothing.
	if cs := FieldCauses(report.LinkEvidence{LinkGbps: 200, PCIeFull: true, RawGbps: map[string]float64{"a": 97.28, "b": 92.57}, NCCLBusGBps: 21.99, NCCLExpectGBps: 21.99}); len(cs) != 0 {
		t.Errorf("healthy: %s", dump(cs))
	}
}

func first(cs []report.Cause) report.Cause {
	if len(cs) == 0 {
		return report.Cause{}
	}
	return cs[0]
}

func dump(cs []report.Cause) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.ID + " " + c.Likelihood + " for " + strings.Join(c.Evidence, "; ") + " against " + strings.Join(c.Against, "; ") + "\n")
	}
	return b.String()
}
