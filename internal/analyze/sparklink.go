package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
)

// weightSparkLinkSlow ranks the degraded ConnectX-7 below every signature
// that names a cause of its own: it is what is left when nothing else is.
const weightSparkLinkSlow = 0.7

// sparkLinkShare is the largest share of its expectation a DGX Spark
// measurement of the degraded state reaches: 25 Gb/s of the ~96 Gb/s one
// twin gives (0.26); NCCL's 2 x 25 Gb/s of 21.97 GB/s busbw (0.28); iperf3's
// ~13 Gb/s (TCP is held like RDMA) of the 35 Gb/s expected, with room for a
// tuned run (0.45).
const (
	sparkLinkShareRDMA = 0.3
	sparkLinkShareTCP  = 0.45
)

// sparkLinkSlow names a ConnectX-7 held in its degraded state when a DGX
// Spark measurement over the link (perftest, nccl-tests between nodes,
// iperf3) sits in the state's band per rail and far below the platform's
// expectation, and nothing else in the paste names a cause: no error line
// that fails, no other warning or failure the log's lines raise, no likely
// cause of the item, no cause a log line or the NCCL
// version supports (a cause guessed from the ratio alone, such as NCCL's
// socket fallback at ~1/10, stays possible, and the remedy says how to
// tell them apart). The kernel's slot-power
// line of a run-time attach, when the paste has it, is named as the cause.
func (a *analysis) sparkLinkSlow(hits []diagnose.ErrorHit) {
	if a.res.Platform != "dgx-spark" || a.res.Topology == "single-node" {
		return
	}
	for _, h := range hits {
		if h.Signature.Severity != "warn" {
			return
		}
	}
	for _, f := range a.res.Flags {
		if f.Severity == report.Fail || f.Severity == report.Warn {
			return
		}
	}
	for _, c := range a.causes {
		if c.flag.Severity == report.Fail || c.flag.Severity == report.Warn {
			return
		}
	}
	for i := range a.res.Items {
		it := &a.res.Items[i]
		seen, ok := a.sparkLinkDegraded(it)
		if !ok || otherCauseNamed(it) {
			continue
		}
		a.sparkLinkFlag(it, seen, hits)
		return
	}
}

// sparkLinkSeen is a measurement in the degraded state's band: what it
// measured per rail, and the expectation it is short of.
type sparkLinkSeen struct {
	measured string
	ratio    float64
	exp      report.ExpectationRef
}

// sparkLinkDegraded says whether an item measures the link in the degraded
// state's band, and what it measured per rail. A perftest run without its
// header (no verb, so no expectation) is set against one twin's write
// bandwidth: the degraded band lies far below any verb's rate on a twin.
func (a *analysis) sparkLinkDegraded(it *report.AnalysisItem) (sparkLinkSeen, bool) {
	lo, hi := float64(diagnose.DegradedLowGbps), float64(diagnose.DegradedHighGbps)
	var seen sparkLinkSeen
	switch {
	case it.Expectation != nil && it.Ratio != nil && (it.Verdict == report.VerdictCritical || it.Verdict == report.VerdictWarning):
		seen.ratio, seen.exp = *it.Ratio, *it.Expectation
	case it.Expectation == nil && it.Unit == "Gb/s" && it.Metric == "BW average" && it.Value >= lo && it.Value <= hi:
		e := a.set.Find(expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMABW, Verb: "write"})
		if len(e) == 0 {
			return seen, false
		}
		seen.ratio = round3(it.Value / e[0].Value)
		seen.exp = report.ExpectationRef{ID: e[0].ID, Value: e[0].Value, Unit: e[0].Unit}
	default:
		return seen, false
	}
	r := seen.ratio
	switch {
	case it.Unit == "GB/s" && strings.HasPrefix(it.Metric, "busbw"):
		// one GPU per node, its share over the port's two twins
		gbps := it.Value * 8
		if r > sparkLinkShareRDMA || gbps < lo || gbps > 2*hi {
			return seen, false
		}
		seen.measured = fmt.Sprintf("%s: busbw %.2f GB/s, %.1f Gb/s per GPU on the wire (the degraded state's %.0f-%.0f Gb/s per twin)", it.Subject, it.Value, gbps, lo, hi)
	case it.Unit == "Gb/s" && it.Metric == "BW average":
		if r > sparkLinkShareRDMA || it.Value < lo || it.Value > hi {
			return seen, false
		}
		seen.measured = fmt.Sprintf("%s: %.2f Gb/s on one RoCE device (the degraded state's %.0f-%.0f Gb/s)", it.Subject, it.Value, lo, hi)
		if it.Expectation == nil {
			seen.measured += "; the run's header is not in the text, so its verb is not known: set against one twin's ib_write_bw"
		}
	case it.Unit == "Gb/s" && it.Metric == "received" && strings.Contains(it.Subject, "TCP"):
		if r > sparkLinkShareTCP || it.Value < lo || it.Value > hi {
			return seen, false
		}
		seen.measured = fmt.Sprintf("%s: %.2f Gb/s received (the degraded state holds TCP like RDMA, %.0f-%.0f Gb/s)", it.Subject, it.Value, lo, hi)
	default:
		return seen, false
	}
	return seen, true
}

