package fix

import (
	"fmt"
	"math/big"
	"net/netip"
	"strings"
)

// end is one node's QSFP port; node -1 is a switch.
type end struct{ node, port int }

// cable joins two ends. Each cable carries two links, one per twin, and each
// link gets its own subnet, so the twins of a port never share one.
type cable struct{ a, b end }

// cabling lays out the cables a topology has.
func cabling(opt Options, ports []cx7Ports) ([]cable, error) {
	switch opt.Topology {
	case OneCable:
		pa, pb, err := onePort(opt, ports)
		if err != nil {
			return nil, err
		}
		return []cable{{end{0, pa}, end{1, pb}}}, nil
	case TwoCables:
		return []cable{{end{0, 0}, end{1, 0}}, {end{0, 1}, end{1, 1}}}, nil
	case Ring, AnyRing:
		// NVIDIA's three-Spark ring, and the larger rings built the same
		// way: each node's port 0 faces the next node's port 1.
		return ringCables(len(ports)), nil
	case Switch:
		port := opt.Port
		if port < 0 {
			port = majorityPort(ports)
		}
		cs := make([]cable, len(ports))
		for i := range ports {
			cs[i] = cable{end{i, port}, end{-1, port}}
		}
		return cs, nil
	}
	if opt.Topology.IsRing() {
		return ringCables(len(ports)), nil
	}
	return nil, fmt.Errorf("unknown topology %q", opt.Topology)
}

// ringCables joins node i's port 0 to node i+1's port 1, the last node's
// port 0 to the first node's port 1.
func ringCables(n int) []cable {
	cs := make([]cable, n)
	for i := range cs {
		cs[i] = cable{end{i, 0}, end{(i + 1) % n, 1}}
	}
	return cs
}

// onePort picks the cabled port of each node of a one-cable pair.
func onePort(opt Options, ports []cx7Ports) (int, int, error) {
	if opt.Port >= 0 {
		return opt.Port, opt.Port, nil
	}
	pa, ka := ports[0].cabledPort()
	pb, kb := ports[1].cabledPort()
	switch {
	case ka && !kb:
		pb = pa
	case kb && !ka:
		pa = pb
	}
	return pa, pb, nil
}

func majorityPort(ports []cx7Ports) int {
	n := [2]int{}
	for _, p := range ports {
		if port, known := p.cabledPort(); known {
			n[port]++
		}
	}
	if n[0] > n[1] {
		return 0
	}
	return 1
}

// subnetsNeeded is how many rail subnets the cabling uses.
func subnetsNeeded(opt Options, cables []cable) int {
	if opt.Topology == Switch {
		return 2
	}
	return 2 * len(cables)
}

// defaultSubnets are the playbooks' 192.168.100.0/24, 192.168.101.0/24, ...
func defaultSubnets(n int) []netip.Prefix {
	out := make([]netip.Prefix, n)
	for i := range out {
		out[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 168, byte(100 + i), 0}), 24)
	}
	return out
}

// assign gives every node its rails. Unless told to renumber (or given
// --subnets), it keeps the addressing in place where it is valid and changes
// only what is not (keepAddressing); otherwise node i is host FirstHost+i on
// each of the default (or given) subnets.
func assign(nodes []Node, ports []cx7Ports, cables []cable, opt Options) ([][]Rail, error) {
	links := planLinks(nodes, ports, cables, opt)
	switch {
	case opt.Addressing != Static:
	case !opt.Renumber && len(opt.Subnets) == 0:
		keepAddressing(nodes, links, opt)
	default:
		need := subnetsNeeded(opt, cables)
		subnets := opt.Subnets
		if len(subnets) == 0 {
			subnets = defaultSubnets(need)
		}
		if err := checkSubnets(subnets, need, opt.FirstHost, len(nodes)); err != nil {
			return nil, err
		}
		for i := range links {
			l := &links[i]
			l.subnet, l.addr, l.why = subnets[i], map[int]netip.Prefix{}, map[int]string{}
			for _, e := range l.ends {
				a, _ := netip.ParsePrefix(hostAddr(subnets[i], opt.FirstHost+e.node))
				l.addr[e.node] = a
				if e.cur.IsValid() && e.cur != a {
					l.why[e.node] = fmt.Sprintf("was %s: --renumber", e.cur)
				}
			}
		}
	}
	host := func(i int) string { return nodes[i].Facts.Host }
	rails := make([][]Rail, len(nodes))
	for _, l := range links {
		for _, e := range l.ends {
			r := Rail{NetDev: e.netdev, RDMADev: l.rdma[e.node], Port: l.port[e.node], Twin: l.twin, MTU: opt.MTU}
			for _, o := range l.ends {
				if o.node != e.node {
					r.Peers = append(r.Peers, host(o.node)+":"+o.netdev)
				}
			}
			if opt.Addressing == Static {
				r.Subnet = l.subnet.String()
				r.Addr = l.addr[e.node].String()
				r.Change = describeKeep(e.cur, l.addr[e.node], l.why[e.node])
			} else {
				r.Subnet = "169.254.0.0/16"
			}
			rails[e.node] = append(rails[e.node], r)
		}
	}
	for i := range rails {
		sortRails(rails[i])
	}
	return rails, nil
}

