package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// flags reports what the NCCL log shows on its own, whatever the numbers.
func (a *analysis) flags(l *results.NCCLLog) {
	kinds, gdr := l.TransportKinds()
	multi := l.NNodes > 1 || len(l.Hosts) > 1
	spark := a.res.Platform == "dgx-spark"
	// a channel via NET/ only exists between nodes, so NET/Socket channels
	// are inter-node traffic over TCP whatever the host names say
	if kinds["NET/Socket"] > 0 || l.Network == "Socket" && (multi || len(l.IBDevices) > 0) {
		ev := fmt.Sprintf("'Using network %s'", l.Network)
		if n := kinds["NET/Socket"]; n > 0 {
			ev = fmt.Sprintf("%d channel connections via NET/Socket", n)
		}
		for _, n := range l.NetNotes {
			if strings.Contains(n, "No device found") || strings.Contains(n, "Plugin") {
				ev += "; \"" + n + "\""
				break
			}
		}
		a.flag(check.Fail, "nccl.net-socket", "NCCL moves data over TCP sockets (NET/Socket), not RDMA: expect about 1/10 of the bandwidth", ev,
			"make the RDMA devices visible to the job (ibv_devices; /dev/infiniband in containers) and list them in NCCL_IB_HCA", "docs/dgx-spark.md pitfall 13")
	}
	usesIB := l.Network == "IB" || kinds["NET/IB"] > 0
	if usesIB && multi {
		switch {
		case spark && !gdr:
			a.flag(check.Info, "nccl.gdr-unavailable-gb10", "GPUDirect RDMA is off, as expected on GB10: NCCL stages through host memory", gdrEvidence(l), "", "docs/dgx-spark.md (GB10 has no GPUDirect RDMA)")
		case !spark && !gdr && (len(l.GDRDisabledHCAs) > 0 || l.RingGDR != nil && *l.RingGDR == 0):
			a.flag(check.Warn, "nccl.gdr-off", "GPUDirect RDMA is not in use: NIC traffic is staged through host memory", gdrEvidence(l),
				"load nvidia_peermem (or use a dma-buf capable driver) and check NCCL_NET_GDR_LEVEL", "NCCL GDRDMA transport")
		}
	}
	if spark && multi && usesIB {
		if used := l.NetDevicesUsed(); len(l.IBDevices) == 1 || len(l.IBDevices) == 0 && len(used) == 1 {
			a.flag(check.Warn, "spark.one-twin", "only one PCIe twin of the ConnectX-7 port is in use: about half the port's bandwidth", ibDevList(l),
				"address both twins (different subnets) and set NCCL_IB_HCA to both, same order on every node", "docs/dgx-spark.md pitfall 1")
		}
		for _, g := range l.GIDs {
			if g.GIDIndex >= 0 && g.GIDIndex != 3 {
				a.flag(check.Warn, "spark.roce-gid", fmt.Sprintf("NCCL device %d uses GID index %d, not 3 (RoCEv2/IPv4): its netdev likely has no IPv4 address", g.Dev, g.GIDIndex),
					fmt.Sprintf("NET/IB: NCCL Dev %d ... GID %d", g.Dev, g.GIDIndex), "give every twin an IPv4 address on its own subnet; NCCL_IB_GID_INDEX=3", "docs/dgx-spark.md (NCCL_IB_GID_INDEX 3 = RoCEv2/IPv4)")
			}
		}
	}
	for _, v := range []struct{ env, what string }{{"NCCL_P2P_DISABLE", "P2P"}, {"NCCL_SHM_DISABLE", "shared-memory"}} {
		if l.Env[v.env] == "1" {
			a.flag(check.Warn, "nccl."+strings.ToLower(strings.TrimPrefix(v.env, "NCCL_")), fmt.Sprintf("%s transport disabled by %s=1: intra-node traffic takes a slower path", v.what, v.env),
				v.env+"=1", "unset "+v.env, "seed 004 (NCCL_P2P_DISABLE / NCCL_SHM_DISABLE slow intra-node traffic)")
		}
	}
	if l.P2PRefused > 0 {
		a.flag(check.Warn, "nccl.p2p-refused", "NCCL could not enable GPU peer-to-peer and falls back to shared memory", fmt.Sprintf("'Could not enable P2P' x%d; transports %v", l.P2PRefused, kinds),
			"check `nvidia-smi topo -m`, IOMMU/ACS settings, and that both GPUs are visible to one process", "NCCL INFO 'Could not enable P2P'")
	}
	if need := a.set.NCCLMin(a.res.Platform); need != "" && l.Version != "" && !expect.VersionAtLeast(l.Version, need) {
		a.flag(check.Warn, "nccl.too-old", fmt.Sprintf("NCCL %s is older than %s, the minimum for %s", l.Version, need, a.res.Platform), "NCCL version "+l.Version,
			"install NCCL >= "+need+" (v2.28.9-1 for DGX Spark) and rebuild nccl-tests against it", "seed 000")
	}
	if l.WarnCount > 0 {
		a.flag(check.Warn, "nccl.warn", fmt.Sprintf("NCCL printed %d WARN line%s", l.WarnCount, plural(int(l.WarnCount))), l.Warnings[0], "", "NCCL_DEBUG output")
	}
}

func (a *analysis) flag(sev check.Severity, id, msg, ev, fix, src string) {
	a.res.Flags = append(a.res.Flags, report.AnalysisFlag{ID: id, Severity: sev, Message: msg, Evidence: ev, Fix: fix, Source: src})
}

func gdrEvidence(l *results.NCCLLog) string {
	var parts []string
	if len(l.GDRDisabledHCAs) > 0 {
		parts = append(parts, "'GPU Direct RDMA Disabled for HCA' "+strings.Join(l.GDRDisabledHCAs, ", "))
	}
	if l.RingGDR != nil {
		parts = append(parts, fmt.Sprintf("'Connected all rings ... GDR %d'", *l.RingGDR))
	}
	if len(parts) == 0 {
		parts = append(parts, "no channel via NET/IB/n/GDRDMA")
	}
	return strings.Join(parts, "; ")
}

func ibDevList(l *results.NCCLLog) string {
	var names []string
	for _, d := range l.IBDevices {
		names = append(names, d.Name)
	}
	s := "NET/IB : Using " + strings.Join(names, " ")
	if used := l.NetDevicesUsed(); len(used) > 0 {
		s += fmt.Sprintf("; channels on NET/IB device(s) %v", used)
	}
	return s
}
