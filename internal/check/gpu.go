package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

var gpuNeeds = []string{facts.SrcNvidiaSMI}

var haveGPUs = onlyIf(hasGPUs, "nvidia-smi lists no GPU")

var gpuDriver = Check{
	ID: "gpu.driver", Title: "NVIDIA driver and CUDA versions",
	Profiles: gpuProfiles, Needs: gpuNeeds,
	Run: func(n *facts.Node) []report.Finding {
		var names []string
		for _, g := range n.GPUs {
			names = append(names, g.Name)
		}
		obs := fmt.Sprintf("driver %s, CUDA %s, %d GPU(s): %s", n.Driver.Version, n.Driver.CUDAVersion, len(n.GPUs), summarize(names))
		return []report.Finding{{Severity: report.Info, Subject: "driver", Observed: obs, Expected: "the same driver and CUDA on every node", Source: srcNVIDIASMI}}
	},
}

// summarize collapses repeated names ("8× NVIDIA H100 80GB HBM3").
func summarize(names []string) string {
	count := map[string]int{}
	var order []string
	for _, n := range names {
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
	}
	var out []string
	for _, n := range order {
		out = append(out, fmt.Sprintf("%d× %s", count[n], n))
	}
	return strings.Join(out, ", ")
}

// eachGPU collects f's finding for every GPU, with "GPU <index>" as its
// subject; a zero Finding (no severity) adds nothing for that GPU.
func eachGPU(n *facts.Node, f func(g facts.GPU) report.Finding) []report.Finding {
	var out []report.Finding
	for _, g := range n.GPUs {
		fd := f(g)
		if fd.Severity == "" {
			continue
		}
		fd.Subject = fmt.Sprintf("GPU %d", g.Index)
		out = append(out, fd)
	}
	return out
}

