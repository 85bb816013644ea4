package analyze

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// rankedFlag is a flag with the weight it is ranked by among the error
// signatures found (their weights, internal/expect/signatures.yaml: 1 for
// a message that names its cause, less for one that follows another
// failure).
type rankedFlag struct {
	weight float64
	flag   report.AnalysisFlag
}

// cause records a cause the startup lines show, ranked with the error
// signatures by its weight.
func (a *analysis) cause(weight float64, sev report.Severity, id, msg, ev, fix, src string) {
	a.causes = append(a.causes, rankedFlag{weight, report.AnalysisFlag{ID: id, Severity: sev, Message: msg, Evidence: ev, Fix: fix, Source: src}})
}

// Weights of the startup-line causes, on the signatures' scale: above the
// failures they explain (a socket connect abort, 1.0; a missing verbs
// library, 0.8), below messages that name a cause of their own (1.1 and up).
const (
	weightUnroutableIf   = 1.05
	weightPeerOtherNet   = 1.05
	weightP2PSHMDisabled = 1.05
	weightGraphFile      = 1.05
	weightIBNoDevice     = 1.0
	weightNCCLOne        = 1.1
	weightSocketSpread   = 1.05
	weightSharedGPU      = 1.15
	weightBootstrapIPoIB = 1.0
	weightAllGather4G    = 1.1
	weightHostClash      = 1.1
)

// startupCauses reads causes from NCCL's startup lines: interfaces in its
// socket lists that cannot reach another node, a peer address on no
// network of this rank, P2P and SHM both turned off on one node.
func (a *analysis) startupCauses(l *results.NCCLLog) {
	a.graphFileSet(l)
	a.ibRequestedNoDevice(l)
	a.ofiTCPProvider(l)
	a.sharedGPU(l)
	a.bootstrapIPoIB(l)
	a.hostHashClash(l)
	a.ibGIDIndex(l)
	a.ibMTUMismatch(l)
	a.ibMixedLinkLayers(l)
	a.commIDUnreachable(l)
	kinds, _ := l.TransportKinds()
	net := int64(0)
	for k, n := range kinds {
		if strings.HasPrefix(k, "NET/") {
			net += n
		}
	}
	bothOff := l.Env["NCCL_P2P_DISABLE"] == "1" && l.Env["NCCL_SHM_DISABLE"] == "1"
	oneHost := l.NNodes <= 1 && len(l.Hosts) <= 1
	if bothOff && oneHost && (net > 0 || l.Network != "") {
		a.p2pSHMDisabled(l, net)
		return
	}
	inter := net > 0 || l.NNodes > 1 || len(l.Hosts) > 1
	if ifs := socketInterfaces(l); inter && len(ifs) > 0 {
		a.unroutableInterfaces(ifs)
	} else if inter {
		a.socketSpread(l)
	}
	a.peerOtherNetwork(l)
	a.peerRefuses(l)
	a.netPluginMissing(l)
}

// minSpreadIfs is the number of socket devices from which NCCL's spread
// over interfaces is read as unfiltered: a GPU node has one or two
// Ethernet ports that reach the other nodes, while a container host adds
// a bridge per network and a veth per container.
const minSpreadIfs = 3

// socketSpread: channel lines "via NET/Socket/<n>" name three or more
// socket devices, and NCCL's socket transport has one
// device per interface ncclFindInterfaces returns. With NCCL_SOCKET_IFNAME
// unset that is every interface that is up except docker*, lo and virbr*
// (src/misc/socket.cc), so bridges (br-*), veths and ports that reach no
// other node are striped in and connections over them fail or hang.
// Against: NCCL_SOCKET_IFNAME set (the user chose the list), fewer than
// three devices, the socket list itself printed (unroutableInterfaces
// judges the names then).
func (a *analysis) socketSpread(l *results.NCCLLog) {
	if strings.TrimSpace(l.Env["NCCL_SOCKET_IFNAME"]) != "" {
		return
	}
	devs := l.NetDevices("Socket")
	if len(devs) < minSpreadIfs {
		return
	}
	names := make([]string, len(devs))
	for i, n := range devs {
		names[i] = fmt.Sprintf("NET/Socket/%d", n)
	}
	a.cause(weightSocketSpread, report.Fail, "nccl.socket-many-ifs",
		fmt.Sprintf("NCCL's socket transport uses %d interfaces: with NCCL_SOCKET_IFNAME unset it takes every interface that is up except docker*, lo and virbr*, so container bridges (br-*), veths and ports that reach no other node are included, and connections over them fail or hang", len(devs)),
		"channel connections via "+strings.Join(names, ", ")+"; NCCL_SOCKET_IFNAME not set in the lines read",
		"set NCCL_SOCKET_IFNAME to the interface that routes between the nodes (ip -br addr on each node) on every node, or exclude the virtual ones (^docker,lo,veth,br-)",
		"https://github.com/NVIDIA/nccl/issues/697; NVIDIA/nccl src/transport/net_socket.cc and src/misc/socket.cc @5067397c (one socket device per interface ncclFindInterfaces returns)")
}

