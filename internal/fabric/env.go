package fabric

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Var is one environment variable of a command.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// EnvOptions tune the derived NCCL environment.
type EnvOptions struct {
	// BootstrapIf overrides NCCL_SOCKET_IFNAME and the MPI TCP interface.
	BootstrapIf string
}

// firstName is the first of a comma-separated list of interface names (Gloo
// takes one).
func firstName(list string) string {
	first, _, _ := strings.Cut(list, ",")
	return first
}

// NCCLEnv derives the environment of a job across nodes from
// their facts and rails: NCCL_IB_HCA names every RDMA device on a rail in
// the same (PCI) order on every node, NCCL_IB_GID_INDEX the RoCE v2 IPv4
// GID they share, and the bootstrap and MPI traffic stay on one interface
// every node has. The notes say where the facts forced a compromise.
func NCCLEnv(nodes []*facts.Node, rails []Rail, o EnvOptions) ([]Var, []Note) {
	var notes []Note
	hcas, hcaNotes := ibHCAs(nodes, rails)
	notes = append(notes, hcaNotes...)
	notes = append(notes, unusedTwins(nodes, rails)...)

	ifname, ifNotes := bootstrapIf(nodes, rails, o.BootstrapIf)
	notes = append(notes, ifNotes...)

	var env []Var
	add := func(name, value string) {
		if value != "" {
			env = append(env, Var{name, value})
		}
	}
	add("NCCL_SOCKET_IFNAME", ifname)
	if len(hcas) > 0 {
		add("NCCL_IB_HCA", joinHCAs(hcas, false))
		gid, gidNotes := gidIndex(rails)
		notes = append(notes, gidNotes...)
		if gidPinNeeded(nodes) {
			add("NCCL_IB_GID_INDEX", gid)
		}
		add("UCX_NET_DEVICES", joinHCAs(hcas, true))
	} else {
		notes = append(notes, Note{ID: "bench.no-rdma-rail",
			Detail: "no rail has an active RDMA port with an IPv4 address on both ends: NCCL will fall back to TCP sockets (NET/Socket), about 10× slower",
			Fix:    "address the CX-7 netdevs on every node (sparkrig fix) and check `sparkrig doctor --hosts ...`"})
		add("UCX_NET_DEVICES", ifname)
	}
	if len(nodes) > 2 || crossed(rails) {
		add("NCCL_IB_SUBNET_AWARE_ROUTING", "1")
	}
	add("OMPI_MCA_btl_tcp_if_include", ifname)
	add("OMPI_MCA_oob_tcp_if_include", ifname)
	add("GLOO_SOCKET_IFNAME", firstName(ifname))
	return env, append(notes, nodeOverrides(nodes, env)...)
}

// nodeOverrides notes NCCL settings a node's environment or /etc/nccl.conf
// gives a different value: the bench exports its own, but the node's jobs
// run with theirs.
func nodeOverrides(nodes []*facts.Node, env []Var) []Note {
	var notes []Note
	for _, n := range nodes {
		for _, v := range env {
			for src, m := range map[string]map[string]string{"the environment": n.NCCL.Env, "/etc/nccl.conf": n.NCCL.ConfFile} {
				if have, ok := m[v.Name]; ok && have != v.Value {
					if namesPresent(n, v.Name, have) {
						// A value the node can use is the node's choice: the
						// doctor finds it valid, so nothing is asked of it.
						notes = append(notes, Note{ID: "bench.node-nccl-setting", Host: n.Host,
							Detail: fmt.Sprintf("%s sets %s=%s, which names what the node has; the benchmark exports %s=%s, the node's other jobs keep theirs", src, v.Name, have, v.Name, v.Value)})
						continue
					}
					notes = append(notes, Note{ID: "bench.node-nccl-setting", Host: n.Host,
						Detail: fmt.Sprintf("%s sets %s=%s, which names nothing on the node; the benchmark exports %s=%s, but the node's other jobs get the node's value", src, v.Name, have, v.Name, v.Value),
						Fix:    "see the doctor's finding on " + n.Host + " (sparkrig doctor): it names the value to set"})
				}
			}
		}
	}
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].Host+notes[i].Detail < notes[j].Host+notes[j].Detail })
	return notes
}

// namesPresent says whether every interface or RDMA device an NCCL, UCX,
// Open MPI or Gloo setting names exists on the node (a "^" exclusion list
// names nothing it needs; "=" asks for exact names, else NCCL matches
// prefixes). Settings of other kinds are taken as valid.
func namesPresent(n *facts.Node, name, value string) bool {
	var have []string
	switch {
	case name == "NCCL_IB_HCA":
		for _, d := range n.RDMA {
			have = append(have, d.Name)
		}
	case strings.HasSuffix(name, "IFNAME") || strings.HasSuffix(name, "_if_include"):
		for _, d := range n.NetDevs {
			have = append(have, d.Name)
		}
	default:
		return true
	}
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, "^") {
		return true
	}
	exact := strings.HasPrefix(value, "=")
	for _, e := range strings.Split(strings.TrimPrefix(value, "="), ",") {
		e, _, _ = strings.Cut(strings.TrimSpace(e), ":")
		if e == "" {
			continue
		}
		if !slices.ContainsFunc(have, func(h string) bool { return h == e || !exact && strings.HasPrefix(h, e) }) {
			return false
		}
	}
	return true
}

