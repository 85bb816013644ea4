package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// KindsText writes channel connections by transport kind, most first:
// "NET/IB 24, P2P 8".
func KindsText(kinds map[string]int64) string {
	type kv struct {
		k string
		n int64
	}
	var all []kv
	for k, n := range kinds {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].k < all[j].k })
	parts := make([]string, len(all))
	for i, x := range all {
		parts[i] = fmt.Sprintf("%s %d", x.k, x.n)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// logSummary says in one line what an NCCL_DEBUG=INFO log shows: library,
// network (and plugin), devices, GPUDirect, channels, ranks and nodes.
func logSummary(l *results.NCCLLog) string {
	var parts []string
	if l.Version != "" {
		parts = append(parts, "NCCL "+l.Version)
	}
	switch net := l.Network; {
	case l.RDMA():
		s := "network " + net + " (RDMA)"
		if net == "" {
			s = "network IB (RDMA)"
		}
		if strings.HasPrefix(net, "IBext") {
			s = "network " + net + " (NVIDIA's IB net plugin, RDMA)"
		}
		if len(l.IBDevices) > 0 {
			var devs []string
			for _, d := range l.IBDevices {
				devs = append(devs, fmt.Sprintf("%s:%d/%s", d.Name, d.Port, d.Link))
			}
			s += " on " + strings.Join(devs, ", ")
		}
		parts = append(parts, s)
	case net == "" && len(l.IBDevices) > 0:
		var devs []string
		for _, d := range l.IBDevices {
			devs = append(devs, fmt.Sprintf("%s:%d/%s", d.Name, d.Port, d.Link))
		}
		parts = append(parts, "NET/IB devices "+strings.Join(devs, ", ")+" (the log does not say which network was chosen)")
	case net != "":
		s := "network " + net
		if net == "Socket" {
			s += " (TCP)"
			if len(l.SocketDevices) > 0 {
				s += " on " + strings.Join(l.SocketDevices, ", ")
			}
		}
		parts = append(parts, s)
	}
	if v, ok := l.Env["NCCL_IB_DISABLE"]; ok && strings.TrimSpace(v) == "1" {
		parts = append(parts, "RDMA turned off by NCCL_IB_DISABLE=1")
	}
	kinds, gdr := l.TransportKinds()
	switch {
	case gdr:
		parts = append(parts, "GPUDirect RDMA in use")
	case len(l.GDRDisabledHCAs) > 0:
		parts = append(parts, "GPUDirect RDMA disabled")
	}
	if l.Channels > 0 {
		parts = append(parts, fmt.Sprintf("%d channels", l.Channels))
	}
	if len(kinds) > 0 {
		parts = append(parts, "connections "+KindsText(kinds))
	}
	switch {
	case l.NRanks > 0 && l.NNodes > 0 && len(l.Hosts) <= l.NNodes:
		parts = append(parts, rankNodes(l.NRanks, l.NNodes))
	case l.NRanks > 0:
		parts = append(parts, fmt.Sprintf("%d rank%s", l.NRanks, plural(l.NRanks)))
	}
	if len(l.Hosts) > 0 {
		parts = append(parts, "hosts "+strings.Join(l.Hosts, ", "))
	}
	if one, why := l.SingleNode(); one {
		parts = append(parts, "one node ("+why+"): no network carries collective data")
	}
	if len(parts) == 0 {
		return ""
	}
	return "what this log shows: " + strings.Join(parts, "; ")
}

// flags reports what the NCCL log shows on its own, whatever the numbers.
func (a *analysis) flags(l *results.NCCLLog) {
	if s := logSummary(l); s != "" {
		a.note("%s", s)
	}
	kinds, gdr := l.TransportKinds()
	multi := l.NNodes > 1 || len(l.Hosts) > 1
	spark := a.res.Platform == "dgx-spark"
	// a channel via NET/ only exists between nodes, so NET/Socket channels
	// are inter-node traffic over TCP whatever the host names say
	ibOff := strings.TrimSpace(l.Env["NCCL_IB_DISABLE"]) == "1"
	// NCCL brings NET/Socket up only when no RDMA device answered: a
	// "NET/Socket : Using" line without NET/IB devices is the socket network
	socketOnly := len(l.SocketDevices) > 0 && len(l.IBDevices) == 0 && !l.RDMA() && l.Network == ""
	if kinds["NET/Socket"] > 0 || l.Network == "Socket" && (multi || len(l.IBDevices) > 0 || ibOff) || socketOnly && multi {
		ev := fmt.Sprintf("'Using network %s'", l.Network)
		if n := kinds["NET/Socket"]; n > 0 {
			ev = fmt.Sprintf("%d channel connections via NET/Socket", n)
		} else if socketOnly {
			ev = "'NET/Socket : Using " + strings.Join(l.SocketDevices, " ") + "' and no NET/IB device"
		}
		for _, n := range l.NetNotes {
			if strings.Contains(n, "No device found") || !ibOff && strings.Contains(n, "Plugin") {
				ev += "; \"" + n + "\""
				break
			}
		}
		fix := "find why no RDMA network came up, most likely first: the RDMA devices are not visible to the job (ibv_devices lists none: /dev/infiniband not passed into the container); the fabric is reached only through a net plugin the job did not load (aws-ofi-nccl for EFA or Slingshot, the GPUDirect-TCPX/TCPXO plugin on GKE: NCCL_NET_PLUGIN or the library path); the node has no RDMA or GPU network provisioned (an instance without EFA, a node pool without its GPU networks). Then list the devices in NCCL_IB_HCA"
		if v, ok := l.Env["NCCL_IB_DISABLE"]; ok && strings.TrimSpace(v) == "1" {
			ev += "; NCCL_IB_DISABLE=1 set by the environment turned the RDMA transport off"
			fix = "unset NCCL_IB_DISABLE (the job's environment, a container image, or /etc/nccl.conf)"
		}
		if one, why := l.SingleNode(); one && kinds["NET/Socket"] == 0 {
			// the job's own lines say no network carries its data: the
			// choice matters only once it spans nodes
			a.note("NCCL chose the socket network (%s), which this job does not use: %s; across nodes it would move data over TCP at about 1/10 of RDMA's bandwidth; before running across nodes: %s", ev, why, fix)
		} else {
			a.flag(report.Fail, "nccl.net-socket", "NCCL moves data over TCP sockets (NET/Socket), not RDMA: expect about 1/10 of the bandwidth", ev,
				fix, "docs/dgx-spark.md pitfall 13")
		}
		for _, d := range l.SocketDevices {
			if strings.HasPrefix(d, "enP7s7") {
				a.flag(report.Fail, "spark.socket-on-management-port", "NCCL's data goes over enP7s7, DGX Spark's 10 GbE management port, not the 200 GbE ConnectX-7 link", "NET/Socket : Using "+d,
					"make the ConnectX-7 RoCE devices visible to the job and list them in NCCL_IB_HCA; NCCL_SOCKET_IFNAME=enP7s7 selects the bootstrap interface only",
					"docs/dgx-spark.md (management NIC enP7s7, 10 GbE); https://github.com/NVIDIA/dgx-spark-playbooks/issues/102")
				break
			}
		}
	}
	usesIB := l.RDMA()
	a.gdr(l, usesIB, multi, gdr)
	// a channel via NET/IB only joins two nodes, so one host's lines that
	// show one are enough to judge the twins its job uses
	if spark && usesIB && (multi || kinds["NET/IB"] > 0) {
		// evidence against: a second HCA named by the GPUDirect lines
		named := map[string]bool{}
		for _, h := range append(slices.Clone(l.GDREnabledHCAs), l.GDRDisabledHCAs...) {
			named[h] = true
		}
		if used := l.NetDevicesUsed(); len(l.IBDevices) == 1 || len(l.IBDevices) == 0 && len(used) == 1 && len(named) <= 1 {
			a.flag(report.Warn, "spark.one-twin", "only one PCIe twin of the ConnectX-7 port is in use: about half the port's bandwidth", ibDevList(l),
				"address both twins (different subnets) and set NCCL_IB_HCA to both, same order on every node", "docs/dgx-spark.md pitfall 1")
		}
		for _, g := range l.GIDs {
			// The RoCE v2 IPv4 GID may sit at any index (3 on one node, 4 on
			// another); indexes 0 and 1 are the link-local GIDs.
			if g.GIDIndex == 0 || g.GIDIndex == 1 {
				a.flag(report.Warn, "spark.roce-gid", fmt.Sprintf("NCCL device %d uses GID index %d, a link-local GID that does not route between subnets: its netdev likely has no IPv4 address, or NCCL_IB_GID_INDEX points there", g.Dev, g.GIDIndex),
					fmt.Sprintf("NET/IB: NCCL Dev %d ... GID %d", g.Dev, g.GIDIndex),
					"give every twin an IPv4 address on its own subnet, and leave NCCL_IB_GID_INDEX unset (NCCL 2.21 and later pick the RoCE v2 IPv4 GID on each device)",
					"docs/dgx-spark.md (NCCL_IB_GID_INDEX: the index differs between nodes; an empty value is 0)")
			}
		}
	}
	for _, v := range []struct{ env, what string }{{"NCCL_P2P_DISABLE", "P2P"}, {"NCCL_SHM_DISABLE", "shared-memory"}} {
		if l.Env[v.env] == "1" {
			a.flag(report.Warn, "nccl."+strings.ToLower(strings.TrimPrefix(v.env, "NCCL_")), fmt.Sprintf("%s transport disabled by %s=1: intra-node traffic takes a slower path", v.what, v.env),
				v.env+"=1", "unset "+v.env, "seed 004 (NCCL_P2P_DISABLE / NCCL_SHM_DISABLE slow intra-node traffic)")
		}
	}
	if l.P2PRefused > 0 {
		a.flag(report.Warn, "nccl.p2p-refused", "NCCL could not enable GPU peer-to-peer and falls back to shared memory", fmt.Sprintf("'Could not enable P2P' x%d; connections %s", l.P2PRefused, KindsText(kinds)),
			"check `nvidia-smi topo -m`, IOMMU/ACS settings, and that both GPUs are visible to one process", "NCCL INFO 'Could not enable P2P'")
	}
	if need := a.set.NCCLMin(a.res.Platform); need != "" && l.Version != "" && !expect.VersionAtLeast(l.Version, need) {
		a.flag(report.Warn, "nccl.too-old", fmt.Sprintf("NCCL %s is older than %s, the minimum for %s", l.Version, need, a.res.Platform), "NCCL version "+l.Version,
			"install NCCL >= "+need+" ("+sparkNCCLRelease()+") and rebuild nccl-tests against it", "seed 000")
	}
	if l.WarnCount > 0 {
		a.warnClasses(l)
	}
	a.startupCauses(l)
}

// warnClasses names the WARN lines by where NCCL raises them, from the
// catalogue of NCCL's own WARN formats: a message no signature knows is
// still told by its class.
func (a *analysis) warnClasses(l *results.NCCLLog) {
	msg := fmt.Sprintf("NCCL printed %d WARN line%s", l.WarnCount, plural(int(l.WarnCount)))
	ev, fix, src := l.Warnings[0], "read the first WARN line: later ones usually follow from it", "NCCL_DEBUG output"
	cat, err := expect.NCCLWarns()
	if err != nil || len(l.Warnings) == 0 {
		a.flag(report.Warn, "nccl.warn", msg, ev, fix, src)
		return
	}
	counts := map[string]int{}
	var first *expect.NCCLWarn
	firstClass := ""
	adjusted := 0
	for _, w := range l.Warnings {
		class := "unknown"
		if f, ok := cat.Match(w); ok && !looseOtherClass(f, w) {
			class = f.Class
			if first == nil {
				first = f
			}
			if settingAdjusted(f, w) {
				adjusted++
			}
		} else if c := expect.NCCLWarnClassOf(w); c != "" {
			class = c
		}
		if firstClass == "" {
			firstClass = class
		}
		counts[class]++
	}
	var parts []string
	for _, c := range append(slices.Clone(expect.NCCLWarnClasses), "unknown") {
		if n := counts[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	msg += " (by where NCCL raises them, of the first " + fmt.Sprint(len(l.Warnings)) + ": " + strings.Join(parts, ", ") + ")"
	if firstClass != "unknown" {
		msg += "; the first comes from " + expect.NCCLWarnClassText[firstClass]
		fix = warnClassFix[firstClass]
	}
	if first != nil {
		src = fmt.Sprintf("NCCL source: %s (format %q, releases %s to %s)", first.Where, first.Format, first.First, first.Last)
	}
	sev := report.Warn
	if adjusted == len(l.Warnings) && int(l.WarnCount) == len(l.Warnings) {
		sev = report.Info
		msg += "; each says NCCL adjusted a setting, or found an empty one, and went on: nothing failed"
		fix = "correct or unset the setting the line names, for a quiet log; the run used NCCL's adjusted value"
	}
	a.flag(sev, "nccl.warn", msg, ev, fix, src)
}

// adjustedFormats are WARN formats after which NCCL clamps the setting and
// goes on (NVIDIA/nccl src/graph/tuning.cc getNthreads, v2.18.1-1 to
// v2.26.6-1: "nt = max" / "nt = min" after the WARN;
// src/transport/net_socket.cc: "setting to %d").
var adjustedFormats = map[string]bool{
	"Invalid %s %d (must be a multiple of %d)": true,
	"Invalid %s %d (maximum %d).":              true,
	"Invalid %s %d (minimum %d).":              true,
	"NET/Socket : NCCL_SOCKET_NTHREADS is greater than the maximum allowed, setting to %d": true,
}

// settingAdjusted tells a WARN line after which NCCL went on as if the
// setting were valid: a clamped value, or NCCL_TOPO_FILE set to an empty
// string (xml.cc prints the empty name: "topology file  : "), which names
// no file to describe the topology.
func settingAdjusted(f *expect.NCCLWarn, w string) bool {
	if adjustedFormats[f.Format] {
		return true
	}
	return f.Format == "Could not open XML topology file %s : %s" && strings.Contains(w, "topology file  : ")
}

// looseOtherClass: a catalogue format that matched w mostly through its
// conversions ("Failed to open %s", GDRCopy's, over "Failed to open
// libibverbs.so[.1]") while w names another subsystem than the format's
// class: the subsystem named tells where w comes from.
func looseOtherClass(f *expect.NCCLWarn, w string) bool {
	c := expect.NCCLWarnClassOf(w)
	return f.MostlyArgs(w) && c != "" && c != f.Class
}

// sparkNCCLRelease names the NCCL release a remedy recommends on DGX
// Spark: the one NVIDIA's DGX Spark NCCL playbook builds, unless a known
// issue on aarch64 rules it out, and says which it follows.
func sparkNCCLRelease() string {
	want, issues := expect.NCCLFor(expect.SparkNCCL, "aarch64", 0)
	if len(issues) > 0 {
		return "v" + want + "-1 or later for DGX Spark, not the playbook's v" + expect.SparkNCCL + "-1: known issue " + strings.Join(issues, ", ")
	}
	return "v" + want + "-1 for DGX Spark, the release NVIDIA's DGX Spark NCCL playbook builds"
}

// warnClassFix is the first thing to check for a WARN of each class.
var warnClassFix = map[string]string{
	"net-ib":           "check the RDMA devices NCCL chose (NET/IB : Using …) are up and reach the peer: ibv_devinfo, the GID NCCL uses (show_gids), NCCL_IB_HCA",
	"socket-bootstrap": "check that every rank can reach the others over the interface NCCL_SOCKET_IFNAME selects (ip addr, ping, firewall) and that no rank died first",
	"proxy":            "look for the first failure of another kind before it: the proxy reports errors of the network or transport it drives",
	"transport":        "check the transports the ranks use (P2P/SHM/NET) and the NCCL_*_DISABLE settings",
	"cuda":             "check the GPU, driver and CUDA versions (nvidia-smi, dmesg for Xid) and the memory the job uses",
	"resource":         "check the host's resources: /dev/shm size (containers: --shm-size or --ipc=host), memlock and open-file limits",
	"init-config":      "check NCCL's environment variables and the topology it detected (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,GRAPH)",
}

// gdr judges GPUDirect RDMA per platform. GB10 has none: NCCL stages
// through host memory there, as the platform expects. On a discrete-GPU
// server NCCL's own "GPU Direct RDMA Disabled for HCA" line says the NIC
// path it set up cannot reach GPU memory (nvidia-peermem not loaded or not
// detected), whatever the number of hosts the log shows; a ring's "GDR 0"
// says so once the job is multi-node.
func (a *analysis) gdr(l *results.NCCLLog, usesIB, multi, gdr bool) {
	spark := a.res.Platform == "dgx-spark"
	disabled := len(l.GDRDisabledHCAs) > 0
	ringOff := l.RingGDR != nil && *l.RingGDR == 0
	on, off := l.GDRHosts()
	switch {
	case gdr && len(on) > 0 && len(off) > 0 && !spark && strings.TrimSpace(l.Env["NCCL_NET_GDR_LEVEL"]) == "":
		a.gdrSomeHosts(on, off)
	case gdr:
		return // a channel via NET/IB/…/GDRDMA: in use
	case spark && (usesIB && multi || disabled):
		a.flag(report.Info, "nccl.gdr-unavailable-gb10", "GPUDirect RDMA is off, as expected on GB10 (DGX Spark class): NCCL stages through host memory", gdrEvidence(l), "", "docs/dgx-spark.md (GB10 has no GPUDirect RDMA)")
	case !spark && (disabled || ringOff && usesIB && multi):
		ev := gdrEvidence(l)
		if a.res.Platform == "" {
			ev += "; no GB10 in the log: a discrete-GPU server, where GPUDirect RDMA is expected"
		}
		a.flag(report.Warn, "nccl.gdr-off", "GPUDirect RDMA is not in use: NIC traffic is staged through host memory", ev,
			"load nvidia-peermem (modprobe nvidia-peermem; check /sys/kernel/mm/memory_peers/nv_mem/version) or use a dma-buf capable driver and kernel; NCCL 2.22.3 and older look only for nv_peer_mem, so use a newer NCCL where nvidia-peermem replaced it",
			"NCCL GDRDMA transport; https://github.com/NVIDIA/nccl/issues/1676")
	}
}

// gdrSomeHosts: GPUDirect RDMA is in use on some hosts and not on
// others. A receive connection needs only GDR write, which NCCL turns on
// wherever the NIC and the GPU support peer memory within
// NCCL_NET_GDR_LEVEL (src/graph/paths.cc ncclTopoCheckGdr, read=0; sends
// also need GDR read), so a host whose every NET receive goes without it
// while other hosts' connections use it lacks peer memory (nvidia-peermem
// not loaded) or places its NICs farther from its GPUs.
func (a *analysis) gdrSomeHosts(on, off []string) {
	a.flag(report.Warn, "nccl.gdr-off",
		fmt.Sprintf("GPUDirect RDMA is off on %s while %s use%s it: NIC traffic there is staged through host memory", listHosts(off), listHosts(on), map[bool]string{true: "s", false: ""}[len(on) == 1]),
		"channels via NET/…/GDRDMA from "+listHosts(on)+"; every NET receive channel of "+listHosts(off)+" without GDRDMA",
		"on "+listHosts(off)+": load nvidia-peermem (modprobe nvidia-peermem; check /sys/kernel/mm/memory_peers/nv_mem/version) or use a dma-buf capable driver and kernel, and compare nvidia-smi topo -m with a host that uses GPUDirect RDMA",
		"NVIDIA/nccl src/transport/net.cc and src/graph/paths.cc v2.18.6-1 (ncclTopoCheckGdr: receives with read=0, sends with read=1); https://github.com/NVIDIA/nccl/issues/1676")
}

// listHosts names up to four hosts and counts the rest.
func listHosts(h []string) string {
	if len(h) <= 4 {
		return strings.Join(h, ", ")
	}
	return strings.Join(h[:4], ", ") + fmt.Sprintf(" and %d more", len(h)-4)
}

func (a *analysis) flag(sev report.Severity, id, msg, ev, fix, src string) {
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