// p2pSHMDisabled ranks NCCL_P2P_DISABLE=1 with NCCL_SHM_DISABLE=1 above
// the NET fallback they force: with both off, GPUs of one node talk
// through the network transport (NET/Socket without RDMA).
func (a *analysis) p2pSHMDisabled(l *results.NCCLLog, net int64) {
	ev := "NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1"
	if net > 0 {
		ev += fmt.Sprintf("; %d channel connections via NET on one host", net)
	} else {
		ev += "; 'Using network " + l.Network + "' on one host"
	}
	a.cause(weightP2PSHMDisabled, report.Fail, "nccl.p2p-shm-disabled",
		"P2P and shared memory are both turned off, so GPUs of one node talk through the network transport (over TCP when there is no RDMA): a fraction of the intra-node bandwidth",
		ev, "unset NCCL_P2P_DISABLE and NCCL_SHM_DISABLE (the job's environment, a container image, /etc/nccl.conf); set NCCL_NET_DISABLE_INTRA=1 to make NCCL fail instead of falling back",
		"https://github.com/NVIDIA/nccl/issues/406; https://github.com/NVIDIA/nccl/pull/602")
	for i := range a.res.Flags {
		if f := &a.res.Flags[i]; f.ID == "nccl.net-socket" {
			f.Severity = report.Warn
			f.Message += "; here because P2P and SHM are off (see nccl.p2p-shm-disabled), not because the network lacks RDMA"
		}
	}
}

// socketIf is one interface of an NCCL list, "ens5:172.31.0.137".
type socketIf struct{ name, addr string }

// socketInterfaces lists the interfaces of the bootstrap and NET/Socket
// lines, each once.
func socketInterfaces(l *results.NCCLLog) []socketIf {
	var out []socketIf
	seen := map[string]bool{}
	add := func(f string) {
		if i := strings.Index(f, "]"); strings.HasPrefix(f, "[") && i > 0 {
			f = f[i+1:]
		}
		if i := strings.LastIndex(f, "<"); i > 0 {
			f = f[:i]
		}
		name, addr, ok := strings.Cut(f, ":")
		if !ok || name == "" || seen[f] {
			return
		}
		seen[f] = true
		out = append(out, socketIf{name, addr})
	}
	for _, f := range strings.Fields(l.Bootstrap) {
		add(f)
	}
	for _, f := range l.SocketDevices {
		add(f)
	}
	return out
}

// virtualIfPrefixes name host-local virtual interfaces: a container's
// veth end, Docker's and libvirt's bridges, CNI bridges and overlays.
// NCCL itself skips docker and virbr only when NCCL_SOCKET_IFNAME is
// unset (src/misc/socket.cc, ncclFindInterfaces).
var virtualIfPrefixes = []string{"veth", "docker", "br-", "virbr", "cni", "flannel", "cali", "lxc", "vxlan"}

// unroutable says why an interface cannot carry traffic to another node,
// or "" when nothing in its name or address says so.
func unroutable(s socketIf) string {
	for _, p := range virtualIfPrefixes {
		if strings.HasPrefix(s.name, p) {
			return "a host-local virtual interface (" + p + "*)"
		}
	}
	addr := s.addr
	if i := strings.Index(addr, "%"); i > 0 {
		addr = addr[:i]
	}
	if ip, err := netip.ParseAddr(addr); err == nil && ip.IsLinkLocalUnicast() {
		return "a link-local address only"
	}
	return ""
}

