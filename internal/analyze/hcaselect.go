package analyze

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// rdmaPort is an RDMA device's port and the network interface on it, as
// ibdev2netdev ("mlx5_1 port 1 ==> ib0 (Up)") or rdma link ("link
// mlx5_0/1 state ACTIVE … netdev ens13np0") print them, with the state
// the line shows.
type rdmaPort struct {
	hca, port, netdev string
	state             portState
}

// portState is what a listing says of a port: up, down, or nothing.
type portState uint8

const (
	portStateUnknown portState = iota
	portUp
	portDown
)

// ibdevState reads ibdev2netdev's "(Up)"/"(Down)" (mlnx-tools prints the
// netdev's state there); rdmaLinkState reads rdma link's "state X": NCCL
// uses a port only while its state is ACTIVE (src/transport/net_ib/init.cc
// v2.30.7-1: "if (portAttr.state != IBV_PORT_ACTIVE) continue;"), so
// DOWN, INIT, ARMED and the rest are down to it.
func ibdevState(w []byte) portState {
	switch strings.ToLower(strings.Trim(string(w), "()")) {
	case "up":
		return portUp
	case "down":
		return portDown
	}
	return portStateUnknown
}

func rdmaLinkState(fields [][]byte) portState {
	for i := 0; i+1 < len(fields); i++ {
		if string(fields[i]) == "state" {
			if string(fields[i+1]) == "ACTIVE" {
				return portUp
			}
			return portDown
		}
	}
	return portStateUnknown
}

// maxRDMAPorts bounds the ports kept from a paste.
const maxRDMAPorts = 64

// rdmaPorts collects the RDMA device to netdev lines of a paste.
type rdmaPorts struct {
	ports []rdmaPort
}

var (
	litIbdevArrow = []byte("==> ")
	litRdmaLink   = []byte("link ")
	litNetdev     = []byte("netdev ")
)

// observe reads one normalised line.
func (r *rdmaPorts) observe(line []byte) {
	if len(r.ports) >= maxRDMAPorts {
		return
	}
	if i := bytes.Index(line, litIbdevArrow); i > 0 && line[i-1] == ' ' {
		// ibdev2netdev: "<hca> port <n> ==> <netdev> (Up)", perhaps behind a label
		f := bytes.Fields(line[:i])
		g := bytes.Fields(line[i+len(litIbdevArrow):])
		if len(f) >= 3 && string(f[len(f)-2]) == "port" && len(g) >= 1 {
			st := portStateUnknown
			if len(g) >= 2 {
				st = ibdevState(g[1])
			}
			r.add(rdmaPort{string(f[len(f)-3]), string(f[len(f)-1]), string(g[0]), st})
		}
		return
	}
	// rdma link: "link <hca>/<port> state … netdev <netdev>". The rarer
	// word is looked for first: this runs on every line of the text. A
	// line without a 'v' (most; one vectorised search) holds no "netdev ",
	// whose 'n' bytes.Index would try at each of the line's.
	if bytes.IndexByte(line, 'v') < 0 {
		return
	}
	j := 0
	for {
		k := bytes.Index(line[j:], litNetdev)
		if k < 0 {
			return
		}
		j += k
		if j > 0 && line[j-1] == ' ' {
			break
		}
		j++
	}
	i := bytes.Index(line[:j], litRdmaLink)
	if i < 0 {
		return
	}
	f := bytes.Fields(line[i+len(litRdmaLink):])
	g := bytes.Fields(line[j+len(litNetdev):])
	if len(f) == 0 || len(g) == 0 {
		return
	}
	hca, port, ok := bytes.Cut(f[0], []byte("/"))
	if !ok || len(hca) == 0 || !digits(port) {
		return
	}
	r.add(rdmaPort{string(hca), string(port), string(g[0]), rdmaLinkState(f[1:])})
}