var gpuPersistence = Check{
	ID: "gpu.persistence", Title: "persistence mode on",
	Profiles: gpuProfiles, Needs: gpuNeeds, Applies: haveGPUs,
	Run: func(n *facts.Node) []report.Finding {
		return eachGPU(n, func(g facts.GPU) report.Finding {
			if g.Persistence != "Disabled" {
				return ok("", "persistence "+orNA(g.Persistence))
			}
			return report.Finding{Severity: report.Warn, Observed: "persistence mode Disabled", Expected: "Enabled (nvidia-persistenced running)",
				Why:    "without persistence the driver tears the GPU down between jobs, adding seconds of start-up and clock ramp to every run",
				Remedy: report.Manual(report.ActionRun, "sudo systemctl enable --now nvidia-persistenced   # or: sudo nvidia-smi -pm 1"),
				Source: srcSeed002}
		})
	},
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

var gpuMIG = Check{
	ID: "gpu.mig", Title: "MIG disabled on GPUs used for NCCL",
	Profiles: gpuProfiles, Needs: gpuNeeds, Applies: haveGPUs,
	Run: func(n *facts.Node) []report.Finding {
		return eachGPU(n, func(g facts.GPU) report.Finding {
			if g.MIGMode != "Enabled" {
				return ok("", "MIG "+orNA(g.MIGMode))
			}
			return report.Finding{Severity: report.Warn, Observed: "MIG Enabled", Expected: "MIG Disabled for multi-node training and NCCL benchmarks",
				Why:    "MIG instances get a slice of the GPU and no NVLink peer access, so collectives run far below the GPU's rate",
				Remedy: report.Manual(report.ActionRun, fmt.Sprintf("sudo nvidia-smi -i %d -mig 0 && sudo nvidia-smi -i %d -r", g.Index, g.Index)),
				Source: srcSeed002}
		})
	},
}

var gpuECC = Check{
	ID: "gpu.ecc", Title: "ECC enabled, no uncorrectable errors",
	Profiles: gpuProfiles, Needs: gpuNeeds, Applies: haveGPUs,
	Run: func(n *facts.Node) []report.Finding {
		return eachGPU(n, func(g facts.GPU) report.Finding {
			switch {
			case g.ECCUncorrectable != nil && *g.ECCUncorrectable > 0:
				return report.Finding{Severity: report.Warn,
					Observed: fmt.Sprintf("%d volatile uncorrectable ECC errors", *g.ECCUncorrectable), Expected: "0",
					Why:    "uncorrectable memory errors kill the jobs that touch them and precede row remapping or GPU replacement",
					Remedy: report.Manual(report.ActionInspect, fmt.Sprintf("drain the node, then `sudo nvidia-smi -i %d -r`; if errors recur, open a hardware case", g.Index)),
					Source: srcNVIDIASMI}
			case g.ECCMode == "Disabled":
				return report.Finding{Severity: report.Warn, Observed: "ECC Disabled", Expected: "ECC Enabled on data-center GPUs",
					Why:    "without ECC a flipped bit silently corrupts results instead of being corrected or reported",
					Remedy: report.Manual(report.ActionRun, fmt.Sprintf("sudo nvidia-smi -i %d -e 1 && sudo reboot", g.Index)), Source: srcSeed002}
			}
			return ok("", "ECC "+orNA(g.ECCMode))
		})
	},
}

var gpuRemap = Check{
	ID: "gpu.remapped-rows", Title: "no pending or failed row remapping",
	Profiles: gpuProfiles, Needs: gpuNeeds, Applies: haveGPUs,
	Run: func(n *facts.Node) []report.Finding {
		return eachGPU(n, func(g facts.GPU) report.Finding {
			switch {
			case g.RemapFailure == "Yes":
				return report.Finding{Severity: report.Fail, Observed: "row remapping failed", Expected: "no remapping failure",
					Why: "the GPU ran out of spare rows; its memory can no longer be trusted", Remedy: report.Manual(report.ActionInspect, "take the GPU out of service and open an RMA"), Source: srcNVIDIASMI}
			case g.RemapPending == "Yes":
				return report.Finding{Severity: report.Warn, Observed: "row remapping pending", Expected: "no pending remapping",
					Why: "a remapped row only takes effect after a GPU reset", Remedy: report.Manual(report.ActionRun, fmt.Sprintf("drain the node, then sudo nvidia-smi -i %d -r", g.Index)), Source: srcNVIDIASMI}
			case g.RemapPending != "":
				return ok("", "no remapping pending")
			}
			return report.Finding{} // no row remapping on this GPU (GB10, older boards)
		})
	},
}

// fatalXIDs are Xid codes NVIDIA documents as needing a reset or service.
var fatalXIDs = map[int]string{
	48: "double-bit ECC error", 63: "row remapping event", 64: "row remapping failure", 74: "NVLink error",
	79: "GPU has fallen off the bus", 92: "high single-bit ECC rate", 94: "contained ECC error",
	95: "uncontained ECC error", 119: "GSP RPC timeout", 120: "GSP error",
}

var gpuXID = Check{
	ID: "gpu.xid", Title: "no Xid events in the kernel log",
	Profiles: gpuProfiles, Needs: []string{facts.SrcKernelLog},
	Run: func(n *facts.Node) []report.Finding {
		if len(n.KernelLog.XIDs) == 0 {
			return []report.Finding{ok("kernel log", "no NVRM Xid lines")}
		}
		sev, codes := report.Warn, map[int]int{}
		var order []int
		for _, x := range n.KernelLog.XIDs {
			if codes[x.Code] == 0 {
				order = append(order, x.Code)
			}
			codes[x.Code]++
			if _, bad := fatalXIDs[x.Code]; bad {
				sev = report.Fail
			}
		}
		var parts []string
		for _, c := range order {
			p := fmt.Sprintf("Xid %d ×%d", c, codes[c])
			if d := fatalXIDs[c]; d != "" {
				p += " (" + d + ")"
			}
			parts = append(parts, p)
		}
		return []report.Finding{{Severity: sev, Subject: "kernel log", Observed: strings.Join(parts, ", ") + "; last: " + n.KernelLog.XIDs[len(n.KernelLog.XIDs)-1].Line,
			Expected: "no Xid events since boot", Why: "Xid events are GPU faults reported by the driver; the listed codes mean failed or corrupted work",
			Remedy: report.Manual(report.ActionInspect, "look up each code in NVIDIA's Xid catalogue; `sudo nvidia-smi -r` or a reboot clears transient faults, repeats need a hardware case"), Source: srcXIDDoc}}
	},
}

// throttleHW are clock-event reasons that mean the GPU is slowed by heat or power faults.
var throttleHW = []string{"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"}

var gpuThrottle = Check{
	ID: "gpu.throttle", Title: "no thermal or hardware clock slowdown",
	Profiles: gpuProfiles, Needs: gpuNeeds, Applies: haveGPUs,
	Run: func(n *facts.Node) []report.Finding {
		return eachGPU(n, func(g facts.GPU) report.Finding {
			var hw []string
			for _, r := range g.ThrottleReasons {
				if slices.Contains(throttleHW, r) {
					hw = append(hw, r)
				}
			}
			switch {
			case len(hw) > 0:
				return report.Finding{Severity: report.Warn, Observed: "active: " + strings.Join(hw, ", "), Expected: "no thermal or hardware slowdown",
					Why: "a slowed GPU drags every collective it takes part in down to its pace", Remedy: report.Manual(report.ActionInspect, "check cooling and power: nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"), Source: srcSeed002}
			case len(g.ThrottleReasons) > 0:
				return report.Finding{Severity: report.Info, Observed: "active: " + strings.Join(g.ThrottleReasons, ", "), Expected: "no slowdown under load", Source: srcNVIDIASMI}
			}
			return ok("", "no clock slowdown")
		})
	},
}

var gpuPeermem = Check{
	ID: "gpu.peermem", Title: "GPUDirect RDMA module where RDMA NICs are present",
	Profiles: []Profile{ProfileGPU}, Needs: []string{facts.SrcModules},
	Applies: onlyIf(func(n *facts.Node) bool { return hasGPUs(n) && hasRDMA(n) }, "no GPU with an RDMA NIC beside it"),
	Run: func(n *facts.Node) []report.Finding {
		if slices.Contains(n.Modules, "nvidia_peermem") {
			return []report.Finding{ok("node", "nvidia_peermem loaded")}
		}
		return []report.Finding{{Severity: report.Warn, Subject: "node", Observed: "nvidia_peermem not loaded", Expected: "nvidia_peermem loaded (or DMA-BUF GPUDirect with an open kernel driver)",
			Why:    "without GPUDirect RDMA NCCL copies every transfer through host memory, costing bandwidth and CPU",
			Remedy: report.Manual(report.ActionRun, "sudo modprobe nvidia_peermem && echo nvidia_peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf"), Source: srcSeed004}}
	},
}