// unroutableInterfaces flags socket lists that include an interface no
// other node can reach: NCCL spreads its socket connections over every
// interface it lists, and those through a veth or a link-local address
// fail or hang.
func (a *analysis) unroutableInterfaces(ifs []socketIf) {
	var bad []string
	for _, s := range ifs {
		if why := unroutable(s); why != "" {
			bad = append(bad, s.name+":"+s.addr+" ("+why+")")
		}
	}
	if len(bad) == 0 {
		return
	}
	var good []string
	for _, s := range ifs {
		if unroutable(s) == "" {
			good = append(good, s.name)
		}
	}
	fix := "set NCCL_SOCKET_IFNAME to the interface that routes between the nodes"
	if len(good) > 0 {
		fix += " (here " + strings.Join(good, " or ") + ")"
	}
	fix += " on every node; with containers, also exclude their veth and bridge interfaces (^veth,docker,br-)"
	a.cause(weightUnroutableIf, report.Fail, "nccl.socket-unroutable-if",
		fmt.Sprintf("NCCL lists %d socket interface%s that no other node can reach; connections it opens over them fail or hang", len(bad), plural(len(bad))),
		strings.Join(bad, "; "), fix,
		"https://github.com/NVIDIA/nccl/issues/697; https://github.com/pytorch/pytorch/issues/68893; NVIDIA/nccl src/misc/socket.cc @5067397c (ncclFindInterfaces)")
}

// connectTo is the address of NCCL's "Connect to A<port> failed" WARN.
var connectTo = regexp.MustCompile(`Connect to ([0-9]{1,3}(?:\.[0-9]{1,3}){3})<\d+>`)

// peerOtherNetwork flags a connection NCCL could not make to an address
// outside every network of this rank's own interfaces: the peer advertised
// an address this rank cannot reach, typically a container's bridge
// address (Docker's default bridge is 172.17.0.0/16, its gateway .1).
// The logs carry no netmasks, so a /16 prefix stands for "the same network".
func (a *analysis) peerOtherNetwork(l *results.NCCLLog) {
	var local []netip.Addr
	for _, s := range socketInterfaces(l) {
		if ip, err := netip.ParseAddr(s.addr); err == nil && ip.Is4() {
			local = append(local, ip)
		}
	}
	if oob := socketInterfaces(&results.NCCLLog{Bootstrap: l.OOB}); len(oob) > 0 {
		if ip, err := netip.ParseAddr(oob[0].addr); err == nil && ip.Is4() {
			local = append(local, ip)
		}
	}
	if len(local) == 0 {
		return
	}
	for _, w := range l.Warnings {
		m := connectTo.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		peer, err := netip.ParseAddr(m[1])
		if err != nil || peer.IsLoopback() {
			continue // a loopback peer is error.socket-loopback's
		}
		near := false
		for _, ip := range local {
			if p, _ := ip.Prefix(16); p.Contains(peer) {
				near = true
			}
		}
		if near {
			continue
		}
		why := "another network than any interface of this rank"
		if p := netip.MustParsePrefix("172.17.0.0/16"); p.Contains(peer) || peer.As4()[3] == 1 && peer.IsPrivate() {
			why += "; it looks like a container bridge address (Docker's default bridge is 172.17.0.0/16, a bridge gateway ends in .1)"
		}
		var locals []string
		for _, ip := range local {
			locals = append(locals, ip.String())
		}
		a.cause(weightPeerOtherNet, report.Fail, "nccl.peer-other-network",
			"a peer advertised "+peer.String()+", on "+why+": this rank cannot reach the address it was given",
			strings.TrimSpace(w)+"; this rank's addresses: "+strings.Join(locals, ", "),
			"make every rank advertise a routable address: NCCL_SOCKET_IFNAME set to the inter-node interface on every node, and containers on the host network (--network=host) or with an address routed between the nodes",
			"https://github.com/gpustack/gpustack/issues/2275")
		return
	}
}

// separateTests: the headers and footers show several processes that each
// ran a test of their own. For: "Rank 0" printed by two hosts in one
// header block (an MPI-launched test prints its header and its rank list
// once, from rank 0), "# nThread" headers printed one after another with
// only comment lines between (processes starting a test each), or two or
// more footers with no table between them whose values agree within half
// (the same single-node test run once per process). Against: one footer,
// footers of tables of their own, footers far apart (different tests), a
// header repeated after device lines (a run again).
func separateTests(l results.NCCLLaunch) bool {
	if l.RankZeroHosts > 1 || l.RankZeroPIDs > 1 || l.StackedHeaders > 0 {
		return true
	}
	return l.StrayFooters > 1 && l.StrayMax <= 1.5*l.StrayMin
}

