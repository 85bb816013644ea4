package cluster

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"

	"github.com/sparkrig/sparkrig/internal/topology"
)

// Topology is how the nodes' data ports are cabled: the one vocabulary of
// internal/topology.
type Topology = topology.Kind

// Topologies sparkrig recognises, by the names cluster code has used.
const (
	SingleNode        = topology.SingleNode
	NoDataLinks       = topology.NoDataLinks
	TwoNodesOneCable  = topology.OneCable
	TwoNodesTwoCables = topology.TwoCables
	ThreeNodeRing     = topology.Ring
	Switched          = topology.Switch
	OtherTopology     = topology.Other
)

// Cable is one physical cable between two nodes' ports, as inferred from the
// direct links (both twins of a Spark port travel in one cable).
type Cable struct {
	A, B         string // hosts, A < B
	PortA, PortB string // port index ("0", "1") or the netdev name when unknown
}

// Cables infers the cables behind the direct (two-node) segments.
func Cables(segs []Segment) []Cable {
	seen := map[Cable]bool{}
	var out []Cable
	for _, s := range segs {
		if len(s.Rails) != 2 || s.Hosts() != 2 {
			continue
		}
		a, b := s.Rails[0], s.Rails[1]
		if b.Host < a.Host {
			a, b = b, a
		}
		c := Cable{A: a.Host, B: b.Host, PortA: portKey(a), PortB: portKey(b)}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

func portKey(r Rail) string {
	if r.Port >= 0 {
		return fmt.Sprint(r.Port)
	}
	return r.NetDev
}

// DetectTopology names the layout of nodes (host names) joined by segs:
// a segment of more than two nodes is a switch; direct cables that join
// every node to exactly two others in one cycle are a ring of any size.
func DetectTopology(hosts []string, segs []Segment) Topology {
	if len(hosts) < 2 {
		return SingleNode
	}
	cables := Cables(segs)
	for _, s := range segs {
		if s.Hosts() > 2 {
			if len(cables) > 0 {
				return topology.Mixed
			}
			return Switched
		}
	}
	switch {
	case len(cables) == 0:
		return NoDataLinks
	case len(hosts) == 2 && len(cables) == 1:
		return TwoNodesOneCable
	case len(hosts) == 2 && len(cables) == 2:
		return TwoNodesTwoCables
	case len(hosts) >= 3 && isCycle(hosts, cables):
		return topology.RingOf(len(hosts))
	}
	return OtherTopology
}

// isCycle reports whether the cables join the hosts in one cycle: every
// host cabled to exactly two others, once each, all of them reachable.
func isCycle(hosts []string, cables []Cable) bool {
	if len(cables) != len(hosts) {
		return false
	}
	peers := map[string][]string{}
	for _, c := range cables {
		peers[c.A] = append(peers[c.A], c.B)
		peers[c.B] = append(peers[c.B], c.A)
	}
	for _, h := range hosts {
		if p := peers[h]; len(p) != 2 || p[0] == p[1] {
			return false
		}
	}
	seen := map[string]bool{}
	for at := hosts[0]; !seen[at]; {
		seen[at] = true
		next := peers[at][0]
		if seen[next] {
			next = peers[at][1]
		}
		at = next
	}
	return len(seen) == len(hosts)
}

// behindSwitch tells two nodes on a switch from two on a cable by what the
// nodes see on a data port: an LLDP neighbour that is none of the nodes, or
// a neighbour MAC that is not the peer's.
func behindSwitch(nodes []*facts.Node, segs []Segment) (bool, string) {
	byHost := map[string]*facts.Node{}
	for _, n := range nodes {
		byHost[n.Host] = n
	}
	isNode := func(name string) bool {
		for _, n := range nodes {
			if name == n.Host || name == n.Hostname || strings.HasPrefix(n.Hostname, name+".") {
				return true
			}
		}
		return false
	}
	for _, s := range segs {
		if len(s.Rails) != 2 || s.Hosts() != 2 {
			continue
		}
		for i, r := range s.Rails {
			n, peer := byHost[r.Host], byHost[s.Rails[1-i].Host]
			if n == nil || peer == nil {
				continue
			}
			for _, l := range n.LLDP {
				if l.Iface == r.NetDev && l.SysName != "" && !isNode(l.SysName) {
					return true, fmt.Sprintf("%s %s hears LLDP from %s", r.Host, r.NetDev, l.SysName)
				}
			}
			peerMAC := ""
			for _, d := range peer.NetDevs {
				if d.Name == s.Rails[1-i].NetDev {
					peerMAC = strings.ToLower(d.MAC)
				}
			}
			for _, nb := range n.Neighbors {
				ip, err := netip.ParseAddr(nb.IP)
				if nb.Dev != r.NetDev || peerMAC == "" || err != nil || !s.Subnet.Contains(ip) || nb.MAC == peerMAC {
					continue
				}
				return true, fmt.Sprintf("%s %s sees %s at %s, not the peer's %s", r.Host, r.NetDev, nb.IP, nb.MAC, peerMAC)
			}
		}
	}
	return false, ""
}
