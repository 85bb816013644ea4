package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Field causes of a slow DGX Spark link that give the same number and need
// different fixes, told apart by what a bench run and the nodes' facts
// hold together: raw RDMA per rail, NCCL's bus bandwidth, the link and
// PCIe state, the IOMMU mode and hot-plug events.

// Thresholds, from the reports each cause cites.
const (
	// DegradedLowGbps and DegradedHighGbps bound what one ConnectX-7 rail
	// of a DGX Spark moves in its degraded state (PR #108: 8-25 Gb/s raw
	// with a 200G link; the playbook's healthy examples 92.57 and 97.28
	// Gb/s per interface).
	DegradedLowGbps, DegradedHighGbps = 8, 25
	healthyRailGbps                   = 60
	// ServeTheHome: translated mode caps direct DMA near 12.7 Gb/s per port.
	iommuCapGbps, iommuCapTolerance = 12.7, 1.8
	// A stale NIC after hot-plug: raw RDMA near line rate per twin (~110
	// Gb/s) while NCCL ran at 3.0 GB/s and 23.9 GB/s after the power cycle.
	staleRawGbps   = 80
	staleNCCLShare = 0.25
)

const (
	srcFieldIOMMU = "ServeTheHome, 8x NVIDIA GB10 cluster (https://www.servethehome.com/big-cluster-little-power-the-8x-nvidia-gb10-cluster-marvell-cisco-ubiquiti-qnap-arm/4/)"
	// SrcFieldDegraded is where the degraded state is reported.
	SrcFieldDegraded = "NVIDIA/dgx-spark-playbooks PR #108 (https://github.com/NVIDIA/dgx-spark-playbooks/pull/108); NVIDIA developer forum, 'ConnectX-7 inter-Spark link capped at 13 Gbps'"
	srcFieldStale    = "NVIDIA/dgx-spark-playbooks PR #108 (boot and hot-plug states, recovered by power cycling); community reports on DGX Spark clusters (uncertain); a development-branch NCCL build gives the same ~3 GB/s (PR #103: 3.04 GB/s, 23.74 GB/s from the v2.28.9-1 tag)"
)

