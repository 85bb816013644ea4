package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

var rdmaPorts = Check{
	ID: "rdma.ports", Title: "RDMA port state and rate",
	Profiles: []Profile{ProfileGPU, ProfileNoGPU}, Needs: []string{facts.SrcRDMA},
	Applies: onlyIf(hasRDMA, "no RDMA devices"),
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, r := range n.RDMA {
			for _, p := range r.Ports {
				subject := fmt.Sprintf("%s/%d", r.Name, p.Num)
				obs := fmt.Sprintf("%s, %s, %d Gb/s, %s", p.State, p.PhysState, p.RateGbps, p.LinkLayer)
				nd := n.NetDev(r.NetDev)
				if p.State != "ACTIVE" && nd != nil && nd.Carrier != nil && *nd.Carrier {
					out = append(out, report.Finding{Severity: report.Warn, Subject: subject, Observed: obs + "; " + nd.Name + " has carrier", Expected: "ACTIVE",
						Why: "the cable is up but the RDMA port is not, so RDMA traffic cannot use this link", Remedy: report.Manual(report.ActionRun, "sudo rdma link show; check the switch port and `ibv_devinfo -d "+r.Name+"`"), Source: srcRDMADoc})
					continue
				}
				if best := bestRate(n, r.BoardID); p.State == "ACTIVE" && p.RateGbps > 0 && p.RateGbps < best {
					out = append(out, report.Finding{Severity: report.Warn, Subject: subject, Observed: obs, Expected: fmt.Sprintf("%d Gb/s like the other ports of board %s", best, r.BoardID),
						Why: "a port that negotiated below its siblings slows every collective that crosses it", Remedy: report.Manual(report.ActionCable, "check the cable and switch port speed: ethtool "+r.NetDev+"; ibv_devinfo -d "+r.Name), Source: srcRDMADoc})
					continue
				}
				out = append(out, ok(subject, obs))
			}
		}
		return out
	},
}

// bestRate is the highest rate of an active port among devices of one board model.
func bestRate(n *facts.Node, board string) int {
	best := 0
	for _, r := range n.RDMA {
		if r.BoardID != board || board == "" {
			continue
		}
		for _, p := range r.Ports {
			if p.State == "ACTIVE" {
				best = max(best, p.RateGbps)
			}
		}
	}
	return best
}

var numaLocality = Check{
	ID: "numa.locality", Title: "each RDMA NIC shares a NUMA node with a GPU",
	Profiles: []Profile{ProfileGPU}, Needs: []string{facts.SrcPCI},
	Applies: onlyIf(func(n *facts.Node) bool { return n.CPU.NUMANodes > 1 && hasGPUs(n) && hasRDMA(n) }, "fewer than two NUMA nodes, or no GPU and RDMA NIC pair"),
	Run: func(n *facts.Node) []report.Finding {
		gpuNodes := map[int]bool{}
		for _, g := range n.GPUs {
			if g.NUMANode != nil {
				gpuNodes[*g.NUMANode] = true
			}
		}
		var out []report.Finding
		for _, r := range n.RDMA {
			f := n.PCIFunc(r.PCIAddr)
			if f == nil || f.NUMANode == nil {
				continue
			}
			if gpuNodes[*f.NUMANode] {
				out = append(out, ok(r.Name, fmt.Sprintf("NUMA node %d, with a GPU", *f.NUMANode)))
				continue
			}
			out = append(out, report.Finding{Severity: report.Warn, Subject: r.Name, Observed: fmt.Sprintf("NUMA node %d; no GPU there", *f.NUMANode), Expected: "NIC on the NUMA node of the GPUs it serves",
				Why: "traffic between a GPU and a NIC on another socket crosses the inter-socket link and loses bandwidth", Remedy: report.Manual(report.ActionConfigure, "nvidia-smi topo -m; pin ranks with NCCL_IB_HCA per GPU or move the NIC"), Source: srcSeed002})
		}
		return out
	},
}

