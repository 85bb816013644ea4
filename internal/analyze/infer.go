package analyze

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/results"
)

// sparkRoCE matches the names of DGX Spark's four ConnectX-7 RoCE functions.
var sparkRoCE = regexp.MustCompile(`^roce(p1s0f[01]|P2p1s0f[01])$`)

// infer fills platform and topology from the options or the input.
func (a *analysis) infer(p Parsed, opt Options) {
	r := &a.res
	plat, pev := inferPlatform(p)
	eff := plat
	if opt.Platform != "" {
		eff = opt.Platform
	}
	topo, tev := inferTopology(p, eff)
	r.Platform, r.Topology = opt.Platform, opt.Topology
	if r.Platform == "" && plat != "" {
		r.Platform, r.PlatformInferred, r.PlatformEvidence = plat, true, pev
	}
	if r.Topology == "" && topo != "" {
		r.Topology, r.TopologyInferred, r.TopologyEvidence = topo, true, tev
	}
}

func gpuPlatform(name string) string { return platform.FromGPUName(name) }

func inferPlatform(p Parsed) (string, string) {
	if p.NCCL != nil {
		for _, t := range p.NCCL.Tables {
			for _, d := range t.Devices {
				if pl := gpuPlatform(d.Name); pl != "" {
					return pl, fmt.Sprintf("GPU %q in the device lines", d.Name)
				}
			}
		}
		for _, d := range p.NCCL.Log.IBDevices {
			if sparkRoCE.MatchString(d.Name) {
				return "dgx-spark", fmt.Sprintf("RoCE device %s is one of DGX Spark's ConnectX-7 twins", d.Name)
			}
		}
		l := &p.NCCL.Log
		for _, d := range l.SocketDevices {
			if strings.HasPrefix(d, "enP7s7:") {
				return "dgx-spark", "NCCL's socket interface enP7s7 is DGX Spark's 10 GbE management port"
			}
		}
		for _, name := range append(append([]string(nil), l.GDREnabledHCAs...), l.GDRDisabledHCAs...) {
			if sparkRoCE.MatchString(name) {
				return "dgx-spark", fmt.Sprintf("NCCL names HCA %s, one of DGX Spark's ConnectX-7 twins", name)
			}
		}
	}
	for _, r := range p.Perftest {
		if sparkRoCE.MatchString(r.Device) {
			return "dgx-spark", fmt.Sprintf("RoCE device %s is one of DGX Spark's ConnectX-7 twins", r.Device)
		}
	}
	if p.NVBandwidth != nil {
		for _, d := range p.NVBandwidth.Devices {
			if pl := gpuPlatform(d); pl != "" {
				return pl, fmt.Sprintf("%q in the device list", d)
			}
		}
	}
	return "", ""
}

func inferTopology(p Parsed, platform string) (string, string) {
	switch {
	case p.NCCL != nil:
		nodes, how := 0, ""
		for _, t := range p.NCCL.Tables {
			if t.Nodes > 0 {
				devHosts := map[string]bool{}
				for _, d := range t.Devices {
					devHosts[d.Host] = true
				}
				nodes, how = t.Nodes, fmt.Sprintf("%d host%s in the device lines", t.Nodes, plural(t.Nodes))
				if len(devHosts) < t.Nodes {
					how = fmt.Sprintf("%d hosts in NCCL's lines (the device lines name %d)", t.Nodes, len(devHosts))
				}
				break
			}
		}
		if nodes == 0 && p.NCCL.Log.NNodes > 0 {
			nodes, how = p.NCCL.Log.NNodes, fmt.Sprintf("NCCL reports nNodes %d", p.NCCL.Log.NNodes)
		}
		return topologyFor(nodes, how, platform, &p.NCCL.Log)
	case (p.Perftest != nil || p.Iperf3 != nil) && platform == "dgx-spark":
		return "two-nodes-one-cable", "a point-to-point test between two hosts; the cable count is not in the output, one cable assumed"
	case p.NVBandwidth != nil:
		return "single-node", "nvbandwidth measures inside one node"
	}
	return "", ""
}

func topologyFor(nodes int, how, platform string, log *results.NCCLLog) (string, string) {
	switch {
	case nodes == 1:
		return "single-node", how
	case nodes >= 2 && platform != "dgx-spark":
		return "switch", how + "; nodes other than DGX Spark are taken to meet at a switch"
	case nodes == 2:
		ports := map[string]bool{}
		for _, d := range log.IBDevices {
			if sparkRoCE.MatchString(d.Name) {
				ports[d.Name[len(d.Name)-1:]] = true
			}
		}
		if len(ports) == 2 {
			return "two-nodes-two-cables", how + "; NCCL uses RoCE devices of both ports"
		}
		if len(ports) == 1 {
			return "two-nodes-one-cable", how + "; NCCL uses RoCE devices of one port"
		}
		return "two-nodes-one-cable", how + "; the cable count is not in the output, one cable assumed"
	case nodes == 3 && platform == "dgx-spark":
		return "three-node-ring", how + "; three DGX Spark without a switch are cabled as a ring"
	case nodes >= 3:
		return "switch", how
	}
	return "", ""
}
