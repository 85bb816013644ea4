// Package cluster holds the checks only several nodes together can show:
// which data netdev of one node faces which of another (worked out from
// addresses and subnets), whether both ends of every link agree, how the
// nodes are cabled (topology), whether every node runs the same software and
// settings, and what the active don't-fragment ping mesh found.
//
// Everything here is pure: it takes facts.Node values (and ping outputs) and
// returns links and findings.
package cluster

import (
	"net/netip"
	"regexp"
	"sort"
	"strconv"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Rail is one IPv4 address on one data netdev of one node (facts.Rail):
// the unit NCCL and RoCE use, and what the ping mesh tests.
type Rail = facts.Rail

// portPattern is the physical port suffix of a ConnectX netdev name.
var portPattern = regexp.MustCompile(`np(\d+)$`)

// PortOf returns the physical port index in a netdev name ("enP2p1s0f1np1"
// → 1), or -1.
func PortOf(netdev string) int {
	m := portPattern.FindStringSubmatch(netdev)
	if m == nil {
		return -1
	}
	p, _ := strconv.Atoi(m[1])
	return p
}

// IsDataNetDev tells the high-speed data path (ConnectX functions) from the
// management NIC and everything else: an RDMA device on the function, the
// mlx5 driver, or a name with a physical port suffix.
func IsDataNetDev(d facts.NetDev) bool {
	return d.RDMADev != "" || d.Driver == "mlx5_core" || PortOf(d.Name) >= 0
}

// Rails returns the node's data rails: every IPv4 address on a data netdev,
// in netdev order.
func Rails(n *facts.Node) []Rail {
	var out []Rail
	for _, d := range n.NetDevs {
		if !IsDataNetDev(d) {
			continue
		}
		for _, a := range d.Addrs {
			p, err := netip.ParsePrefix(a.CIDR)
			if err != nil || !p.Addr().Is4() {
				continue
			}
			r := Rail{Host: n.Host, NetDev: d.Name, RDMADev: d.RDMADev, Addr: p, MTU: d.MTU, Port: PortOf(d.Name)}
			if d.SpeedMbps != nil {
				r.SpeedMbps = *d.SpeedMbps
			}
			out = append(out, r)
		}
	}
	return out
}

// dataNetDevs returns the node's data netdevs by name, sorted.
func dataNetDevs(n *facts.Node) []facts.NetDev {
	var out []facts.NetDev
	for _, d := range n.NetDevs {
		if IsDataNetDev(d) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var linkLocal = netip.MustParsePrefix("169.254.0.0/16")