// add keeps a port once; a port listed again keeps the worse state (down
// if any listing says so, up over nothing said).
func (r *rdmaPorts) add(p rdmaPort) {
	if p.hca == "" || p.netdev == "" {
		return
	}
	for i, q := range r.ports {
		if q.hca == p.hca && q.port == p.port && q.netdev == p.netdev {
			r.ports[i].state = max(q.state, p.state)
			return
		}
	}
	r.ports = append(r.ports, p)
}

// of is every port whose netdev is name (one a node: a paste of several
// nodes may list ib0 under another HCA on each).
func (r *rdmaPorts) of(name string) []rdmaPort {
	var out []rdmaPort
	for _, p := range r.ports {
		if p.netdev == name {
			out = append(out, p)
		}
	}
	return out
}

// up is every port a listing shows up, as <hca>:<port>, once each.
func (r *rdmaPorts) up() []string {
	var out []string
	for _, p := range r.ports {
		if hp := p.hca + ":" + p.port; p.state == portUp && !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	return out
}

// matchesHCA: a listed HCA is one NCCL's filter entry selects (the entry
// is its name, or with prefix matching a prefix of it). rdma-core's
// persistent names can give an HCA and its IPoIB netdev one name
// (ibp59s0 port 1 ==> ibp59s0).
func (r *rdmaPorts) matchesHCA(entry string, exact bool) bool {
	for _, p := range r.ports {
		if p.hca == entry || !exact && strings.HasPrefix(p.hca, entry) {
			return true
		}
	}
	return false
}

// netdevName matches the names the kernel and udev give network
// interfaces and no RDMA driver gives a verbs device: IPoIB's ib<N>,
// eth<N>, bond<N>, em<N> and the predictable en* names (ens13np0,
// enp1s0f0, eno1, enP2p1s0f1). RDMA devices are named by their driver
// (mlx5_0, mlx5_bond_0, bnxt_re0, irdma0, efa_0, hfi1_0) or by rdma-core's
// persistent names (ibp…, rocep…, iwp…), none of which this matches.
var netdevName = regexp.MustCompile(`^(ib[0-9]+|eth[0-9]+|bond[0-9]+|em[0-9]+|en[opsxP][0-9A-Za-z]*)$`)

// weightHCAFilter ranks NCCL_IB_HCA naming no device above the socket
// fallback and the interface judgements it causes (a socket interface no
// other node can reach, 1.05).
const weightHCAFilter = 1.1

// ibHCAFilterMatchesNone: NCCL_IB_HCA is set, NET/IB found no device, and
// every entry of the filter names a network interface rather than an RDMA
// device. NCCL matches each entry ("<hca>[:<port>…]", a prefix unless the
// list starts with "=") against the verbs device names (mlx5_0) of the
// active ports; a netdev name such as ib0 or ens1f0 matches none, so
// NET/IB has no device and NCCL falls back to TCP sockets. For: the
// variable, the "No device found" line, each entry's name either the
// netdev of an RDMA port the paste lists (ibdev2netdev, rdma link) or
// shaped as only netdevs are (netdevName). Against: an exclude list (^),
// an entry that may name an HCA, NET/IB listing devices or RDMA in use,
// NCCL_IB_DISABLE=1.
func (a *analysis) ibHCAFilterMatchesNone(l *results.NCCLLog, ports *rdmaPorts) {
	if l == nil || len(l.IBDevices) > 0 || l.RDMA() || strings.TrimSpace(l.Env["NCCL_IB_DISABLE"]) == "1" {
		return
	}
	raw := strings.TrimSpace(l.Env["NCCL_IB_HCA"])
	if raw == "" || raw[0] == '^' || !ibNoDevice(l) {
		return
	}
	var named, owners, hcas, upNames, down []string
	exact := strings.HasPrefix(raw, "=")
	for _, e := range strings.Split(strings.TrimPrefix(raw, "="), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(e), ":")
		if name == "" {
			continue
		}
		under := ports.of(name)
		if len(under) == 0 && !netdevName.MatchString(name) || ports.matchesHCA(name, exact) {
			return
		}
		named = append(named, name)
		anyUp := false
		for _, p := range under {
			hp := p.hca + ":" + p.port
			if p.state == portDown {
				// NCCL skips a port that is not ACTIVE: naming it would
				// find no device either
				owners = append(owners, fmt.Sprintf("%s is the netdev of HCA %s port %s, which is down", name, p.hca, p.port))
				if !slices.Contains(down, name) {
					down = append(down, name)
				}
				continue
			}
			owners = append(owners, fmt.Sprintf("%s is the netdev of HCA %s port %s", name, p.hca, p.port))
			anyUp = true
			if !slices.Contains(hcas, hp) {
				hcas = append(hcas, hp)
			}
		}
		if anyUp {
			upNames = append(upNames, name)
		}
	}
	if len(named) == 0 {
		return
	}
	ev := fmt.Sprintf("NCCL_IB_HCA=%s; \"NET/IB : No device found\"", raw)
	if len(owners) > 0 {
		ev += "; " + strings.Join(owners, ", ")
	}
	if len(l.SocketDevices) > 0 || l.Network == "Socket" {
		ev += "; NCCL uses NET/Socket"
	}
	fix := hcaFilterFix(upNames, hcas, down, ports)
	what := strings.Join(named, ", ") + ", a network interface"
	if len(named) > 1 {
		what = "network interfaces (" + strings.Join(named, ", ") + ")"
	}
	a.dropCause("nccl.ib-no-device")
	a.cause(weightHCAFilter, report.Fail, "nccl.ib-hca-matches-none",
		fmt.Sprintf("NCCL_IB_HCA names %s, not RDMA devices: NCCL matches its entries against HCA names (mlx5_0, optionally with a port), so the filter matches no device, NET/IB finds none and NCCL falls back to TCP sockets", what),
		ev, fix,
		"NVIDIA/nccl docs/userguide/source/env.rst v2.30.7-1 (NCCL_IB_HCA: entries <hca>[:<port>…], prefixes unless the list starts with =, ^ to exclude); src/transport/net_ib/init.cc v2.30.7-1 and src/transport/net_ib.cc v2.20.5-1 (matchIfList against the verbs device name of each active port, then \"NET/IB : No device found.\"); src/misc/utils.cc v2.30.7-1 (parseStringList, matchIfList); https://github.com/hubutui/hubutui.github.io/blob/main/content/posts/notes-on-nccl-as-pytorch-ddp-backend.md (NCCL_IB_HCA=ib0: no IB device, NET/Socket; the rdma link names work)")
}