// otherCauseNamed: a cause of the item the paste supports, beyond those
// guessed from the ratio alone (NCCL's socket fallback at ~1/10, one twin
// at ~1/2).
func otherCauseNamed(it *report.AnalysisItem) bool {
	for _, c := range it.Causes {
		switch {
		case c.Likelihood == "likely":
			return true
		case c.Likelihood == "possible" && !diagnose.GuessedFromRatio(c):
			return true
		}
	}
	return false
}

func (a *analysis) sparkLinkFlag(it *report.AnalysisItem, seen sparkLinkSeen, hits []diagnose.ErrorHit) {
	e := seen.exp
	ev := fmt.Sprintf("%s; %.0f %% of the expected %.2f %s (%s); no line of the paste names another cause",
		seen.measured, seen.ratio*100, e.Value, e.Unit, e.ID)
	msg := fmt.Sprintf("the DGX Spark link moves %.0f %% of what the platform gives (%.2f of %.2f %s): a ConnectX-7 left in its degraded state holds each twin at 8-25 Gb/s with the link at 200G and PCIe at Gen5 x4, most often after a QSFP cable was plugged in, or the NIC re-attached, while the node ran; it lasts until a reboot with the cable in",
		seen.ratio*100, it.Value, e.Value, e.Unit)
	for _, h := range hits {
		if h.Signature.ID == "mlx5-slot-power-not-advertised" {
			msg = fmt.Sprintf("the ConnectX-7 was attached while the node ran (the kernel says its slot advertised no power limit) and holds the DGX Spark link at %.0f %% of what the platform gives (%.2f of %.2f %s) until a reboot with the cable in",
				seen.ratio*100, it.Value, e.Value, e.Unit)
			ev += fmt.Sprintf("; kernel, line %d: %s", h.Line, h.First)
			break
		}
	}
	if g := guessedCauses(it); len(g) > 0 {
		ev += "; the number alone also fits: " + strings.Join(g, "; ") + " (the checks below tell them apart)"
	}
	a.cause(weightSparkLinkSlow, report.Warn, "spark.cx7-degraded", msg, ev,
		"confirm on each node: ib_write_bw -d <each RoCE device> --report_gbits between the nodes (one twin gives ~96 Gb/s; 8-25 Gb/s while ethtool shows 200000Mb/s and lspci LnkSta 32GT/s x4 is this state), dmesg | grep 'slot power' (\"PCIe slot power capability was not advertised\" marks a run-time attach), and for NCCL a run with NCCL_DEBUG=INFO that shows NET/IB (NET/Socket would be a fallback instead) and the NCCL release built (a development-branch build gives ~3 GB/s over NET/IB too); then reboot both nodes with the cable seated (the state is per node) and keep the cable in at boot, or turn the CX-7 hot-plug off (/etc/nvidia/cx7-hotplug-enabled); if a reboot does not clear it, shut both nodes down and unplug them from AC power; a cap that stays at ~12.7 Gb/s on every rail after a cold boot is the IOMMU's translated mode (cat /sys/kernel/iommu_groups/*/type), not this state",
		diagnose.SrcFieldDegraded+"; docs/dgx-spark.md (ib_write_bw ~96 Gb/s per twin, all_gather 16 GiB ~22 GB/s; pitfall 16); https://github.com/ajclark/GLM-5.3-DCP4-DFlash2-NVMe-KV-Offload-4x-DGX-Spark/blob/45e70c52ebe0067beedecdf34e5c6c39a13af8ed/results/incident-20260907-1418-workers-exited/cx7-throttle-after-hotplug.md (hot-plug re-add: ib_write_bw 12.7 Gb/s until a cold boot, then 111.9); https://github.com/KoyoImai/dgx_spark_cluster2/blob/02c1b32a43785f5a236f65277275b4b6c179de10/Step011/README.md (QSFP cable re-plugged without a reboot: all_gather 2.82 GB/s over NET/IB until the Spark rebooted); https://github.com/Jiangw2718i/ai-infra-notes/blob/ab25e5449c46aaeb872733d48b68ccbb423784b4/dgx-spark/qsfp-link-13gbps-until-reboot.md (13.33 + 13.23 Gb/s, 98.03 per rail after rebooting both nodes with the cable attached)")
}

// guessedCauses are the titles of the item's causes the ratio alone
// suggests.
func guessedCauses(it *report.AnalysisItem) []string {
	var out []string
	for _, c := range it.Causes {
		if c.Likelihood == "possible" && diagnose.GuessedFromRatio(c) {
			out = append(out, c.Title)
		}
	}
	return out
}

// slotPower says the mlx5 driver's slot-power lines for what they are where
// they are printed. On a DGX Spark (the platform given or inferred, or,
// with none, GB10's 27 W report in the paste) the not-advertised line marks
// a ConnectX-7 attached at run time, a warning, and the 27 W line is
// printed at every boot, information. Elsewhere the driver prints the
// not-advertised line for information (servers print it at boot) and the
// insufficient-power line as the warning it is.
func (a *analysis) slotPower(hits []diagnose.ErrorHit) {
	gb10 := a.res.Platform == "dgx-spark"
	if a.res.Platform == "" {
		for _, h := range hits {
			if h.Signature.ID == "mlx5-slot-power-insufficient" && strings.Contains(h.First, "PCIe slot (27W)") {
				gb10 = true
			}
		}
	}
	for i := range a.res.Flags {
		f := &a.res.Flags[i]
		if f.ID == "error.mlx5-slot-power-not-advertised" && !gb10 || f.ID == "error.mlx5-slot-power-insufficient" && gb10 {
			f.Severity = report.Info
		}
	}
}
