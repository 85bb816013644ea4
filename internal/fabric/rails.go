// Package fabric pairs the nodes' netdevs into rails (the paths between two
// nodes' RDMA-capable interfaces) and derives from them the environment a
// cluster's jobs need: NCCL_IB_HCA, the bootstrap interface, the shared GID
// index, UCX, Open MPI and Gloo settings. doctor, bench and fix all take the
// environment from here, so their advice agrees.
package fabric

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Link is a cable (or switch path) between two nodes' netdevs, as the
// cluster doctor found it. Addr may be empty: the netdev's first IPv4
// address is used.
type Link struct {
	A, B   LinkEnd
	Subnet string
}

// LinkEnd is one end of a Link.
type LinkEnd struct {
	Host, NetDev, Addr string
}

// Endpoint is one end of a rail: a netdev, and the RDMA port on the same PCI
// function when there is one.
type Endpoint struct {
	Host    string `json:"host"`
	NetDev  string `json:"netdev"`
	Addr    string `json:"addr,omitempty"` // IPv4 without prefix length
	RDMADev string `json:"rdma_dev,omitempty"`
	Port    int    `json:"port,omitempty"`
	// GIDIndex is the RoCE v2 GID carrying Addr; -1 when there is none.
	GIDIndex int `json:"gid_index"`
	// PCIAddr orders devices the same way on every node.
	PCIAddr   string `json:"pci_addr,omitempty"`
	SpeedMbps int    `json:"speed_mbps,omitempty"`
}

// RDMAReady reports whether the endpoint has an active RDMA port to test.
func (e Endpoint) RDMAReady() bool { return e.RDMADev != "" && e.Port > 0 }

// Rail is one path between two nodes: A runs the servers, B the clients.
type Rail struct {
	Name   string   `json:"name"` // "rail0", ...
	A      Endpoint `json:"a"`
	B      Endpoint `json:"b"`
	Subnet string   `json:"subnet,omitempty"`
}

// String names the rail for progress lines: "rail0 spark-a:enp1s0f1np1 ↔ spark-b:enp1s0f1np1".
func (r Rail) String() string {
	return fmt.Sprintf("%s %s:%s ↔ %s:%s", r.Name, r.A.Host, r.A.NetDev, r.B.Host, r.B.NetDev)
}