var memlock = Check{
	ID: "os.memlock", Title: "locked-memory limit unlimited for RDMA",
	Profiles: gpuProfiles, Needs: []string{facts.SrcLimits},
	Applies: onlyIf(hasRDMA, "no RDMA devices"),
	Run: func(n *facts.Node) []report.Finding {
		m := n.Limits.MemlockKiB
		if m == nil {
			return []report.Finding{{Severity: report.Info, Subject: "limits", Observed: "no Max locked memory line", Expected: "unlimited"}}
		}
		if *m < 0 {
			return []report.Finding{ok("limits", "memlock unlimited")}
		}
		obs := fmt.Sprintf("memlock %d KiB for the auditing process", *m)
		if n.Limits.ConfiguredMemlock != "" {
			obs += "; limits.conf sets " + n.Limits.ConfiguredMemlock
		}
		return []report.Finding{{Severity: report.Warn, Subject: "limits", Observed: obs, Expected: "unlimited",
			Why:    "RDMA registers (pins) communication buffers; a small memlock limit makes ibv_reg_mr fail for large NCCL buffers",
			Remedy: report.Manual(report.ActionRun, "printf '* soft memlock unlimited\\n* hard memlock unlimited\\n' | sudo tee /etc/security/limits.d/90-rdma.conf; log in again (containers: --ulimit memlock=-1)"),
			Source: srcSeed002 + "; " + srcCommunity}}
	},
}

var osGovernor = Check{
	ID: "os.cpu-governor", Title: "CPU frequency governor performance",
	Needs: []string{facts.SrcGovernor}, Profiles: gpuProfiles,
	Run: func(n *facts.Node) []report.Finding {
		g := strings.Join(n.CPU.Governors, ", ")
		if g == "performance" {
			return []report.Finding{ok("cpu", "governor performance")}
		}
		return []report.Finding{{Severity: report.Warn, Subject: "cpu", Observed: "governor " + g, Expected: "performance",
			Why:    "a power-saving governor lets cores clock down between kernel launches and network interrupts, adding latency to every step",
			Remedy: report.Manual(report.ActionRun, "sudo cpupower frequency-set -g performance   # persist with a systemd unit or the BIOS power profile"), Source: srcSeed002}}
	},
}

var osTHP = Check{
	ID: "os.thp", Title: "transparent huge pages",
	Needs: []string{facts.SrcTHP}, Profiles: gpuProfiles,
	Run: func(n *facts.Node) []report.Finding {
		if n.Memory.THP != "never" {
			return []report.Finding{ok("memory", "THP "+n.Memory.THP)}
		}
		return []report.Finding{{Severity: report.Warn, Subject: "memory", Observed: "THP never", Expected: "always or madvise",
			Why: "huge pages cut TLB misses for the large pinned buffers that feed the GPUs", Remedy: report.Manual(report.ActionRun, "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled"), Source: srcSeed002}}
	},
}

var osSwap = Check{
	ID: "os.swap", Title: "swap off or swappiness low",
	Needs: []string{facts.SrcMeminfo, facts.SrcSysctl}, Profiles: gpuProfiles,
	Run: func(n *facts.Node) []report.Finding {
		sw := n.Memory.SwapTotalBytes
		swp, have := n.Sysctls["vm.swappiness"]
		obs := fmt.Sprintf("swap %s, vm.swappiness %s", mibPtr(sw), swp)
		if sw == nil || *sw == 0 {
			return []report.Finding{ok("memory", obs)}
		}
		if !have {
			return []report.Finding{sysctlNotCaptured("vm.swappiness")}
		}
		if v, err := strconv.Atoi(swp); err == nil && v <= 10 {
			return []report.Finding{ok("memory", obs)}
		}
		return []report.Finding{{Severity: report.Warn, Subject: "memory", Observed: obs, Expected: "vm.swappiness 0-10 (or no swap)",
			Why:    "swapping out the pages that feed the GPUs stalls training and inference unpredictably",
			Remedy: report.Manual(report.ActionRun, "echo 'vm.swappiness=0' | sudo tee /etc/sysctl.d/90-gpu.conf && sudo sysctl --system"), Source: srcSeed002}}
	},
}

// sysctlNotCaptured is the finding of a check whose kernel parameter the
// snapshot lacks (or holds in an unexpected form): never a pass.
func sysctlNotCaptured(key string) report.Finding {
	return report.Finding{Severity: report.NotEvaluated, Subject: key, Observed: key + " not captured or not readable", Expected: "its value under /proc/sys",
		Why:    "without this evidence the check can neither pass nor fail",
		Remedy: report.Manual(report.ActionRun, "capture again with sparkrig snapshot (it reads /proc/sys/"+strings.ReplaceAll(key, ".", "/")+")")}
}

