package cluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// aspect is one fact compared across nodes.
type aspect struct {
	id, subject, title string
	sev                report.Severity
	why, fix, source   string
	// value returns the node's value, as shown, and whether it is known.
	value func(n *facts.Node) (string, bool)
	// same, when set, is what two values must share to count as equal
	// (the kernel parameters in any order); the first node's spelling of
	// each is shown.
	same func(string) string
}

// Spread is how the nodes' values of one aspect are distributed.
type Spread struct {
	Majority      string
	MajorityHosts []string
	// Outliers maps each other value to the hosts holding it.
	Outliers map[string][]string
}

// spread groups hosts by value. The majority is the value most hosts hold;
// on a tie, the value of the earliest host in input order.
func spread(hosts, values []string) Spread {
	by := map[string][]string{}
	var order []string
	for i, v := range values {
		if _, ok := by[v]; !ok {
			order = append(order, v)
		}
		by[v] = append(by[v], hosts[i])
	}
	maj := order[0]
	for _, v := range order {
		if len(by[v]) > len(by[maj]) {
			maj = v
		}
	}
	s := Spread{Majority: maj, MajorityHosts: by[maj], Outliers: map[string][]string{}}
	for _, v := range order {
		if v != maj {
			s.Outliers[v] = by[v]
		}
	}
	return s
}

// as returns the spread with each value replaced by how it is shown.
func (s Spread) as(shown map[string]string) Spread {
	out := Spread{Majority: shown[s.Majority], MajorityHosts: s.MajorityHosts, Outliers: map[string][]string{}}
	for v, hosts := range s.Outliers {
		out.Outliers[shown[v]] = hosts
	}
	return out
}

// consistency compares every aspect across the nodes that have it and
// reports one finding per aspect that differs: majority and outliers.
func consistency(nodes []*facts.Node, ring int) []report.Finding {
	var out []report.Finding
	for _, a := range aspects(nodes, ring) {
		var hosts, values []string
		shown := map[string]string{}
		for _, n := range nodes {
			if v, ok := a.value(n); ok {
				k := v
				if a.same != nil {
					k = a.same(v)
				}
				if _, seen := shown[k]; !seen {
					shown[k] = v
				}
				hosts = append(hosts, n.Host)
				values = append(values, k)
			}
		}
		if len(hosts) < 2 {
			continue
		}
		s := spread(hosts, values).as(shown)
		if len(s.Outliers) == 0 {
			out = append(out, report.Finding{ID: a.id, Severity: report.OK, Subject: a.subject, Title: a.title,
				Observed: fmt.Sprintf("%s on all %d nodes", show(s.Majority), len(hosts))})
			continue
		}
		out = append(out, report.Finding{ID: a.id, Severity: a.sev, Subject: a.subject, Title: a.title,
			Observed: describeSpread(s, len(hosts)), Expected: "the same on every node",
			Why: a.why, Remedy: report.Manual(report.ActionRun, a.fix), Source: a.source})
	}
	return out
}