// hcaFilterFix is the remedy for a filter of netdev names: the HCA ports
// under them that no listing shows down (one per netdev: one filter for
// every node; more, or a netdev up on one node and down on another: the
// paste's nodes differ, so per node), never a port shown down (NCCL skips
// it); when every listed port is down, the ports the paste shows up, if
// any. down are the netdevs with a port shown down; the fix names them,
// not the ports.
func hcaFilterFix(upNames, hcas, down []string, ports *rdmaPorts) string {
	const unset = " or unset it so NCCL uses every active HCA"
	var fix string
	switch {
	case len(hcas) == 0 && len(down) > 0:
		fix = "set NCCL_IB_HCA to active HCA ports (rdma link: state ACTIVE; ibdev2netdev: (Up)) on every node," + unset
		if up := ports.up(); len(up) > 0 {
			fix = "set NCCL_IB_HCA to =" + strings.Join(up, ",") + " (the ports this paste shows up) on every node that lists them," + unset
		}
	case len(hcas) > 0 && len(hcas) == len(upNames) && !slices.ContainsFunc(down, func(n string) bool { return slices.Contains(upNames, n) }):
		fix = "set NCCL_IB_HCA to =" + strings.Join(hcas, ",") + " (the HCA port under " + strings.Join(upNames, ", ") + "; ibdev2netdev lists them) on every node," + unset
	case len(hcas) > 0:
		// the same netdev sits on different HCAs, or in different states,
		// across the paste's nodes
		fix = "set NCCL_IB_HCA on each node to the active HCA port under " + strings.Join(upNames, ", ") + " there (this paste shows " + strings.Join(hcas, ", ") + " up; ibdev2netdev on each node)," + unset
	default:
		return "set NCCL_IB_HCA to RDMA device names (the left column of ibdev2netdev, or rdma link; e.g. =mlx5_0:1) on every node," + unset
	}
	if len(down) > 0 {
		fix += "; the port under " + strings.Join(down, ", ") + " is down where a listing says so (NCCL uses only active ports), so no RDMA traffic goes there until its link comes up"
	}
	return fix
}

