package check

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// Causes of a slow fabric that the kernel log and the running state tell
// apart: a flapping link (the cable), a hot-plug that left the NIC in a
// stale state (an AC power cycle of both nodes), and persistent MTU that
// the running interface lost (a reboot that did not apply it).

// linkFlapMin is the number of link-down events of one port in this boot's
// log that makes it a flapping link rather than a cable pulled once.
const linkFlapMin = 3

const (
	srcDegradedCX7 = "NVIDIA/dgx-spark-playbooks PR #108 (https://github.com/NVIDIA/dgx-spark-playbooks/pull/108): boot and hot-plug leave a ConnectX-7 at 8-25 Gb/s with a 200G link; NVIDIA developer forum, 'ConnectX-7 inter-Spark link capped at 13 Gbps' (https://forums.developer.nvidia.com/t/connectx-7-inter-spark-link-capped-at-13-gbps-expected-200-gbps-pcie-power-throttling-27w/363461)"
	srcLinkDowned  = "NVIDIA NVSentinel docs/nic-health-monitor.md (link_downed counted as fatal); mlx5_core link messages"
	srcMTUReset    = "tonyd2wild/DeepSeek-v4-Flash-Vision-Exp-DSpark-1M-NVFP4-KV-2x-DGX-Spark PR #40 (https://github.com/tonyd2wild/DeepSeek-v4-Flash-Vision-Exp-DSpark-1M-NVFP4-KV-2x-DGX-Spark/pull/40): re-verify MTU 9000 on both ends after firmware capsule reboots (IBV_WC_RETRY_EXC_ERR)"
)

var nicLinkFlaps = Check{
	ID: "nic.link-flaps", Title: "ConnectX-7 links stay up",
	Profiles: gpuProfiles, Needs: []string{facts.SrcKernelLog},
	Applies: onlyIf(hasRDMA, "no RDMA device"),
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, r := range n.RDMA {
			if r.NetDev == "" {
				continue
			}
			downs := n.KernelLog.LinkDowns(r.NetDev)
			if downs < linkFlapMin {
				continue
			}
			out = append(out, report.Finding{Severity: report.Warn, Subject: r.NetDev,
				Observed: fmt.Sprintf("%d link-down events in this boot's kernel log", downs),
				Expected: fmt.Sprintf("fewer than %d (a cable pulled once is not a flap)", linkFlapMin),
				Why:      "each flap tears down the RDMA queue pairs on the port: NCCL retries, stalls or fails with IBV_WC_RETRY_EXC_ERR, and the GID table may move",
				Remedy: &report.Remedy{Kind: report.RemedyManual, Steps: []report.Step{
					{Action: report.ActionCable, Text: "reseat the QSFP cable of " + r.NetDev + " at both ends; if the link keeps going down, replace the cable (an approved one: Amphenol NJAAKK-N911 or Luxshare LMTQF022-SD-R)"},
					{Action: report.ActionInspect, Text: "sudo dmesg | grep -E 'mlx5_core.*Link (up|down)'   # the flaps should stop"},
				}},
				Source: srcLinkDowned})
		}
		if len(out) == 0 {
			return []report.Finding{ok("links", "no port went down repeatedly")}
		}
		return out
	},
}

// nicHotplug: a cable or PCIe device hot-plugged while the node ran. On
// DGX Spark this can leave the ConnectX-7 in a state that a reboot does
// not clear (raw RDMA near line rate, NCCL at a few GB/s; or 8-25 Gb/s
// raw): only an AC power cycle of both nodes with the cable seated does.
var nicHotplug = Check{
	ID: "spark.hotplug", Title: "no cable or PCIe hot-plug since boot",
	Profiles: spark, Needs: []string{facts.SrcKernelLog},
	Run: func(n *facts.Node) []report.Finding {
		evs := n.KernelLog.HotplugEvents()
		if len(evs) == 0 {
			return []report.Finding{ok("node", "no cable or slot hot-plug in this boot's kernel log")}
		}
		var seen []string
		for _, e := range evs {
			seen = append(seen, e.Line)
		}
		if len(seen) > 3 {
			seen = append(seen[:3], fmt.Sprintf("and %d more", len(evs)-3))
		}
		return []report.Finding{{Severity: report.Warn, Subject: "node",
			Observed: "hot-plug since boot: " + strings.Join(seen, "; "),
			Expected: "cables seated before power-on",
			Why:      "a ConnectX-7 hot-plugged on a running DGX Spark can keep a stale NIC/PCIe state that a reboot does not clear: raw RDMA may reach line rate while NCCL runs at a few GB/s, or the port is held at 8-25 Gb/s with a 200G link",
			Remedy: &report.Remedy{Kind: report.RemedyManual, Steps: []report.Step{
				{Action: report.ActionCable, Text: "check the QSFP cable is seated at both ends"},
				{Action: report.ActionPowerCycle, Text: "shut down both nodes of the cable (sudo poweroff), unplug both from AC power for 30 seconds, then power them on with the cable in place"},
				{Action: report.ActionRun, Text: "sparkrig bench --hosts THIS,PEER   # raw RDMA and NCCL should both be near line rate again"},
			}},
			Source: srcDegradedCX7}}
	},
}

// sparkMTUNotApplied: the persistent configuration sets a jumbo MTU the
// running interface does not have: the configuration is right and was
// not applied (a firmware-capsule update's reboot is reported to leave
// the ports at 1500). The remedy applies it again; it does not edit files.
var sparkMTUNotApplied = Check{
	ID: "spark.mtu-not-applied", Title: "the running MTU is the configured one",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs, facts.SrcNetConfig}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, d := range activeSparkNetdevs(n) {
			want, src := configuredMTU(n, d.Name)
			if want < tuning.RailMTU || d.MTU >= want {
				continue
			}
			out = append(out, report.Finding{Severity: report.Warn, Subject: d.Name,
				Observed: fmt.Sprintf("MTU %d running; %s sets %d", d.MTU, src, want),
				Expected: fmt.Sprintf("MTU %d, as configured", want),
				Why:      "the configuration is right but not in effect (a firmware-capsule update's reboot is reported to bring the ports up at 1500): RoCE falls to active_mtu 1024 and a peer at 9000 retries until IBV_WC_RETRY_EXC_ERR",
				Remedy: &report.Remedy{Kind: report.RemedyManual, Steps: []report.Step{
					{Action: report.ActionRun, Text: "sudo netplan apply"},
					{Action: report.ActionInspect, Text: fmt.Sprintf("ip -br link show %s   # mtu %d here and on the peer", d.Name, want)},
				}},
				Source: srcMTUReset})
		}
		if len(out) == 0 {
			return []report.Finding{ok("mtu", "running MTU as configured")}
		}
		return out
	},
}

// configuredMTU is the MTU the persistent configuration sets for an
// interface (0 when none does), with the file that sets it.
func configuredMTU(n *facts.Node, iface string) (int, string) {
	for _, c := range n.ConfigFor(iface) {
		if c.MTU > 0 {
			return c.MTU, c.Source
		}
	}
	return 0, ""
}
