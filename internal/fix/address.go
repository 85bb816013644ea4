package fix

import (
	"fmt"
	"math/big"
	"net/netip"
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
	case Ring:
		// NVIDIA's three-Spark ring: each node's port 0 faces the next node's port 1.
		return []cable{{end{0, 0}, end{1, 1}}, {end{1, 0}, end{2, 1}}, {end{2, 0}, end{0, 1}}}, nil
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
	return nil, fmt.Errorf("unknown topology %q", opt.Topology)
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

// assign gives every node its rails: node i is host FirstHost+i on each subnet.
func assign(nodes []Node, ports []cx7Ports, cables []cable, opt Options) ([][]Rail, error) {
	need := subnetsNeeded(opt, cables)
	subnets := opt.Subnets
	if len(subnets) == 0 {
		subnets = defaultSubnets(need)
	}
	if opt.Addressing == Static {
		if err := checkSubnets(subnets, need, opt.FirstHost, len(nodes)); err != nil {
			return nil, err
		}
	}
	rails := make([][]Rail, len(nodes))
	host := func(i int) string { return nodes[i].Facts.Host }
	for c, cb := range cables {
		for t := range 2 {
			s := 2*c + t
			if opt.Topology == Switch {
				s = t
			}
			ta := ports[cb.a.node].twins[cb.a.port][t]
			ra := Rail{NetDev: ta.NetDev, RDMADev: ta.RDMADev, Port: cb.a.port, Twin: t, MTU: opt.MTU}
			var rb *Rail
			if cb.b.node >= 0 {
				tb := ports[cb.b.node].twins[cb.b.port][t]
				rb = &Rail{NetDev: tb.NetDev, RDMADev: tb.RDMADev, Port: cb.b.port, Twin: t, MTU: opt.MTU,
					Peers: []string{host(cb.a.node) + ":" + ta.NetDev}}
				ra.Peers = []string{host(cb.b.node) + ":" + tb.NetDev}
			}
			if opt.Addressing == Static {
				ra.Subnet = subnets[s].String()
				ra.Addr = hostAddr(subnets[s], opt.FirstHost+cb.a.node)
				if rb != nil {
					rb.Subnet = ra.Subnet
					rb.Addr = hostAddr(subnets[s], opt.FirstHost+cb.b.node)
				}
			} else {
				ra.Subnet = "169.254.0.0/16"
				if rb != nil {
					rb.Subnet = ra.Subnet
				}
			}
			rails[cb.a.node] = append(rails[cb.a.node], ra)
			if rb != nil {
				rails[cb.b.node] = append(rails[cb.b.node], *rb)
			}
		}
	}
	if opt.Topology == Switch {
		switchPeers(rails, host)
	}
	for i := range rails {
		sortRails(rails[i])
	}
	return rails, nil
}

// switchPeers fills each switch rail's peers: every other node's rail on the same subnet.
func switchPeers(rails [][]Rail, host func(int) string) {
	for i := range rails {
		for r := range rails[i] {
			for j := range rails {
				if j == i {
					continue
				}
				for _, o := range rails[j] {
					if o.Twin == rails[i][r].Twin {
						rails[i][r].Peers = append(rails[i][r].Peers, host(j)+":"+o.NetDev)
					}
				}
			}
		}
	}
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