// planLinks lists the links the cabling makes: one per twin of every cable,
// or on a switch one per twin joining every node.
func planLinks(nodes []Node, ports []cx7Ports, cables []cable, opt Options) []planLink {
	mk := func(twin int) planLink {
		return planLink{twin: twin, rdma: map[int]string{}, port: map[int]int{}}
	}
	add := func(l *planLink, e end, t int) {
		tw := ports[e.node].twins[e.port][t]
		l.ends = append(l.ends, slot{node: e.node, netdev: tw.NetDev, cur: currentIPv4(nodes[e.node].Facts, tw.NetDev)})
		l.rdma[e.node], l.port[e.node] = tw.RDMADev, e.port
	}
	if opt.Topology == Switch {
		links := []planLink{mk(0), mk(1)}
		for _, cb := range cables {
			for t := range 2 {
				add(&links[t], cb.a, t)
			}
		}
		return links
	}
	var links []planLink
	for _, cb := range cables {
		for t := range 2 {
			l := mk(t)
			add(&l, cb.a, t)
			add(&l, cb.b, t)
			links = append(links, l)
		}
	}
	return links
}

// sortRails orders rails by port, then twin, so every node lists them alike.
func sortRails(rs []Rail) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && railLess(rs[j], rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func railLess(a, b Rail) bool {
	if a.Port != b.Port {
		return a.Port < b.Port
	}
	return a.Twin < b.Twin
}

// checkSubnets makes sure there are enough IPv4 subnets, they do not overlap,
// and every host number fits.
func checkSubnets(subnets []netip.Prefix, need, first, nodes int) error {
	if len(subnets) < need {
		return fmt.Errorf("this topology needs %d subnets, --subnets gives %d", need, len(subnets))
	}
	for i, s := range subnets[:need] {
		if !s.Addr().Is4() {
			return fmt.Errorf("subnet %s is not IPv4", s)
		}
		if s.Masked() != s {
			return fmt.Errorf("subnet %s has host bits set (did you mean %s?)", s, s.Masked())
		}
		hosts := new(big.Int).Lsh(big.NewInt(1), uint(32-s.Bits()))
		if big.NewInt(int64(first+nodes)).Cmp(hosts) >= 0 {
			return fmt.Errorf("subnet %s is too small for host numbers %d..%d", s, first, first+nodes-1)
		}
		for _, o := range subnets[:i] {
			if o.Overlaps(s) {
				return fmt.Errorf("subnets %s and %s overlap: every rail needs its own", o, s)
			}
		}
	}
	return nil
}

// hostAddr is host number n in subnet s, with its prefix length.
func hostAddr(s netip.Prefix, n int) string {
	a := s.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(n)
	ip := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	return netip.PrefixFrom(ip, s.Bits()).String()
}

// ringRoutes gives every node of a ring of four or more a route to each
// subnet it is not on, through the neighbour on the shorter way round, twin
// by twin (twin t's subnets are reached over twin t's rails). Cable k joins
// node k's port 0 and node k+1's port 1.
func ringRoutes(rails [][]Rail) {
	n := len(rails)
	find := func(node, port, twin int) *Rail {
		for j := range rails[node] {
			if r := &rails[node][j]; r.Port == port && r.Twin == twin && r.Addr != "" {
				return r
			}
		}
		return nil
	}
	for i := range rails {
		for twin := range 2 {
			fwd, back := find(i, 0, twin), find(i, 1, twin)
			next, prev := find((i+1)%n, 1, twin), find((i+n-1)%n, 0, twin)
			if fwd == nil || back == nil || next == nil || prev == nil {
				continue // a rail without an address: nothing to route over
			}
			for k := range n {
				if k == i || k == (i+n-1)%n {
					continue // the node's own cables
				}
				link := find(k, 0, twin)
				if link == nil {
					continue
				}
				ahead := (k - i + n) % n          // hops forward to node k
				behind := (i - (k + 1) + 2*n) % n // hops back to node k+1
				rt := Route{To: link.Subnet}
				if ahead <= behind {
					rt.Via = addrOnly(next.Addr)
					fwd.Routes = append(fwd.Routes, rt)
				} else {
					rt.Via = addrOnly(prev.Addr)
					back.Routes = append(back.Routes, rt)
				}
			}
		}
	}
}

func addrOnly(cidr string) string {
	a, _, _ := strings.Cut(cidr, "/")
	return a
}