// launchCauses reads causes from how nccl-tests was built and started.
func (a *analysis) launchCauses(o *results.NCCLOutput) {
	a.separateTestsCause(o)
	a.ncclOneCause(o.Launch.CompiledNCCL)
	a.allGatherOver4G(o)
}

// allGather4GFix is the first NCCL release with commit c38f174 ("Fix
// Allgather operations above 4G with multiple GPUs per process").
const allGather4GFix = "2.6.4"

// allGatherOver4G: all_gather with several GPUs per process returns
// wrong data from 4 GiB on in NCCL before 2.6.4 (the direct offsets of
// its low-level primitives were 32-bit). For: an all_gather table whose
// wrong elements all sit at sizes of 4 GiB or more, none below, and more
// than one GPU per process (the header's nGpus or the command's -g).
// Against: one GPU per process or not told, wrong elements below 4 GiB
// (another cause), an NCCL release with the fix.
func (a *analysis) allGatherOver4G(o *results.NCCLOutput) {
	const four = int64(1) << 32
	for _, t := range o.Tables {
		if t.Collective != "all_gather" || t.NGpus < 2 {
			continue
		}
		v := t.NCCLVersion
		if v == "" {
			v = o.Log.Version
		}
		if v != "" && expect.VersionAtLeast(v, allGather4GFix) {
			continue
		}
		var bad []string
		below := false
		for _, r := range t.Rows {
			var w int64
			for _, e := range []*int64{r.OOP.WrongErrs, r.IP.WrongErrs} {
				if e != nil && *e > 0 {
					w += *e
				}
			}
			switch {
			case w > 0 && r.SizeBytes >= four:
				bad = append(bad, fmt.Sprintf("%d wrong at %d bytes", w, r.SizeBytes))
			case w > 0:
				below = true
			}
		}
		if len(bad) == 0 || below {
			continue
		}
		ver := "the NCCL release is not in the lines read; this applies if it is older than " + allGather4GFix
		if v != "" {
			ver = "NCCL " + v
		}
		a.cause(weightAllGather4G, report.Fail, "nccl.too-old",
			fmt.Sprintf("all_gather from 4 GiB on with %d GPUs per process returns wrong data in NCCL before %s (32-bit offsets between the GPUs of one process): an NCCL bug, not the hardware", t.NGpus, allGather4GFix),
			strings.Join(bad, "; ")+fmt.Sprintf("; none below 4 GiB; %d GPUs per process; ", t.NGpus)+ver,
			"install NCCL "+allGather4GFix+" or later ("+sparkNCCLRelease()+" on DGX Spark) and rebuild nccl-tests against it, or run one GPU per process (mpirun -np <GPUs> with -g 1)",
			"NVIDIA/nccl commit c38f174 (\"Fix Allgather operations above 4G with multiple GPUs per process\", src/collectives/device/primitives.h), first in tag v2.6.4-1")
		return
	}
}

// ncclOneCause: nccl-tests built against NCCL 1 ("# NCCL Tests compiled
// with NCCL 1.0"). NCCL 1 supports the GPUs of a single node only and
// predates every GPU architecture sold today; NCCL 2 brought inter-node
// communication.
func (a *analysis) ncclOneCause(v string) {
	if !strings.HasPrefix(v, "1.") && v != "1" {
		return
	}
	a.cause(weightNCCLOne, report.Fail, "nccl.too-old",
		"the test runs on NCCL "+v+": NCCL 1 supports the GPUs of one node only, has no network transport and predates current GPUs; its collectives fail or hang where NCCL 2 runs",
		"nccl-tests header: NCCL Tests compiled with NCCL "+v,
		"install a current NCCL 2 release ("+sparkNCCLRelease()+") and rebuild nccl-tests against it (make NCCL_HOME=…)",
		"https://github.com/NVIDIA/nccl/blob/v1.3.0-1/README.md; https://github.com/NVIDIA/nccl/issues/33")
}