type hca struct {
	name, pci string
	port      int
}

// ibHCAs returns the RDMA devices on rails, in PCI order. Every node gets the
// same list (mpirun -x exports one value); when the nodes' own lists differ,
// the union is used and a note says why that is a cabling problem.
func ibHCAs(nodes []*facts.Node, rails []Rail) ([]hca, []Note) {
	perHost := map[string]map[string]hca{}
	union := map[string]hca{}
	for _, r := range rails {
		for _, e := range []Endpoint{r.A, r.B} {
			if !e.RDMAReady() {
				continue
			}
			if perHost[e.Host] == nil {
				perHost[e.Host] = map[string]hca{}
			}
			h := hca{name: e.RDMADev, pci: e.PCIAddr, port: e.Port}
			perHost[e.Host][e.RDMADev] = h
			union[e.RDMADev] = h
		}
	}
	list := sortedHCAs(union)
	var notes []Note
	var differ []string
	for _, n := range nodes {
		own := sortedHCAs(perHost[n.Host])
		if len(own) == 0 {
			continue
		}
		if joinHCAs(own, false) != joinHCAs(list, false) {
			differ = append(differ, n.Host+": "+joinHCAs(own, false))
		}
	}
	if len(differ) > 0 {
		notes = append(notes, Note{ID: "bench.hca-differs",
			Detail: fmt.Sprintf("the nodes use different RDMA devices (%s); NCCL_IB_HCA=%s names them all and subnet-aware routing is on, but NCCL may still pair the wrong devices", strings.Join(differ, "; "), joinHCAs(list, false)),
			Fix:    "cable the same physical port on every node (DGX Spark: port 0 to port 0, or port 1 to port 1)"})
	}
	return list, notes
}

func sortedHCAs(m map[string]hca) []hca {
	out := make([]hca, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].pci != out[j].pci {
			return out[i].pci < out[j].pci
		}
		return out[i].name < out[j].name
	})
	return out
}

func joinHCAs(hs []hca, withPort bool) string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.name
		if withPort {
			names[i] += ":" + strconv.Itoa(h.port)
		}
	}
	return strings.Join(names, ",")
}

// unusedTwins notes RDMA devices whose port is active but which carry no
// rail: on a DGX Spark that is the unaddressed twin of a cabled port, and
// the run measures about half of what the cable can carry.
func unusedTwins(nodes []*facts.Node, rails []Rail) []Note {
	used := map[string]bool{}
	for _, r := range rails {
		used[r.A.Host+"/"+r.A.RDMADev], used[r.B.Host+"/"+r.B.RDMADev] = true, true
	}
	var notes []Note
	for _, n := range nodes {
		for _, d := range n.RDMA {
			if used[n.Host+"/"+d.Name] || !ActivePort(d) {
				continue
			}
			notes = append(notes, Note{ID: "bench.twin-unused", Host: n.Host,
				Detail: fmt.Sprintf("%s (%s) has an active port but no IPv4 address facing another node: it is left out of NCCL_IB_HCA, so the link runs at about half its bandwidth", d.Name, d.NetDev),
				Fix:    fmt.Sprintf("address %s on its own subnet on every node (sparkrig fix)", d.NetDev)})
		}
	}
	return notes
}

// ActivePort reports whether any port of the RDMA device is ACTIVE.
func ActivePort(d facts.RDMADev) bool {
	for _, p := range d.Ports {
		if strings.EqualFold(p.State, "ACTIVE") {
			return true
		}
	}
	return false
}

// gidAutoSince is the first NCCL that picks the RoCE v2 GID itself
// (NCCL_IB_GID_INDEX defaults to -1). Source: NVIDIA/nccl
// src/transport/net_ib (NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", -1));
// Juniper JVD AI data center, appendix D ("Starting with NCCL 2.21, the GID
// index no longer needs to be specified manually").
const gidAutoSince = "2.21"

// gidPinNeeded reports a node whose NCCL is older than gidAutoSince: only
// then is NCCL_IB_GID_INDEX set. The RoCE v2 IPv4 GID moves between indexes
// (3 on one node, 4 on another, after interface or firmware events), so a
// pinned index is a failure waiting to happen where NCCL can choose.
func gidPinNeeded(nodes []*facts.Node) bool {
	for _, n := range nodes {
		if v := n.NCCL.Version; v != "" && facts.CompareVersions(v, gidAutoSince) < 0 {
			return true
		}
	}
	return false
}