// ibNoDevice: a NET/IB "No device found" line.
func ibNoDevice(l *results.NCCLLog) bool {
	for _, n := range l.NetNotes {
		if strings.Contains(n, "NET/IB") && strings.Contains(n, "No device found") {
			return true
		}
	}
	return false
}

// dropCause removes the causes of one id.
func (a *analysis) dropCause(id string) {
	a.causes = slices.DeleteFunc(a.causes, func(c rankedFlag) bool { return c.flag.ID == id })
}

// weightMixedLinks ranks a device list that mixes link layers with the
// connection failures it explains (1.0).
const weightMixedLinks = 1.0

// ibMixedLinkLayers: one "NET/IB : Using" list names devices of both link
// layers, InfiniBand and RoCE (Ethernet). A queue pair joins two ports of
// one link layer: traffic NCCL puts on the RoCE device cannot reach a
// peer's InfiniBand device (nor the reverse), and NCCL 2.30 refuses to
// merge such devices. The devices of the smaller group are named as the
// odd ones out (a bonded Ethernet port beside the IB rails). Against: a
// list of one link layer (every DGX Spark list is RoCE), as many devices
// of each (no odd one out to name).
func (a *analysis) ibMixedLinkLayers(l *results.NCCLLog) {
	by := map[string][]string{}
	for _, d := range l.IBDevices {
		if d.Link == "IB" || d.Link == "RoCE" {
			by[d.Link] = append(by[d.Link], fmt.Sprintf("[%d]%s:%d/%s", d.Index, d.Name, d.Port, d.Link))
		}
	}
	ib, roce := by["IB"], by["RoCE"]
	if len(ib) == 0 || len(roce) == 0 {
		return
	}
	if len(ib) == len(roce) {
		return // no odd one out to name
	}
	odd, rest, oddLink := roce, ib, "RoCE"
	if len(ib) < len(roce) {
		odd, rest, oddLink = ib, roce, "InfiniBand"
	}
	var names []string
	for _, d := range odd {
		name, _, _ := strings.Cut(d[strings.Index(d, "]")+1:], ":")
		names = append(names, name)
	}
	msg := fmt.Sprintf("NCCL's RDMA device list mixes InfiniBand and RoCE: %d %s device%s beside %d of the other link layer; a queue pair joins ports of one link layer, so traffic NCCL puts on %s cannot reach a peer's device of the other kind (connection failures or low bandwidth)", len(odd), oddLink, plural(len(odd)), len(rest), strings.Join(names, ", "))
	ev := "NET/IB : Using " + strings.Join(odd, " ") + " with " + strings.Join(rest, " ")
	fix := "exclude the odd device" + plural(len(names)) + " on every node: set NCCL_IB_HCA to ^=" + strings.Join(names, ",") + " (or name the devices to use, =<hca>,<hca>…)"
	if len(l.Warnings) == 0 {
		// Healthy machines list an Ethernet storage or management port
		// beside their IB rails (Azure ND, DGX with a RoCE bond): said,
		// not judged, until the run shows a failure.
		a.flag(report.Info, "nccl.ib-mixed-link-layers", msg+"; this run shows no failure", ev, fix, mixedLinksSource)
		return
	}
	a.cause(weightMixedLinks, report.Warn, "nccl.ib-mixed-link-layers", msg, ev, fix, mixedLinksSource)
}

