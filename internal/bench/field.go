package bench

import (
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// fieldEvidence gathers what a whole run says about its links: raw RDMA per
// rail, NCCL's plateau against its expectation, and the nodes' link, PCIe,
// IOMMU and hot-plug facts.
func fieldEvidence(rec *Record, nodes []*facts.Node) report.LinkEvidence {
	e := report.LinkEvidence{RawGbps: map[string]float64{}, PCIeFull: true}
	for i, st := range rec.Bench.Steps {
		if st.Status != StatusOK || i >= len(rec.Analyses) {
			continue
		}
		switch {
		case st.Kind == KindRDMA && strings.HasSuffix(st.Tool, "_bw"):
			for _, r := range st.Parsed.Perftest {
				if v, _ := r.SteadyAvgGbps(); v > 0 {
					e.RawGbps[strings.Join(st.Rails, "+")] += v
				}
			}
		case st.Kind == KindNCCL:
			for _, it := range rec.Analyses[i].Items {
				if it.Expectation != nil && it.Unit == "GB/s" && (e.NCCLBusGBps == 0 || it.Value < e.NCCLBusGBps) {
					e.NCCLBusGBps, e.NCCLExpectGBps = it.Value, it.Expectation.Value
				}
			}
		}
	}
	modes := map[string]bool{}
	for _, n := range nodes {
		for _, f := range n.PCI {
			if f.Vendor != nil && *f.Vendor == "0x15b3" && f.CapWidth > 0 && f.StaWidth < f.CapWidth {
				e.PCIeFull = false
			}
		}
		for _, d := range n.NetDevs {
			if d.Driver == "mlx5_core" && d.SpeedMbps != nil && *d.SpeedMbps > 0 {
				if g := float64(*d.SpeedMbps) / 1000; e.LinkGbps == 0 || g < e.LinkGbps {
					e.LinkGbps = g
				}
			}
		}
		modes[n.IOMMU.Mode()] = true
		for _, ev := range n.KernelLog.HotplugEvents() {
			e.Hotplug = append(e.Hotplug, n.Host+": "+ev.Line)
		}
	}
	if len(modes) == 1 {
		for m := range modes {
			e.IOMMU = m
		}
	}
	return e
}

// addFieldCauses names the field causes the whole run supports on every
// RDMA and NCCL result below its expectation (a result the gate marked
// invalid is not judged, so it gets none).
func addFieldCauses(rec *Record, nodes []*facts.Node) {
	e := fieldEvidence(rec, nodes)
	rec.LinkEvidence = &e
	causes := diagnose.FieldCauses(e)
	for i, st := range rec.Bench.Steps {
		if (st.Kind == KindRDMA || st.Kind == KindNCCL) && i < len(rec.Analyses) {
			diagnose.WithFieldCauses(&rec.Analyses[i], causes)
		}
	}
}