// separateTestsCause flags nccl-tests run once per process (built without
// MPI=1 and started by a launcher) when no table shows it on its own.
func (a *analysis) separateTestsCause(o *results.NCCLOutput) {
	l := o.Launch
	if !separateTests(l) {
		return
	}
	for _, t := range o.Tables {
		if t.Footers > 1 {
			return // the table's own footers say it, below
		}
	}
	var ev string
	switch {
	case l.RankZeroHosts > 1:
		ev = `"Rank 0" device lines from two hosts in one header`
	case l.RankZeroPIDs > 1:
		ev = `"Rank 0" device lines of two processes (two Pids) on one host in one header`
	case l.StackedHeaders > 0:
		ev = fmt.Sprintf("%d nccl-tests headers (# nThread …) printed one after another with no device line or table between: one per process, while a test built with MPI=1 prints its header on rank 0 only", l.StackedHeaders+1)
	default:
		ev = fmt.Sprintf("%d 'Avg bus bandwidth' footers without a table between them (%.4g to %.4g GB/s)", l.StrayFooters, l.StrayMin, l.StrayMax)
	}
	a.flag(report.Fail, "nccl-tests.not-built-with-mpi", "each process ran a test of its own, so nothing was measured between them: nccl-tests built without MPI=1, started by mpirun or srun",
		ev, "check with ldd all_reduce_perf | grep mpi (no libmpi: built without MPI), then rebuild nccl-tests with MPI=1 (make clean; make MPI=1 MPI_HOME=…) against the MPI that mpirun belongs to and run it again",
		"https://github.com/NVIDIA/nccl-tests/issues/27; https://github.com/NVIDIA/nccl-tests/issues/213 (two headers for one mpirun -np 2: each process ran its own test; the ldd check); NVIDIA/nccl-tests src/common.cu v2.19.6 (without MPI_SUPPORT every process has proc 0, is_main_proc) and src/util.cu (PRINT: if (is_main_thread) printf)")
}

// graphFileSet: NCCL_GRAPH_FILE set by the environment forces NCCL's
// channel graph from a file instead of searching the machine's topology;
// a file made for another machine (often shipped in an image's
// /etc/nccl.conf) gives graphs that hang or crawl. NCCL_GRAPH_DUMP_FILE
// (writing the graph out) and NCCL_TOPO_FILE (describing the machine)
// are no evidence.
func (a *analysis) graphFileSet(l *results.NCCLLog) {
	v := strings.TrimSpace(l.Env["NCCL_GRAPH_FILE"])
	if v == "" {
		return
	}
	a.cause(weightGraphFile, report.Warn, "nccl.graph-file-set",
		"NCCL_GRAPH_FILE forces NCCL's channel graph from a file instead of searching this machine's topology; a graph made for another machine gives hangs or poor bandwidth",
		"NCCL_GRAPH_FILE set by environment to "+v,
		"unset NCCL_GRAPH_FILE (the job's environment, a container image, /etc/nccl.conf or ~/.nccl.conf); keep NCCL_TOPO_FILE if the platform needs one",
		"https://github.com/NVIDIA/nccl/issues/1240")
}

// ofiSocketProviders are the libfabric providers that carry their
// traffic over the kernel's TCP or UDP sockets ("tcp;ofi_rxm" is tcp with
// the reliable-datagram utility layered on it).
var ofiSocketProviders = []string{"tcp", "sockets", "udp"}