// FieldCauses names which of the look-alike causes the evidence supports,
// most likely first, and rules out the ones it contradicts. Nothing is
// returned when no rail is slow and NCCL meets its expectation.
func FieldCauses(e report.LinkEvidence) []report.Cause {
	rails := make([]string, 0, len(e.RawGbps))
	for r := range e.RawGbps {
		rails = append(rails, r)
	}
	slices.Sort(rails)
	var slow, healthy, nearCap []string
	rawSum := 0.0
	for _, r := range rails {
		v := e.RawGbps[r]
		rawSum += v
		switch {
		case v >= healthyRailGbps:
			healthy = append(healthy, fmt.Sprintf("%s %.2f Gb/s", r, v))
		case v >= DegradedLowGbps && v <= DegradedHighGbps:
			slow = append(slow, fmt.Sprintf("%s %.2f Gb/s", r, v))
		}
		if v >= iommuCapGbps-iommuCapTolerance && v <= iommuCapGbps+iommuCapTolerance {
			nearCap = append(nearCap, r)
		}
	}
	ncclLow := e.NCCLBusGBps > 0 && e.NCCLExpectGBps > 0 && e.NCCLBusGBps <= staleNCCLShare*e.NCCLExpectGBps
	// NCCL on GB10 stages through the CPU: when it moves more than the raw
	// rails could carry, the cap is on direct DMA only.
	ncclAboveRaw := e.NCCLBusGBps > 0 && rawSum > 0 && e.NCCLBusGBps*8 > 1.5*rawSum
	if len(slow) == 0 && !ncclLow {
		return nil
	}
	linkOK := e.LinkGbps >= 200 && e.PCIeFull

	iommu := scored{Cause: report.Cause{ID: "iommu-dma-cap", Title: "translated IOMMU (DMA-FQ) caps direct DMA near 12.7 Gb/s per port",
		Confirm: "power-cycle both nodes once: a cap that stays at ~12.7 Gb/s on every rail is the IOMMU mode, not a degraded NIC; cat /sys/kernel/iommu_groups/*/type",
		Fix:     "only where raw RDMA must reach line rate: iommu.passthrough=1 on the kernel command line (NVIDIA's RDMA guide keeps the default; NCCL does not need it)",
		Source:  srcFieldIOMMU}}
	switch {
	case e.IOMMU == "passthrough":
		iommu.against("the nodes run iommu.passthrough (identity domains): nothing translates their DMA")
	case len(healthy) > 0:
		iommu.against("%s reached line rate in the same IOMMU mode", strings.Join(healthy, ", "))
	case len(nearCap) == 0 || len(nearCap) < len(rails):
		iommu.against("not every rail sits at the ~12.7 Gb/s cap")
	case e.IOMMU == "translated":
		iommu.for_(0.4, "IOMMU translated (DMA-FQ) on the nodes; every rail at %.1f±%.1f Gb/s", iommuCapGbps, iommuCapTolerance)
		if ncclAboveRaw {
			iommu.for_(0.4, "NCCL moved %.2f GB/s, more than the raw rails carry: the cap is on direct DMA only", e.NCCLBusGBps)
		}
	default:
		iommu.for_(0.2, "every rail near %.1f Gb/s; the IOMMU mode was not read", iommuCapGbps)
	}

	degraded := scored{Cause: report.Cause{ID: "cx7-degraded", Title: "ConnectX-7 left in its degraded state (8-25 Gb/s with a 200G link)",
		Confirm: "ethtool <netdev> shows 200000Mb/s and lspci LnkSta Gen5 x4 while ib_write_bw stays at 8-25 Gb/s",
		Fix:     "reboot the node, or re-plug the QSFP cable; if it stays, shut both nodes down and unplug them from AC power before powering on",
		Source:  SrcFieldDegraded}}
	switch {
	case len(slow) == 0:
		degraded.against("no rail measured 8-25 Gb/s")
	case e.LinkGbps > 0 && e.LinkGbps < 200:
		degraded.against("the link negotiated %.0f Gb/s: the speed, not the NIC state, explains it", e.LinkGbps)
	case e.LinkGbps > 0 && !e.PCIeFull:
		degraded.against("a ConnectX-7 function trained below its PCIe capability: the PCIe width explains it")
	case ncclAboveRaw:
		degraded.against("NCCL moved %.2f GB/s, more than the raw rails carried: the NIC runs at rate and only direct DMA is held back (a degraded NIC holds TCP and NCCL too)", e.NCCLBusGBps)
	default:
		degraded.for_(0.3, "%s with the link %s", strings.Join(slow, ", "), map[bool]string{true: "at 200G and PCIe at full width", false: "state unknown"}[linkOK])
		if e.IOMMU == "passthrough" {
			degraded.for_(0.4, "the IOMMU passes DMA through: no translation cap applies")
		}
		if len(healthy) > 0 {
			degraded.for_(0.4, "%s reached line rate in the same mode", strings.Join(healthy, ", "))
		}
		if e.NCCLBusGBps > 0 && !ncclAboveRaw {
			degraded.for_(0.2, "NCCL (%.2f GB/s) is held to the raw rate too", e.NCCLBusGBps)
		}
	}

	stale := scored{Cause: report.Cause{ID: "stale-nic-after-hotplug", Title: "stale NIC/PCIe state after a hot-plug: raw RDMA fine, NCCL a fraction",
		Confirm: "raw RDMA near line rate on each twin while NCCL's bus bandwidth is a quarter of its expectation or less, after a cable or device was plugged while the nodes ran; rule out an NCCL built from a development branch first (its version line; PR #103 measured 3.04 GB/s from one)",
		Fix:     "shut down both nodes, unplug both from AC power with the cable seated, power on, and run the bench again (a reboot does not clear it)",
		Source:  srcFieldStale}}
	rawOK := len(rails) > 0 && len(healthy) == len(rails)
	switch {
	case !ncclLow:
		stale.against("NCCL met more than a quarter of its expectation")
	case len(rails) > 0 && !rawOK:
		stale.against("raw RDMA is slow as well: the NIC itself, not only NCCL's path")
	default:
		if rawOK {
			stale.for_(0.3, "raw RDMA %s while NCCL ran at %.2f of %.2f GB/s", strings.Join(healthy, ", "), e.NCCLBusGBps, e.NCCLExpectGBps)
		}
		if len(e.Hotplug) > 0 {
			stale.for_(0.4, "hot-plug since boot: %s", strings.Join(e.Hotplug, "; "))
		} else {
			stale.Evidence = append(stale.Evidence, "no hot-plug in the nodes' kernel logs: look at NCCL's transport (NET/IB on both twins?) first")
		}
	}

	out := []scored{iommu, degraded, stale}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var causes []report.Cause
	for _, c := range out {
		switch {
		case c.score >= 0.6:
			c.Likelihood = "likely"
		case c.score > 0 && len(c.Against) == 0:
			c.Likelihood = "possible"
		default:
			c.Likelihood = "ruled-out"
		}
		causes = append(causes, c.Cause)
	}
	return causes
}

// WithFieldCauses adds causes to every RDMA or NCCL result of a that is
// below its expectation, once each: bench for its own steps, analyze for a
// bench run's document, so both name the same causes.
func WithFieldCauses(a *report.AnalysisResult, causes []report.Cause) {
	if len(causes) == 0 {
		return
	}
	for j := range a.Items {
		it := &a.Items[j]
		if it.Verdict != report.VerdictWarning && it.Verdict != report.VerdictCritical {
			continue
		}
		for _, c := range causes {
			if !slices.ContainsFunc(it.Causes, func(h report.Cause) bool { return h.ID == c.ID }) {
				it.Causes = append(it.Causes, c)
			}
		}
	}
}

// FieldFormat says whether results of format measure a link: perftest and
// nccl-tests, the outputs a bench run's RDMA and NCCL steps produce.
func FieldFormat(format string) bool {
	return format == "perftest" || strings.HasPrefix(format, "nccl-tests")
}