func mibPtr(p *uint64) string {
	if p == nil {
		return "unknown"
	}
	return mib(*p)
}

var fastNet = onlyIf(func(n *facts.Node) bool {
	for _, d := range n.NetDevs {
		if d.SpeedMbps != nil && *d.SpeedMbps >= 100000 {
			return true
		}
	}
	return hasRDMA(n)
}, "no 100 Gb/s or RDMA interface")

var netBuffers = Check{
	ID: "net.core-buffers", Title: "socket buffer maximums sized for 100 Gb/s",
	Needs: []string{facts.SrcSysctl}, Applies: fastNet,
	Run: func(n *facts.Node) []report.Finding {
		return bufferFindings(n, []string{"net.core.rmem_max", "net.core.wmem_max"}, func(v string) int64 { x, _ := strconv.ParseInt(v, 10, 64); return x })
	},
}

var netTCPBuffers = Check{
	ID: "net.tcp-buffers", Title: "TCP autotuning maximums sized for 100 Gb/s",
	Needs: []string{facts.SrcSysctl}, Applies: fastNet,
	Run: func(n *facts.Node) []report.Finding {
		return bufferFindings(n, []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}, func(v string) int64 {
			f := strings.Fields(v)
			if len(f) != 3 {
				return 0
			}
			x, _ := strconv.ParseInt(f[2], 10, 64)
			return x
		})
	},
}

func bufferFindings(n *facts.Node, keys []string, max func(string) int64) []report.Finding {
	var out []report.Finding
	for _, k := range keys {
		v, have := n.Sysctls[k]
		if !have {
			out = append(out, sysctlNotCaptured(k))
			continue
		}
		if max(v) >= tuning.SocketBufferMin {
			out = append(out, ok(k, v))
			continue
		}
		out = append(out, report.Finding{Severity: report.Warn, Subject: k, Observed: v, Expected: fmt.Sprintf("maximum >= %d (a few MB; 16-64 MB common on 100-200 Gb/s links)", tuning.SocketBufferMin),
			Why: "small socket buffers cap single-stream TCP (NCCL bootstrap, socket fallback, iperf3) far below the link rate",
			Remedy: report.Manual(report.ActionRun, fmt.Sprintf("printf 'net.core.rmem_max=%d\\nnet.core.wmem_max=%d\\nnet.ipv4.tcp_rmem=%s\\nnet.ipv4.tcp_wmem=%s\\n' | sudo tee /etc/sysctl.d/90-net.conf && sudo sysctl --system",
				tuning.SocketBuffer, tuning.SocketBuffer, tuning.Triple(tuning.TCPRmem), tuning.Triple(tuning.TCPWmem))),
			Source: srcSeed002})
	}
	return out
}

var netPortRange = Check{
	ID: "net.port-range", Title: "local port range",
	Needs: []string{facts.SrcSysctl}, Profiles: gpuProfiles,
	Run: func(n *facts.Node) []report.Finding {
		v, have := n.Sysctls["net.ipv4.ip_local_port_range"]
		f := strings.Fields(v)
		if !have || len(f) != 2 {
			return []report.Finding{sysctlNotCaptured("net.ipv4.ip_local_port_range")}
		}
		lo, _ := strconv.Atoi(f[0])
		hi, _ := strconv.Atoi(f[1])
		if hi-lo+1 >= tuning.PortRangeMin {
			return []report.Finding{ok("net.ipv4.ip_local_port_range", v)}
		}
		return []report.Finding{{Severity: report.Info, Subject: "net.ipv4.ip_local_port_range", Observed: fmt.Sprintf("%s (%d ports)", v, hi-lo+1),
			Expected: fmt.Sprintf("at least %d ports (%s) on nodes that open many connections", tuning.PortRangeMin, tuning.PortRange()),
			Why:      "many ranks and data-loader workers can exhaust ephemeral ports",
			Remedy:   report.Manual(report.ActionRun, fmt.Sprintf("echo 'net.ipv4.ip_local_port_range=%s' | sudo tee /etc/sysctl.d/90-ports.conf && sudo sysctl --system", tuning.PortRange())),
			Source:   srcSeed002 + "; seed 004"}}
	},
}