// ofiTCPProvider: the OFI net plugin (aws-ofi-nccl) names the libfabric
// provider it selected ("Selected Provider is tcp (found 1 nics)" to
// v1.13, "Selected provider is tcp, fabric is …" later). A socket provider
// means no RDMA provider (EFA, verbs, cxi) answered in this process: the
// devices are not visible (a container started without them, no driver),
// and NCCL's network traffic goes over kernel TCP. For: the line; a host
// name that is a container's ID. Fail when the log shows traffic between
// nodes, warn otherwise.
func (a *analysis) ofiTCPProvider(l *results.NCCLLog) {
	prov, note := "", ""
	// the plugin prints its provider choice as INFO, and as WARN where no
	// provider of the kind it asked for answered first
	for _, n := range slices.Concat(l.NetNotes, l.Warnings) {
		_, rest, ok := strings.Cut(strings.ToLower(n), "selected provider is ")
		if !ok || !strings.HasPrefix(n, "NET/OFI") {
			continue
		}
		name, _, _ := strings.Cut(strings.Fields(rest + " x")[0], ",")
		base, _, _ := strings.Cut(name, ";")
		if slices.Contains(ofiSocketProviders, base) {
			prov, note = name, n
			break
		}
	}
	if prov == "" {
		return
	}
	ev := []string{fmt.Sprintf("%q", note)}
	for _, n := range l.NetNotes {
		// the RDMA protocol's fi_getinfo found none of its providers
		// before the plugin fell back (src/nccl_ofi_rdma.cpp, aws-ofi-nccl
		// v1.21.1: "No eligible providers were found" on -FI_ENODATA)
		if strings.HasPrefix(n, "NET/OFI No eligible providers were found") {
			ev = append(ev, fmt.Sprintf("%q: the plugin's RDMA protocol found no provider first", n))
			break
		}
	}
	for _, h := range l.Hosts {
		if containerID(h) {
			ev = append(ev, "host name "+h+" is a container ID (12 hex digits): a container, which sees only the devices passed to it")
			break
		}
	}
	kinds, _ := l.TransportKinds()
	sev, net := report.Warn, int64(0)
	for k, n := range kinds {
		if strings.HasPrefix(k, "NET/") {
			net += n
		}
	}
	if net > 0 || l.NNodes > 1 || len(l.Hosts) > 1 {
		sev = report.Fail
		ev = append(ev, "traffic between nodes in the log")
	}
	n := len(a.res.Flags)
	a.flag(sev, "nccl.ofi-tcp-provider",
		fmt.Sprintf("the OFI net plugin selected libfabric's %s provider: no RDMA provider (EFA, verbs) answered in this process, so NCCL's network traffic goes over kernel sockets at a fraction of the fabric's bandwidth", prov),
		strings.Join(ev, "; "),
		"make an RDMA provider answer where the job runs: fi_info -p efa (or -p verbs, -p cxi) must list the devices; in a container pass them in (docker run --device /dev/infiniband/uverbs0 … for each, or the EFA device plugin on Kubernetes); a libfabric built without the fabric's provider lists only tcp (rebuild it with verbs or use the vendor's); an instance launched without an EFA has none to find",
		"https://github.com/aws/aws-ofi-nccl/blob/v1.12.1-aws/src/nccl_ofi_net.c (\"Selected Provider is %s (found %d nics)\"); https://github.com/aws/aws-ofi-nccl/blob/master/src/platform-aws.cpp (on EC2 the plugin asks for the efa provider; without EFA, TCP); https://github.com/aws/aws-ofi-nccl/issues/803 (EFA devices not passed to the container)")
	// where NCCL's first WARN line is the plugin's own (NET/OFI), the
	// generic count of WARN lines names nothing this does not: rank it after
	a.beforeWarnCount(n, len(l.Warnings) > 0 && strings.HasPrefix(l.Warnings[0], "NET/OFI"))
}

// beforeWarnCount moves the flag at index i in front of the "nccl.warn"
// count of WARN lines when explains says it names their cause.
func (a *analysis) beforeWarnCount(i int, explains bool) {
	if !explains || i >= len(a.res.Flags) {
		return
	}
	for j := range i {
		if a.res.Flags[j].ID == "nccl.warn" {
			f := a.res.Flags[i]
			copy(a.res.Flags[j+1:i+1], a.res.Flags[j:i])
			a.res.Flags[j] = f
			return
		}
	}
}

// containerID: a host name Docker gives a container, the first 12 hex
// digits of its ID.
func containerID(h string) bool {
	if len(h) != 12 {
		return false
	}
	digits := 0
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f':
		default:
			return false
		}
	}
	return digits > 0 && digits < 12
}

