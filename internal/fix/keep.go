package fix

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// slot is one end of a planned link: node index and the twin's netdev.
type slot struct {
	node   int
	netdev string
	cur    netip.Prefix // its live IPv4 address (zero when none)
}

// planLink is one twin of one cable (or, on a switch, one node's twin).
type planLink struct {
	ends   []slot // two for a cable; every node's twin for a switch
	twin   int
	rdma   map[int]string // RDMA device by node
	port   map[int]int    // QSFP port by node
	subnet netip.Prefix
	addr   map[int]netip.Prefix // chosen address by node
	why    map[int]string       // what happens to the node's address
}

// currentIPv4 is a netdev's first IPv4 address that is neither loopback nor
// link-local, as a prefix with its host bits.
func currentIPv4(n *facts.Node, netdev string) netip.Prefix {
	d := n.NetDev(netdev)
	if d == nil {
		return netip.Prefix{}
	}
	for _, a := range d.Addrs {
		if a.Family != "inet" {
			continue
		}
		p, err := netip.ParsePrefix(a.CIDR)
		if err != nil || !p.Addr().Is4() || p.Addr().IsLinkLocalUnicast() || p.Addr().IsLoopback() {
			continue
		}
		return p
	}
	return netip.Prefix{}
}

// keepAddressing chooses every rail's address from what the nodes already
// have, changing only what is invalid: a link whose two ends sit in one
// subnet keeps both addresses; an end without an address joins its peer's
// subnet; links that share a subnet, ends in different subnets and
// duplicate addresses are the only things renumbered. It fills the same
// rails assign would, with each change explained in Rail.Change.
func keepAddressing(nodes []Node, links []planLink, opt Options) {
	// Subnets on the nodes' other interfaces (management, Wi-Fi, docker) are
	// never a rail's: a rail there is renumbered, a fresh one avoids them.
	used := map[netip.Prefix]bool{}
	rail := map[string]bool{}
	for _, l := range links {
		for _, e := range l.ends {
			rail[nodes[e.node].Facts.Host+"/"+e.netdev] = true
		}
	}
	for _, n := range nodes {
		for _, d := range n.Facts.NetDevs {
			if rail[n.Facts.Host+"/"+d.Name] || d.Name == "lo" {
				continue
			}
			if p := currentIPv4(n.Facts, d.Name); p.IsValid() {
				used[p.Masked()] = true
			}
		}
	}
	// Host numbers each node already uses, so a new address reads like its others.
	hostNum := make([]map[int]int, len(nodes))
	for i := range hostNum {
		hostNum[i] = map[int]int{}
	}
	for _, l := range links {
		for _, e := range l.ends {
			if e.cur.IsValid() {
				hostNum[e.node][hostPart(e.cur)]++
			}
		}
	}
	// 1. A subnet for every link: the one most of its ends already use, unless
	// an earlier link took it (twins on one subnet).
	var fresh []*planLink
	for i := range links {
		l := &links[i]
		l.addr, l.why = map[int]netip.Prefix{}, map[int]string{}
		s, ok := majoritySubnet(l.ends, used)
		if !ok {
			fresh = append(fresh, l)
			continue
		}
		l.subnet = s
		used[s] = true
	}
	next := 0
	for _, l := range fresh {
		for ; ; next++ {
			s := netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 168, byte(100 + next), 0}), 24)
			if !overlapsAny(s, used) {
				l.subnet, used[s] = s, true
				next++
				break
			}
		}
	}
	// 2. Addresses: an end already in the link's subnet keeps its address
	// unless another node holds the same one; the rest get a free host number.
	for i := range links {
		l := &links[i]
		taken := map[netip.Addr]bool{}
		for _, e := range l.ends {
			if e.cur.IsValid() && l.subnet.Contains(e.cur.Addr()) && !taken[e.cur.Addr()] {
				taken[e.cur.Addr()] = true
				l.addr[e.node] = netip.PrefixFrom(e.cur.Addr(), l.subnet.Bits())
			}
		}
		for _, e := range l.ends {
			if _, ok := l.addr[e.node]; ok {
				continue
			}
			a := freeHost(l.subnet, preferredHosts(hostNum[e.node], opt.FirstHost+e.node), taken)
			taken[a.Addr()] = true
			l.addr[e.node] = a
			switch {
			case !e.cur.IsValid():
				l.why[e.node] = "new: no IPv4 address now"
			case l.subnet.Contains(e.cur.Addr()):
				l.why[e.node] = fmt.Sprintf("was %s: another node has %s", e.cur, e.cur.Addr())
			default:
				l.why[e.node] = fmt.Sprintf("was %s: the link's other end is on %s", e.cur, l.subnet)
			}
		}
	}
}

// majoritySubnet is the subnet most addressed ends share (ties: the first
// node's) that no earlier link took; false when there is none.
func majoritySubnet(ends []slot, used map[netip.Prefix]bool) (netip.Prefix, bool) {
	count := map[netip.Prefix]int{}
	var order []netip.Prefix
	for _, e := range ends {
		if !e.cur.IsValid() || overlapsAny(e.cur.Masked(), used) {
			continue
		}
		s := e.cur.Masked()
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	if len(order) == 0 {
		return netip.Prefix{}, false
	}
	best := order[0]
	for _, s := range order[1:] {
		if count[s] > count[best] {
			best = s
		}
	}
	return best, true
}

func overlapsAny(s netip.Prefix, used map[netip.Prefix]bool) bool {
	for u := range used {
		if u.Overlaps(s) {
			return true
		}
	}
	return false
}

// hostPart is the last octet of an IPv4 address.
func hostPart(p netip.Prefix) int { return int(p.Addr().As4()[3]) }

// preferredHosts orders host numbers: the ones the node already uses (most
// used first), then its default.
func preferredHosts(have map[int]int, def int) []int {
	var hs []int
	for h := range have {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b int) int {
		if have[a] != have[b] {
			return have[b] - have[a]
		}
		return a - b
	})
	return append(hs, def)
}

// freeHost is the first preferred host number in s nobody holds, else the
// lowest free one from 10 up.
func freeHost(s netip.Prefix, prefer []int, taken map[netip.Addr]bool) netip.Prefix {
	try := func(n int) (netip.Prefix, bool) {
		if n < 1 || n > 254 {
			return netip.Prefix{}, false
		}
		a := s.Addr().As4()
		a[3] = byte(n)
		ip := netip.AddrFrom4(a)
		if !s.Contains(ip) || taken[ip] {
			return netip.Prefix{}, false
		}
		return netip.PrefixFrom(ip, s.Bits()), true
	}
	for _, n := range prefer {
		if p, ok := try(n); ok {
			return p
		}
	}
	for n := 10; n <= 254; n++ {
		if p, ok := try(n); ok {
			return p
		}
	}
	return netip.PrefixFrom(s.Addr(), s.Bits())
}

// describeKeep says in one line how a rail's address was chosen.
func describeKeep(cur, chosen netip.Prefix, why string) string {
	switch {
	case why != "":
		return why
	case cur.IsValid():
		return "keep " + chosen.String()
	}
	return ""
}