// Note is something the planner noticed that changes what is measured or how.
type Note struct {
	ID     string `json:"id"`
	Host   string `json:"host,omitempty"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Rails pairs the nodes' netdevs into rails. With links (from the cluster
// doctor) it follows them; without, it pairs IPv4 addresses that share a
// subnet between the first node and each other node, the way a direct cable
// between two Sparks is addressed. Rails are ordered by the first node's PCI
// address so the same twin is rail0 everywhere.
func Rails(nodes []*facts.Node, links []Link) ([]Rail, []Note) {
	byHost := map[string]*facts.Node{}
	for _, n := range nodes {
		byHost[n.Host] = n
	}
	if len(links) == 0 {
		links = linksBySubnet(nodes)
	}
	var rails []Rail
	var notes []Note
	for _, l := range links {
		na, nb := byHost[l.A.Host], byHost[l.B.Host]
		if na == nil || nb == nil {
			continue
		}
		a, b := endpoint(na, l.A.NetDev, l.A.Addr), endpoint(nb, l.B.NetDev, l.B.Addr)
		if a.Addr == "" || b.Addr == "" {
			notes = append(notes, Note{ID: "bench.rail-unaddressed", Host: l.A.Host,
				Detail: fmt.Sprintf("link %s:%s ↔ %s:%s has no IPv4 address on one end; it is not tested", l.A.Host, l.A.NetDev, l.B.Host, l.B.NetDev),
				Fix:    "address both ends (sparkrig fix writes /etc/netplan/40-cx7.yaml)"})
			continue
		}
		rails = append(rails, Rail{A: a, B: b, Subnet: l.Subnet})
	}
	sort.SliceStable(rails, func(i, j int) bool {
		if rails[i].A.Host != rails[j].A.Host {
			return hostIndex(nodes, rails[i].A.Host) < hostIndex(nodes, rails[j].A.Host)
		}
		return devKey(rails[i].A) < devKey(rails[j].A)
	})
	for i := range rails {
		rails[i].Name = fmt.Sprintf("rail%d", i)
	}
	return rails, append(notes, sharedSubnets(rails)...)
}

// sharedSubnets notes netdevs of one node on one subnet: the kernel sends
// both rails' traffic out of whichever route it finds first.
func sharedSubnets(rails []Rail) []Note {
	seen := map[string]string{}
	var notes []Note
	for _, r := range rails {
		k := r.A.Host + " " + r.Subnet
		if prev, ok := seen[k]; ok && prev != r.A.NetDev && r.Subnet != "" {
			notes = append(notes, Note{ID: "bench.twins-same-subnet", Host: r.A.Host,
				Detail: fmt.Sprintf("%s and %s share %s: traffic for either may leave through the other, so per-rail numbers are not per twin", prev, r.A.NetDev, r.Subnet),
				Fix:    "give each twin its own subnet (sparkrig fix writes /etc/netplan/40-cx7.yaml)"})
			continue
		}
		seen[k] = r.A.NetDev
	}
	return notes
}

func hostIndex(nodes []*facts.Node, host string) int {
	for i, n := range nodes {
		if n.Host == host {
			return i
		}
	}
	return len(nodes)
}

func devKey(e Endpoint) string {
	if e.PCIAddr != "" {
		return e.PCIAddr
	}
	return "~" + e.NetDev
}

// EndpointFor fills an Endpoint from a node's facts for one netdev and the
// address it has (or is planned to have; "" takes its first IPv4 address).
func EndpointFor(n *facts.Node, netdev, addr string) Endpoint { return endpoint(n, netdev, addr) }

// endpoint fills an Endpoint from a node's facts for one netdev.
func endpoint(n *facts.Node, netdev, addr string) Endpoint {
	e := Endpoint{Host: n.Host, NetDev: netdev, GIDIndex: -1}
	nd := findNetDev(n, netdev)
	if nd != nil {
		e.PCIAddr = nd.PCIAddr
		if nd.SpeedMbps != nil {
			e.SpeedMbps = *nd.SpeedMbps
		}
		if addr == "" {
			addr = firstIPv4(nd)
		}
	}
	e.Addr = StripPrefix(addr)
	dev, port := rdmaFor(n, nd, netdev)
	if dev == nil || port == nil {
		return e
	}
	e.RDMADev, e.Port = dev.Name, port.Num
	if e.PCIAddr == "" {
		e.PCIAddr = dev.PCIAddr
	}
	e.GIDIndex = roceV2GID(port, e.Addr, netdev)
	return e
}

func findNetDev(n *facts.Node, name string) *facts.NetDev {
	for i := range n.NetDevs {
		if n.NetDevs[i].Name == name {
			return &n.NetDevs[i]
		}
	}
	return nil
}

// rdmaFor finds the active RDMA port behind a netdev.
func rdmaFor(n *facts.Node, nd *facts.NetDev, netdev string) (*facts.RDMADev, *facts.RDMAPort) {
	for i := range n.RDMA {
		d := &n.RDMA[i]
		if d.NetDev != netdev && (nd == nil || nd.RDMADev != d.Name) {
			continue
		}
		for j := range d.Ports {
			if strings.EqualFold(d.Ports[j].State, "ACTIVE") {
				return d, &d.Ports[j]
			}
		}
		return d, nil
	}
	return nil, nil
}

// roceV2GID returns the index of the RoCE v2 GID that carries addr, the one
// perftest's -x and NCCL_IB_GID_INDEX should name; -1 when there is none.
func roceV2GID(p *facts.RDMAPort, addr, netdev string) int {
	for _, g := range p.GIDs {
		if g.Type != "RoCE v2" || g.IPv4 == "" {
			continue
		}
		if g.IPv4 == addr && (g.NetDev == "" || g.NetDev == netdev) {
			return g.Index
		}
	}
	return -1
}

func firstIPv4(nd *facts.NetDev) string {
	for _, a := range nd.Addrs {
		if a.Family == "inet" && !strings.HasPrefix(a.CIDR, "169.254.") && !strings.HasPrefix(a.CIDR, "127.") {
			return a.CIDR
		}
	}
	return ""
}

// StripPrefix drops the prefix length of a CIDR ("192.168.100.10/24" → "192.168.100.10").
func StripPrefix(cidr string) string {
	if i := strings.IndexByte(cidr, '/'); i >= 0 {
		return cidr[:i]
	}
	return cidr
}

// linksBySubnet pairs netdevs of the first node with netdevs of the other
// nodes whose IPv4 addresses share a subnet. It stands in for the cluster
// doctor's links when none are given.
func linksBySubnet(nodes []*facts.Node) []Link {
	if len(nodes) < 2 {
		return nil
	}
	var links []Link
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			links = append(links, pairSubnets(a, b)...)
		}
	}
	return links
}

func pairSubnets(a, b *facts.Node) []Link {
	var links []Link
	for _, da := range a.NetDevs {
		for _, pa := range IPv4Prefixes(da) {
			var cands []Link
			for _, db := range b.NetDevs {
				for _, pb := range IPv4Prefixes(db) {
					if pa.Masked() != pb.Masked() || pa.Addr() == pb.Addr() {
						continue
					}
					cands = append(cands, Link{
						A:      LinkEnd{Host: a.Host, NetDev: da.Name, Addr: pa.Addr().String()},
						B:      LinkEnd{Host: b.Host, NetDev: db.Name, Addr: pb.Addr().String()},
						Subnet: pa.Masked().String(),
					})
				}
			}
			links = append(links, preferSameName(cands)...)
		}
	}
	return links
}

// preferSameName keeps, of several peers on one subnet, the netdev of the
// same name: twins on one subnet would otherwise pair crosswise.
func preferSameName(cands []Link) []Link {
	if len(cands) < 2 {
		return cands
	}
	for _, c := range cands {
		if c.A.NetDev == c.B.NetDev {
			return []Link{c}
		}
	}
	return cands[:1]
}

// IPv4Prefixes lists a netdev's IPv4 prefixes other than loopback and
// link-local (169.254/16 is on every twin and pairs nothing).
func IPv4Prefixes(nd facts.NetDev) []netip.Prefix {
	if nd.Name == "lo" {
		return nil
	}
	var out []netip.Prefix
	for _, a := range nd.Addrs {
		if a.Family != "inet" {
			continue
		}
		p, err := netip.ParsePrefix(a.CIDR)
		if err != nil || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
			continue
		}
		out = append(out, p)
	}
	return out
}