// ibRequestedNoDevice: the job configured NCCL's RDMA transport (an
// NCCL_IB_* variable other than NCCL_IB_DISABLE=1) but NET/IB found no
// device, so the process does not see the host's RDMA devices (a container
// without /dev/infiniband, no RDMA driver) and NCCL falls back to TCP.
// Against: any rank listing NET/IB devices, RDMA in use, IB turned off.
func (a *analysis) ibRequestedNoDevice(l *results.NCCLLog) {
	if len(l.IBDevices) > 0 || l.RDMA() || strings.TrimSpace(l.Env["NCCL_IB_DISABLE"]) == "1" {
		return
	}
	noDev := false
	for _, n := range l.NetNotes {
		if strings.Contains(n, "NET/IB") && strings.Contains(n, "No device found") {
			noDev = true
			break
		}
	}
	if !noDev {
		return
	}
	var set []string
	for k := range l.Env {
		if strings.HasPrefix(k, "NCCL_IB_") {
			set = append(set, k+"="+strings.TrimSpace(l.Env[k]))
		}
	}
	if len(set) == 0 {
		return
	}
	slices.Sort(set)
	a.cause(weightIBNoDevice, report.Warn, "nccl.ib-no-device",
		"the job configures NCCL's RDMA transport but NET/IB finds no device: this process does not see the host's RDMA devices, so NCCL falls back to TCP sockets",
		"\"NET/IB : No device found\" with "+strings.Join(set, " "),
		"make the RDMA devices visible to the process (containers: --device=/dev/infiniband --cap-add=IPC_LOCK, or the RDMA device plugin in Kubernetes; hosts: the RDMA driver and rdma-core) and check ibv_devinfo where the job runs",
		"https://github.com/pytorch/pytorch/issues/111424; https://github.com/microsoft/pai/pull/2657")
}

// sharedGPU: two ranks of one communicator print "Init START" with one
// host and one busId. NCCL compares every pair of ranks' hostHash and
// busId after its first all-gather and fails init with "Duplicate GPU
// detected" (NCCL 2.30: "Multiple Ranks are using the same
// GPU/Partition"), so the job stops or hangs there even where that WARN
// line was not kept. Against: NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL 2.30
// and later run several ranks on one GPU when asked), the WARN line
// itself (error.duplicate-gpu says it), lines without a host or with the
// host name localhost, which many machines share.
func (a *analysis) sharedGPU(l *results.NCCLLog) {
	g := l.SharedGPU
	if g == nil || strings.TrimSpace(l.Env["NCCL_MULTI_RANK_GPU_ENABLE"]) == "1" {
		return
	}
	// NCCL tells hosts apart by a hash of the host name and the boot id
	// (src/misc/utils.cc getHostHash): machines that all call themselves
	// localhost are still different
	if h := strings.ToLower(g.Host); h == "localhost" || strings.HasPrefix(h, "localhost.") {
		return
	}
	for _, w := range l.Warnings {
		if strings.Contains(w, "Duplicate GPU detected") || strings.Contains(w, "Multiple Ranks are using the same GPU") {
			return
		}
	}
	a.cause(weightSharedGPU, report.Fail, "nccl.shared-gpu",
		fmt.Sprintf("ranks %d and %d of one communicator start on the same GPU (host %s, busId %s): NCCL refuses two ranks on one GPU (Duplicate GPU detected) and init fails", g.Ranks[0], g.Ranks[1], g.Host, g.BusID),
		fmt.Sprintf("'Init START' lines of ranks %d and %d with commId %s on %s both name busId %s; %s", g.Ranks[0], g.Ranks[1], g.CommID, g.Host, g.BusID, g.Line),
		"start one rank per GPU and select the device from the local rank (torch.cuda.set_device(local_rank), CUDA_VISIBLE_DEVICES per worker); in a container or pod, give each worker its own GPU",
		"NVIDIA/nccl src/init.cc v2.18.6-1 (WARN \"Duplicate GPU detected\" when two ranks share hostHash and busId) and v2.30.7-1 (\"Multiple Ranks are using the same GPU/Partition\", unless NCCL_MULTI_RANK_GPU_ENABLE=1)")
}