// mixedLinksSource is where the mixed-link-layer reading comes from.
const mixedLinksSource = "NVIDIA/nccl docs/userguide/source/env.rst v2.30.7-1 (NCCL_IB_HCA: ^ excludes, = matches exact names, e.g. ^=mlx5_1,mlx5_4); src/transport/net_ib/init.cc v2.30.7-1 (\"Attempted to merge incompatible devices … Try selecting NICs of only one link type using NCCL_IB_HCA\"); https://github.com/stas00/ml-engineering/blob/master/network/debug/README.md (an [8]mlx5_bond_0:1/RoCE beside eight IB HCAs: exclude it with NCCL_IB_HCA)"

// weightCommIDUnreachable ranks the NCCL_COMM_ID address a rank cannot use
// above the socket errors it gives (a connect failure, 1.0) and NCCL's
// WARN count.
const weightCommIDUnreachable = 1.1

// noSubnetIf is NCCL's WARN when no interface of the rank shares a subnet
// with NCCL_COMM_ID's address (src/include/socket.h v2.4.8-1 to
// src/misc/socket.cc v2.26; from 2.27 a TRACE only).
var noSubnetIf = regexp.MustCompile(`No interface found in the same subnet as remote address (\S+?)<(\d+)>`)

// commIDUnreachable: NCCL found no interface of this rank in the subnet of
// the NCCL_COMM_ID address (so it bootstraps over whatever else it has)
// and then could not use that address: binding it failed with "Cannot
// assign requested address" (the root rank does not own it: a container
// on a bridge network sees its own bridge address, not the host's) or a
// connect to it failed. For: the no-subnet WARN and either failure in the
// WARN lines. Against: the WARN alone (a routed address reached through a
// gateway works), failures of other addresses.
func (a *analysis) commIDUnreachable(l *results.NCCLLog) {
	var warn, addr, fail string
	for _, w := range l.Warnings {
		if m := noSubnetIf.FindStringSubmatch(w); m != nil && warn == "" {
			warn, addr = strings.TrimSpace(w), m[1]
		}
	}
	if warn == "" {
		return
	}
	for _, w := range l.Warnings {
		bind := strings.Contains(w, "Call to bind failed") && strings.Contains(w, "Cannot assign requested address")
		conn := strings.Contains(strings.ToLower(w), "connect to "+addr+"<")
		if bind || conn {
			fail = strings.TrimSpace(w)
			break
		}
	}
	if fail == "" {
		return
	}
	ev := warn + "; " + fail
	if ifs := socketInterfaces(&results.NCCLLog{Bootstrap: l.Bootstrap}); len(ifs) > 0 {
		ev += "; this rank bootstraps over " + ifs[0].name + ":" + ifs[0].addr
	}
	a.cause(weightCommIDUnreachable, report.Fail, "nccl.comm-id-unreachable",
		"the rank cannot use the bootstrap address it was given ("+addr+", NCCL_COMM_ID): none of its interfaces is on that subnet, and binding or reaching the address failed; a container on a bridge network has only its own bridge address, so the host's address is neither its own nor reachable for the other hosts' containers",
		ev,
		"set NCCL_COMM_ID to an address the root rank has (ip -br addr where it runs) that every rank reaches; ranks in containers on a bridge network have only their bridge address: run them on the host network (docker run --network=host; hostNetwork: true in Kubernetes) or an overlay that routes between the hosts",
		"NVIDIA/nccl src/include/socket.h v2.4.8-1 (findInterfaceMatchSubnet: \"No interface found in the same subnet as remote address\"; SYSCHECK \"Call to bind failed\") and src/bootstrap.cc v2.4.8-1 (with NCCL_COMM_ID the root listens on that address); src/misc/socket.cc v2.26.2-1 (the same WARN); https://github.com/NVIDIA/nccl/issues/331 (containers on Docker's bridge with NCCL_COMM_ID set to the host's address: no interface on its subnet, bind failed; host or overlay networking)")
}
