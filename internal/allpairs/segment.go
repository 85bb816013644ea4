package allpairs

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// AddrCommand lists a node's addresses in iproute2's brief form.
const AddrCommand = "ip -br addr"

// Addr is one IPv4 address of one interface.
type Addr struct {
	Dev    string
	State  string // UP, DOWN, UNKNOWN
	Prefix netip.Prefix
}

// ParseAddrs reads `ip -br addr`: an interface per line, its state, then
// its addresses (IPv4 kept, IPv6 left).
func ParseAddrs(b []byte) []Addr {
	var out []Addr
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		dev, _, _ := strings.Cut(f[0], "@") // veth names: "eth0@if12"
		for _, a := range f[2:] {
			p, err := netip.ParsePrefix(a)
			if err != nil || !p.Addr().Is4() {
				continue
			}
			out = append(out, Addr{Dev: dev, State: f[1], Prefix: p})
		}
	}
	return out
}

// Segment is the subnet the nodes share and each node's address on it.
type Segment struct {
	Subnet netip.Prefix
	Addrs  []Addr // by node
}

// FindSegment picks the subnet every node has a distinct address on: the
// one asked for, or else the one that holds the most nodes. Loopback,
// link-local and interfaces that are down are left out, and so is a subnet
// where two nodes share an address (docker0's 172.17.0.1 on every host).
// Nodes left without an address on the segment are an error naming them.
func FindSegment(names []string, addrs [][]Addr, want netip.Prefix) (Segment, error) {
	type cand struct {
		nodes map[int]Addr
		dup   bool
	}
	cands := map[netip.Prefix]*cand{}
	for i, as := range addrs {
		for _, a := range as {
			ip := a.Prefix.Addr()
			if ip.IsLoopback() || ip.IsLinkLocalUnicast() || a.State == "DOWN" {
				continue
			}
			sub := a.Prefix.Masked()
			if want.IsValid() && !want.Contains(ip) {
				continue
			}
			c := cands[sub]
			if c == nil {
				c = &cand{nodes: map[int]Addr{}}
				cands[sub] = c
			}
			if _, ok := c.nodes[i]; ok {
				continue
			}
			for _, o := range c.nodes {
				if o.Prefix.Addr() == ip {
					c.dup = true
				}
			}
			c.nodes[i] = a
		}
	}
	var subs []netip.Prefix
	for s, c := range cands {
		if !c.dup {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		if want.IsValid() {
			return Segment{}, fmt.Errorf("no node has an address in %s", want)
		}
		return Segment{}, fmt.Errorf("the nodes share no IPv4 subnet (loopback, link-local and down interfaces left out)")
	}
	sort.Slice(subs, func(i, j int) bool {
		a, b := cands[subs[i]], cands[subs[j]]
		if len(a.nodes) != len(b.nodes) {
			return len(a.nodes) > len(b.nodes)
		}
		return subs[i].String() < subs[j].String()
	})
	best := subs[0]
	if !want.IsValid() && len(subs) > 1 && len(cands[subs[1]].nodes) == len(cands[best].nodes) {
		var tied []string
		for _, sub := range subs {
			if len(cands[sub].nodes) == len(cands[best].nodes) {
				tied = append(tied, fmt.Sprintf("%s (%s)", sub, cands[sub].nodes[minKey(cands[sub].nodes)].Dev))
			}
		}
		return Segment{}, fmt.Errorf("%d subnets hold %d nodes each: %s; pick one with --subnet", len(tied), len(cands[best].nodes), strings.Join(tied, ", "))
	}
	seg := Segment{Subnet: best, Addrs: make([]Addr, len(names))}
	var missing []string
	for i := range names {
		a, ok := cands[best].nodes[i]
		if !ok {
			missing = append(missing, names[i])
			continue
		}
		seg.Addrs[i] = a
	}
	if len(missing) > 0 {
		return seg, fmt.Errorf("%s: no address in %s, the subnet the other nodes share (--subnet picks another)", strings.Join(missing, ", "), best)
	}
	return seg, nil
}

// CableAddrs is the subnet nodes i and j share on a cable of their own
// (a direct-cabled ring gives each cable its subnets): one no other node
// has an address on, so not a management network all share. It returns
// each end's address on the first such subnet, in the order node i
// lists them.
func CableAddrs(addrs [][]Addr, i, j int) (Addr, Addr, bool) {
	usable := func(x Addr) bool {
		ip := x.Prefix.Addr()
		return !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && x.State != "DOWN"
	}
	shared := func(sub netip.Prefix) bool {
		for k, as := range addrs {
			if k == i || k == j {
				continue
			}
			for _, a := range as {
				if usable(a) && a.Prefix.Masked() == sub {
					return true
				}
			}
		}
		return false
	}
	for _, x := range addrs[i] {
		if !usable(x) || shared(x.Prefix.Masked()) {
			continue
		}
		for _, y := range addrs[j] {
			if usable(y) && y.Prefix.Masked() == x.Prefix.Masked() && y.Prefix.Addr() != x.Prefix.Addr() {
				return x, y, true
			}
		}
	}
	return Addr{}, Addr{}, false
}

func minKey(m map[int]Addr) int {
	k := -1
	for i := range m {
		if k < 0 || i < k {
			k = i
		}
	}
	return k
}