// gidIndex returns the GID index every rail device shares, or "" with a note.
func gidIndex(rails []Rail) (string, []Note) {
	seen := map[int][]string{}
	var missing []string
	for _, r := range rails {
		for _, e := range []Endpoint{r.A, r.B} {
			switch {
			case !e.RDMAReady():
			case e.GIDIndex < 0:
				missing = append(missing, e.Host+":"+e.RDMADev)
			default:
				seen[e.GIDIndex] = append(seen[e.GIDIndex], e.Host+":"+e.RDMADev)
			}
		}
	}
	var notes []Note
	if len(missing) > 0 {
		notes = append(notes, Note{ID: "bench.gid-missing",
			Detail: fmt.Sprintf("no RoCE v2 IPv4 GID found for %s: NCCL may fall back to GID 0 (RoCE v1, link-local) on it", strings.Join(missing, ", ")),
			Fix:    "give the device's netdev its IPv4 address; the GID appears with it"})
	}
	if len(seen) == 1 {
		for idx := range seen {
			return strconv.Itoa(idx), notes
		}
	}
	if len(seen) > 1 {
		var parts []string
		for idx, devs := range seen {
			parts = append(parts, fmt.Sprintf("%d on %s", idx, strings.Join(devs, ",")))
		}
		sort.Strings(parts)
		notes = append(notes, Note{ID: "bench.gid-differs",
			Detail: "the RoCE v2 IPv4 GID index differs between devices (" + strings.Join(parts, "; ") + "): NCCL_IB_GID_INDEX is left unset so NCCL chooses per device",
			Fix:    "check /sys/class/infiniband/<dev>/ports/1/gid_attrs/types/* on each node"})
	}
	return "", notes
}

// bootstrapIf picks the interface NCCL bootstraps over and MPI talks over:
// on two nodes the first rail's netdev (as NVIDIA's playbooks do), on more
// a non-RDMA interface that shares one subnet on every node (a direct-cabled
// ring has no single data netdev that reaches every peer).
func bootstrapIf(nodes []*facts.Node, rails []Rail, override string) (string, []Note) {
	if override != "" {
		return override, nil
	}
	if name := nodeSetting(nodes, "NCCL_SOCKET_IFNAME"); name != "" && sharedSubnetIf(nodes, name) {
		return name, nil // the nodes' own choice, and it works
	}
	if len(nodes) > 2 {
		if name := commonMgmtIf(nodes); name != "" {
			return name, nil
		}
	}
	if len(rails) == 0 {
		return "", []Note{{ID: "bench.no-bootstrap-if",
			Detail: "no interface shared by all nodes was found: NCCL_SOCKET_IFNAME is left unset",
			Fix:    "pass --bootstrap-if NAME"}}
	}
	names := []string{rails[0].A.NetDev}
	if rails[0].B.NetDev != rails[0].A.NetDev {
		names = append(names, rails[0].B.NetDev)
	}
	return strings.Join(names, ","), nil
}

// commonMgmtIf returns a netdev name without RDMA that every node has with
// an IPv4 address in one shared subnet, or "".
func commonMgmtIf(nodes []*facts.Node) string {
	for _, nd := range nodes[0].NetDevs {
		if nd.RDMADev == "" && sharedSubnetIf(nodes, nd.Name) {
			return nd.Name
		}
	}
	return ""
}

// sharedSubnetIf reports whether every node has netdev name with an IPv4
// address in one subnet they all share.
func sharedSubnetIf(nodes []*facts.Node, name string) bool {
	first := findNetDev(nodes[0], name)
	if first == nil {
		return false
	}
	for _, p := range IPv4Prefixes(*first) {
		all := true
		for _, other := range nodes[1:] {
			od := findNetDev(other, name)
			if od == nil || !hasPrefix(*od, p.Masked().String()) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// nodeSetting is the value the first node's environment (or nccl.conf)
// gives a variable, when it is one plain interface name.
func nodeSetting(nodes []*facts.Node, name string) string {
	v := nodes[0].NCCL.Env[name]
	if v == "" {
		v = nodes[0].NCCL.ConfFile[name]
	}
	if strings.ContainsAny(v, ",^= ") {
		return ""
	}
	return v
}

func hasPrefix(nd facts.NetDev, subnet string) bool {
	for _, p := range IPv4Prefixes(nd) {
		if p.Masked().String() == subnet {
			return true
		}
	}
	return false
}

// crossed reports whether some rail joins different devices, e.g. port 0 of
// one node to port 1 of another.
func crossed(rails []Rail) bool {
	for _, r := range rails {
		if r.A.RDMAReady() && r.B.RDMAReady() && r.A.RDMADev != r.B.RDMADev {
			return true
		}
	}
	return false
}