// describeSpread: "spark-02: 2.27.3; majority (2 of 3): 2.28.9" or, with no
// majority, every value and its hosts.
func describeSpread(s Spread, total int) string {
	var vals []string
	for v := range s.Outliers {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	var parts []string
	for _, v := range vals {
		parts = append(parts, fmt.Sprintf("%s: %s", hostList(s.Outliers[v]), show(v)))
	}
	if 2*len(s.MajorityHosts) > total {
		return fmt.Sprintf("%s; the other %d of %d: %s", strings.Join(parts, "; "), len(s.MajorityHosts), total, show(s.Majority))
	}
	return fmt.Sprintf("%s: %s; %s", hostList(s.MajorityHosts), show(s.Majority), strings.Join(parts, "; "))
}

// hostList names hosts for a reader, runs of numbered names as ranges
// (node-[0001-5000]), so a spread over thousands of nodes stays readable.
func hostList(hosts []string) string {
	return strings.ReplaceAll(report.HostRanges(hosts), ",", ", ")
}

func show(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

func known(v string) (string, bool) { return v, v != "" }

// aspects lists what must match across nodes. Keys that only some nodes set
// (sysctls, NCCL variables, netdevs) are compared over the union of names.
func aspects(nodes []*facts.Node, ring int) []aspect {
	as := []aspect{
		{id: "cluster.driver-mismatch", subject: "NVIDIA driver", title: "same NVIDIA driver on every node", sev: report.Warn,
			why: "mixed drivers give different CUDA and NCCL behaviour between ranks", fix: "install the same driver branch on every node (DGX OS: `sudo apt update && sudo apt full-upgrade` on all, then reboot)",
			source: "seed 000 (current NVIDIA driver on every node)", value: func(n *facts.Node) (string, bool) { return known(n.Driver.Version) }},
		{id: "cluster.cuda-mismatch", subject: "CUDA", title: "same CUDA version on every node", sev: report.Warn,
			why: "ranks built against different CUDA runtimes may not load the same NCCL build", fix: "install the same driver and CUDA version on every node",
			source: "seed 000", value: func(n *facts.Node) (string, bool) { return known(n.Driver.CUDAVersion) }},
		{id: "cluster.nccl-mismatch", subject: "NCCL", title: "same NCCL version on every node", sev: report.Fail,
			why: "NCCL ranks of different versions may hang or fail during connection setup", fix: "install the same NCCL on every node: " + ncclAdvice(nodes, ring),
			source: "seed 000 (NCCL ≥ 2.28.3); NVIDIA DGX Spark playbook nccl/README.md", value: func(n *facts.Node) (string, bool) { return known(n.NCCL.Version) }},
		{id: "cluster.kernel-mismatch", subject: "kernel", title: "same kernel on every node", sev: report.Warn,
			why: "mlx5 and NVIDIA modules differ between kernels", fix: "update every node to the same kernel and reboot",
			source: "DGX Spark platform notes", value: func(n *facts.Node) (string, bool) { return known(n.OS.Kernel) }},
		{id: "cluster.os-mismatch", subject: "OS", title: "same OS release on every node", sev: report.Warn,
			why: "different releases ship different drivers, OFED and NCCL packages", fix: "bring every node to the same DGX OS / Ubuntu release",
			source: "seed 000 (Ubuntu 24.04+)", value: func(n *facts.Node) (string, bool) { return known(strings.TrimSpace(n.OS.ID + " " + n.OS.VersionID)) }},
		{id: "cluster.firmware-mismatch", subject: "ConnectX-7 firmware", title: "same ConnectX-7 firmware on every node", sev: report.Warn,
			why: "firmware differences change link training and RoCE behaviour", fix: "update the ConnectX firmware on the outliers (DGX OS ships it with its updates: `sudo apt full-upgrade`)",
			source: "DGX Spark platform notes", value: firmware},
		{id: "cluster.cmdline-mismatch", subject: "kernel command line", title: "same kernel parameters on every node", sev: report.Warn,
			why: "parameters such as kho=off or iommu settings change RDMA registration", fix: "make GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub the same everywhere, `sudo update-grub`, reboot",
			source: "DGX Spark platform notes (kho=off on 7.0 kernels)", value: cmdline, same: sortedWords},
		{id: "cluster.memlock-mismatch", subject: "memlock", title: "same locked-memory limit on every node", sev: report.Warn,
			why: "RDMA registration fails on the node with the lower limit", fix: "set `* - memlock unlimited` in /etc/security/limits.d/ on every node",
			source: "community reports (RDMA registration)", value: memlock},
		{id: "cluster.gpu-setting-mismatch", subject: "GPU model and count", title: "same GPUs on every node", sev: report.Warn,
			why: "collectives run at the pace of the slowest rank", fix: "check nvidia-smi on the outliers", value: gpuModel},
		{id: "cluster.gpu-setting-mismatch", subject: "GPU persistence mode", title: "same GPU settings on every node", sev: report.Warn,
			why: "a node without persistence mode pays driver start-up on every job", fix: "sudo nvidia-smi -pm 1 on the outliers",
			value: gpuField(func(g facts.GPU) string { return g.Persistence })},
		{id: "cluster.gpu-setting-mismatch", subject: "GPU MIG mode", title: "same GPU settings on every node", sev: report.Warn,
			why: "MIG changes what a rank can use", fix: "sudo nvidia-smi -mig 0 on the outliers (then reset the GPU)",
			value: gpuField(func(g facts.GPU) string { return g.MIGMode })},
		{id: "cluster.gpu-setting-mismatch", subject: "GPU ECC mode", title: "same GPU settings on every node", sev: report.Warn,
			why: "ECC changes usable memory and bandwidth", fix: "set the same ECC mode on every node (nvidia-smi -e)",
			value: gpuField(func(g facts.GPU) string { return g.ECCMode })},
		{id: "cluster.thp-mismatch", subject: "transparent huge pages", title: "same THP mode on every node", sev: report.Info,
			why: "different memory behaviour between ranks", fix: "set the same mode in /sys/kernel/mm/transparent_hugepage/enabled everywhere",
			value: func(n *facts.Node) (string, bool) { return known(n.Memory.THP) }},
	}
	for _, k := range unionKeys(nodes, func(n *facts.Node) map[string]string { return n.Sysctls }) {
		as = append(as, aspect{id: "cluster.sysctl-mismatch", subject: k, title: "same kernel parameter on every node", sev: report.Warn,
			why: "nodes tuned differently give uneven bootstrap and TCP throughput", fix: fmt.Sprintf("set %s to the majority value in /etc/sysctl.d/ on the outliers, then `sudo sysctl --system`", k),
			source: "DGX Spark platform notes",
			value: func(n *facts.Node) (string, bool) {
				v, ok := n.Sysctls[k]
				return strings.Join(strings.Fields(v), " "), ok && n.Has(facts.SrcSysctl)
			}})
	}
	for _, k := range unionKeys(nodes, ncclSettings) {
		if k == "NCCL_IB_HCA" {
			continue // compared as an ordered list by ibHCAOrder
		}
		as = append(as, aspect{id: "cluster.nccl-env-mismatch", subject: k, title: "same NCCL setting on every node", sev: report.Warn,
			why: "ranks configured differently negotiate different transports or fail to connect", fix: fmt.Sprintf("set %s identically on every node (the job's environment or /etc/nccl.conf)", k),
			source: "NVIDIA DGX Spark playbooks (NCCL environment)",
			value:  func(n *facts.Node) (string, bool) { return ncclSettings(n)[k], ncclKnown(n) }})
	}
	for _, dev := range dataNetDevNames(nodes) {
		as = append(as, aspect{id: "cluster.mtu-inconsistent", subject: dev, title: "same MTU on this netdev on every node", sev: report.Warn,
			why: "nodes with different MTUs on the data path drop jumbo frames between them", fix: fmt.Sprintf("set `mtu: 9000` for %s in /etc/netplan/40-cx7.yaml on every node, then `sudo netplan apply`", dev),
			source: mtuSource, value: netdevMTU(dev)})
	}
	return as
}

// ncclSettings merges /etc/nccl.conf with the environment (the environment
// wins, as in NCCL).
func ncclSettings(n *facts.Node) map[string]string {
	m := map[string]string{}
	for k, v := range n.NCCL.ConfFile {
		m[k] = v
	}
	for k, v := range n.NCCL.Env {
		if strings.HasPrefix(k, "NCCL_") {
			m[k] = v
		}
	}
	return m
}

// ncclKnown reports whether the node's NCCL settings were read: its
// environment, and /etc/nccl.conf read or known to be absent. A node whose
// sources failed is left out of the comparison instead of counting as unset.
func ncclKnown(n *facts.Node) bool {
	st := n.Sources[facts.SrcNCCLConf].Status
	return n.Has(facts.SrcEnv) && (st == "ok" || st == "missing")
}

func unionKeys(nodes []*facts.Node, f func(*facts.Node) map[string]string) []string {
	seen := map[string]bool{}
	for _, n := range nodes {
		for k := range f(n) {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dataNetDevNames(nodes []*facts.Node) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range nodes {
		for _, d := range dataNetDevs(n) {
			if !seen[d.Name] {
				seen[d.Name] = true
				out = append(out, d.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func netdevMTU(dev string) func(*facts.Node) (string, bool) {
	return func(n *facts.Node) (string, bool) {
		d := n.NetDev(dev)
		if d == nil || d.MTU == 0 {
			return "", false
		}
		return fmt.Sprint(d.MTU), true
	}
}

func firmware(n *facts.Node) (string, bool) {
	seen := map[string]bool{}
	var fws []string
	for _, r := range n.RDMA {
		if r.FWVer != "" && !seen[r.FWVer] {
			seen[r.FWVer] = true
			fws = append(fws, r.FWVer)
		}
	}
	sort.Strings(fws)
	return known(strings.Join(fws, ", "))
}

// hostSpecificParams differ between nodes by design.
var hostSpecificParams = map[string]bool{"BOOT_IMAGE": true, "root": true, "initrd": true, "resume": true, "rd.luks.uuid": true, "cryptdevice": true, "systemd.machine_id": true}

func cmdline(n *facts.Node) (string, bool) {
	var keep []string
	for _, p := range strings.Fields(n.OS.Cmdline) {
		k, _, _ := strings.Cut(p, "=")
		if !hostSpecificParams[k] {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, " "), n.OS.Cmdline != ""
}

func sortedWords(v string) string {
	w := strings.Fields(v)
	sort.Strings(w)
	return strings.Join(w, " ")
}

func memlock(n *facts.Node) (string, bool) {
	v := n.Limits.MemlockKiB
	switch {
	case v == nil:
		return "", false
	case *v < 0:
		return "unlimited", true
	}
	return fmt.Sprintf("%d KiB", *v), true
}

func gpuModel(n *facts.Node) (string, bool) {
	if !n.Has(facts.SrcNvidiaSMI) {
		return "", false
	}
	count := map[string]int{}
	var names []string
	for _, g := range n.GPUs {
		if count[g.Name] == 0 {
			names = append(names, g.Name)
		}
		count[g.Name]++
	}
	var parts []string
	for _, nm := range names {
		parts = append(parts, fmt.Sprintf("%d× %s", count[nm], nm))
	}
	if len(parts) == 0 {
		return "no GPU", true
	}
	return strings.Join(parts, ", "), true
}

func gpuField(f func(facts.GPU) string) func(*facts.Node) (string, bool) {
	return func(n *facts.Node) (string, bool) {
		seen := map[string]bool{}
		var vs []string
		for _, g := range n.GPUs {
			if v := f(g); v != "" && !seen[v] {
				seen[v] = true
				vs = append(vs, v)
			}
		}
		return known(strings.Join(vs, ", "))
	}
}

// ncclAdvice names the NCCL every node should run: the newest any node runs
// where that is past every known issue of the nodes' architectures and of a
// ring of ring nodes (0: not a ring), else the first release past them all
// (expect.NCCLFor).
func ncclAdvice(nodes []*facts.Node, ring int) string {
	want := expect.SparkNCCL
	for _, n := range nodes {
		if n.NCCL.Version != "" && facts.CompareVersions(n.NCCL.Version, want) > 0 {
			want = n.NCCL.Version
		}
	}
	for _, n := range nodes {
		want, _ = expect.NCCLFor(want, n.OS.Arch, ring)
	}
	return "NCCL " + want + " or later (built for sm_121 on DGX Spark: NVIDIA's DGX Spark NCCL playbook)"
}
