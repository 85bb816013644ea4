package check

import (
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

var gpuProfiles = []Profile{ProfileSpark, ProfileGPU}

var ncclVersion = Check{
	ID: "nccl.version", Title: "NCCL library version",
	Profiles: gpuProfiles, Needs: []string{facts.SrcNCCLLib},
	Run: func(n *facts.Node) []report.Finding {
		v := n.NCCL.Version
		obs := "NCCL " + v
		if v == "" {
			return []report.Finding{{Severity: report.Info, Subject: "nccl", Observed: "libnccl found at " + n.NCCL.Library + ", version unknown", Expected: "a known NCCL version"}}
		}
		if DetectProfile(n) != ProfileSpark || facts.CompareVersions(v, "2.28.3") >= 0 {
			return []report.Finding{ok("nccl", obs)}
		}
		want, _ := expect.NCCLFor(expect.SparkNCCL, n.OS.Arch, 0)
		return []report.Finding{{Severity: report.Fail, Subject: "nccl", Observed: obs, Expected: "NCCL >= 2.28.3 (" + want + " or later here)",
			Why:    "NCCL before 2.28.3 lacks DGX Spark (GB10, sm_121) support for multi-node collectives",
			Remedy: NCCLUpgrade(n.OS.Arch),
			Source: srcSeed000 + "; " + srcPlaybook}}
	},
}

var ncclSocketIfname = Check{
	ID: "nccl.socket-ifname", Title: "NCCL_SOCKET_IFNAME names existing interfaces",
	Profiles: gpuProfiles, Needs: []string{facts.SrcNetSysfs},
	Applies: ncclIsSet("NCCL_SOCKET_IFNAME"),
	Run: func(n *facts.Node) []report.Finding {
		v, where, _ := ncclSetting(n, "NCCL_SOCKET_IFNAME")
		exclude, exact, entries := ncclList(v)
		if exclude {
			return []report.Finding{ok("NCCL_SOCKET_IFNAME", v+" ("+where+", an exclusion list)")}
		}
		var missing []string
		for _, e := range entries {
			found := false
			for _, d := range n.NetDevs {
				found = found || ncclMatches(e, d.Name, exact)
			}
			if !found {
				missing = append(missing, e)
			}
		}
		if len(missing) == 0 {
			return []report.Finding{ok("NCCL_SOCKET_IFNAME", v+" ("+where+")")}
		}
		return []report.Finding{{Severity: report.Fail, Subject: "NCCL_SOCKET_IFNAME",
			Observed: "NCCL_SOCKET_IFNAME=" + v + " in the " + where + "; no interface matches " + strings.Join(missing, ", "),
			Expected: "a bootstrap interface that exists here (" + strings.Join(netdevNames(n), ", ") + ")",
			Why:      "NCCL bootstraps over this interface; naming one that does not exist (eth0 on DGX Spark) makes init fail or hang",
			Remedy:   report.Manual(report.ActionConfigure, "set NCCL_SOCKET_IFNAME in "+strings.Replace(where, "environment", "the environment", 1)+" to an interface every node has an address on in one shared subnet ("+suggestIfname(n)+" here), or remove it there; audited together with its peers (sparkrig doctor --hosts ...), the doctor names the cluster's value"),
			Source:   "DGX Spark platform notes, pitfall 6; " + srcNCCLDoc}}
	},
}

func netdevNames(n *facts.Node) []string {
	var out []string
	for _, d := range n.NetDevs {
		out = append(out, d.Name)
	}
	return out
}

// suggestIfname proposes the management interface on a Spark, else the first
// interface with an address.
// suggestIfname lists the node's candidates for a bootstrap interface: its
// interfaces with an IPv4 address, the management port first.
func suggestIfname(n *facts.Node) string {
	var out []string
	if d := n.NetDev("enP7s7"); d != nil && len(ipv4(d)) > 0 {
		out = append(out, d.Name)
	}
	for _, d := range n.NetDevs {
		if len(ipv4(&d)) > 0 && d.Name != "enP7s7" && d.Name != "lo" {
			out = append(out, d.Name)
		}
	}
	if len(out) == 0 {
		return "none has an IPv4 address yet"
	}
	return strings.Join(out, " or ")
}

var ncclIBHCA = Check{
	ID: "nccl.ib-hca", Title: "NCCL_IB_HCA names present devices and every active twin",
	Profiles: gpuProfiles, Needs: []string{facts.SrcRDMA},
	Applies: ncclIsSet("NCCL_IB_HCA"),
	Run: func(n *facts.Node) []report.Finding {
		v, where, _ := ncclSetting(n, "NCCL_IB_HCA")
		exclude, exact, entries := ncclList(v)
		if exclude {
			return []report.Finding{ok("NCCL_IB_HCA", v+" ("+where+", an exclusion list)")}
		}
		var absent, used []string
		for _, e := range entries {
			dev, _, _ := strings.Cut(e, ":")
			found := false
			for _, r := range n.RDMA {
				if ncclMatches(dev, r.Name, exact) {
					found = true
					used = append(used, r.Name)
				}
			}
			if !found {
				absent = append(absent, dev)
			}
		}
		if _, copied := hcaListedDown(n); copied {
			return nil // known.issue nccl-env-from-another-node says it, with its source
		}
		if len(absent) > 0 {
			return []report.Finding{{Severity: report.Fail, Subject: "NCCL_IB_HCA",
				Observed: "NCCL_IB_HCA=" + v + " (" + where + ") names absent " + strings.Join(absent, ", "),
				Expected: "only RDMA devices present here", Why: "NCCL finds no usable HCA and falls back to TCP sockets, about ten times slower",
				Remedy: report.Manual(report.ActionConfigure, "export NCCL_IB_HCA="+strings.Join(activeRDMA(n), ",")), Source: srcNCCLDoc}}
		}
		var skipped []string
		for _, a := range activeRDMA(n) {
			if !slices.Contains(used, a) {
				skipped = append(skipped, a)
			}
		}
		if len(skipped) > 0 && DetectProfile(n) == ProfileSpark {
			return []report.Finding{{Severity: report.Warn, Subject: "NCCL_IB_HCA",
				Observed: "NCCL_IB_HCA=" + v + " leaves out active " + strings.Join(skipped, ", "),
				Expected: "every ACTIVE RoCE device (both twins of a cabled port)",
				Why:      "NCCL only uses the listed HCAs, so leaving out a twin halves the port's bandwidth",
				Remedy:   report.Manual(report.ActionConfigure, "export NCCL_IB_HCA="+strings.Join(activeRDMA(n), ",")), Source: srcPlaybook + "; " + srcCommunity}}
		}
		return []report.Finding{ok("NCCL_IB_HCA", v+" ("+where+")")}
	},
}

func activeRDMA(n *facts.Node) []string {
	var out []string
	for _, r := range n.RDMA {
		for _, p := range r.Ports {
			if p.State == "ACTIVE" {
				out = append(out, r.Name)
				break
			}
		}
	}
	return out
}

// NCCLUpgrade is the remedy of an NCCL too old for DGX Spark: build the
// release NVIDIA's playbook names, or the first one past every known issue
// of the node's architecture (expect.NCCLFor), for sm_121.
func NCCLUpgrade(arch string) *report.Remedy {
	want, issues := expect.NCCLFor(expect.SparkNCCL, arch, 0)
	tag := "v" + want + "-1"
	text := "build NCCL " + tag + " for sm_121: git clone -b " + tag + " https://github.com/NVIDIA/nccl && cd nccl && make -j src.build NVCC_GENCODE=\"-gencode=arch=compute_121,code=sm_121\"; point LD_LIBRARY_PATH at build/lib on every node"
	if len(issues) > 0 {
		text += " (" + want + ", not " + expect.SparkNCCL + ": known issue " + strings.Join(issues, ", ") + " on " + arch + ")"
	} else {
		text += " (the release NVIDIA's DGX Spark NCCL playbook builds)"
	}
	return report.Manual(report.ActionUpgrade, text)
}