// bootstrapIPoIB: NCCL's bootstrap failed ("bootstrap.cc:N -> code", its
// error-return trace) over an IPoIB interface (ib*) NCCL picked by
// itself. With NCCL_SOCKET_IFNAME unset, ncclFindInterfaces takes
// interfaces named ib* before any other (then the NCCL_COMM_ID subnet,
// then anything but docker and lo), and NET/IB's out-of-band interface is
// the same choice; an IPoIB interface that does not route between the
// ranks (another partition, no address inside a container, not up on
// every node) stops the bootstrap. Against: NCCL_SOCKET_IFNAME set (the
// user chose), no failed bootstrap trace, a bootstrap interface not
// named ib*.
func (a *analysis) bootstrapIPoIB(l *results.NCCLLog) {
	if l.BootstrapFail == "" || strings.TrimSpace(l.Env["NCCL_SOCKET_IFNAME"]) != "" {
		return
	}
	ifs := socketInterfaces(&results.NCCLLog{Bootstrap: l.Bootstrap})
	ev := "Bootstrap : Using "
	if len(ifs) == 0 {
		ifs, ev = socketInterfaces(&results.NCCLLog{Bootstrap: l.OOB}), "NET/IB OOB "
	}
	if len(ifs) == 0 || !strings.HasPrefix(ifs[0].name, "ib") {
		return
	}
	ib := ifs[0].name + ":" + ifs[0].addr
	a.cause(weightBootstrapIPoIB, report.Fail, "nccl.bootstrap-ipoib-auto",
		"NCCL's bootstrap failed over "+ifs[0].name+", an IPoIB interface NCCL picked by itself: with NCCL_SOCKET_IFNAME unset it takes ib* interfaces first, and one that does not route between the ranks stops the bootstrap",
		ev+ib+"; NCCL_SOCKET_IFNAME not set in the lines read; "+l.BootstrapFail,
		"set NCCL_SOCKET_IFNAME to the Ethernet interface that routes between the nodes (ip -br addr on each node) on every rank, or make the IPoIB interface reachable from every rank (ping its address from each node)",
		"NVIDIA/nccl src/misc/socket.cc v2.18.6-1 and v2.30.7-1 (ncclFindInterfaces: unset NCCL_SOCKET_IFNAME tries the \"ib\" prefix first); src/include/checks.h (the \"file:line -> code\" trace of a failed call)")
}

// hostHashFull is the first NCCL release that tells hosts apart by their
// full name (before it, the name up to the first dot); 2.5 adds the boot
// id and NCCL_HOSTID.
const hostHashFull = "2.4.6"

// hostHashClash: on one host of the lines, the P2P and SHM connections
// put two ranks on one GPU, while the host names two GPUs or more and no
// rank on two. NCCL uses P2P and SHM only between ranks of equal host hash
// (src/transport/p2p.cu, shm.cu), and before 2.4.6 that hash is the host
// name up to its first dot (getHostName cuts there; the log prefix is cut
// the same way), so machines named gpu1.a and gpu1.b are one host to it:
// ranks of the second machine reuse the first one's GPU numbers and NCCL
// tries CUDA IPC between the machines, which fails. Against: a release of
// 2.4.6 or later printed (a duplicate then stops init: error.duplicate-gpu),
// a rank on two GPUs (several communicators, numbered each their own way),
// a host whose lines name one GPU (one GPU visible per process), NCCL's
// own Duplicate GPU WARN.
func (a *analysis) hostHashClash(l *results.NCCLLog) {
	c := l.HostClash()
	if c == nil {
		return
	}
	v := leadingVersion([]byte(l.Version))
	if v != "" && facts.CompareVersions(v, hostHashFull) >= 0 {
		return
	}
	for _, w := range l.Warnings {
		if strings.Contains(w, "Duplicate GPU detected") || strings.Contains(w, "Multiple Ranks are using the same GPU") {
			return
		}
	}
	ver := "the NCCL release is not in the lines read (this applies before " + hostHashFull + ")"
	if v != "" {
		ver = "NCCL " + v
	}
	a.cause(weightHostClash, report.Fail, "nccl.host-hash-collision",
		fmt.Sprintf("the P2P and SHM connections NCCL made put ranks %d and %d on GPU %s of host %s; NCCL uses P2P and SHM only between ranks it takes for one host: two machines whose names agree up to the first dot, which NCCL before %s takes for one host, so it tries CUDA IPC between machines and fails (unhandled cuda error); or two ranks started on one GPU", c.Ranks[0], c.Ranks[1], c.GPU, c.Host, hostHashFull),
		fmt.Sprintf("%s; %s", c.Line, ver),
		"give every node a host name that differs before the first dot (hostnamectl set-hostname), or install NCCL "+hostHashFull+" or later ("+sparkNCCLRelease()+"), which tells hosts apart by the full name and, from 2.5, the boot id; if two ranks share a GPU, start one rank per GPU",
		"https://github.com/NVIDIA/nccl/issues/187; https://github.com/NVIDIA/nccl/pull/198; NVIDIA/nccl src/misc/utils.cu v2.3.7-1 and v2.4.2-1 (getHostHash: the host name cut at the first dot), src/misc/utils.cc v2.4.6-1 (the full name) and v2.5.6-1 (boot_id, NCCL_HOSTID); src/transport/p2p.cu and shm.cu v2.4.2-1 (P2P and SHM only between equal hostHash)")
}
