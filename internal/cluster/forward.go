package cluster

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// A ring's forwarded packet as the filter sees it: in on one ring netdev,
// out on another, between two ring subnets, opening a connection (ct state
// new: the packets least likely to be let through).
type ringPacket struct {
	in, out string
	subnets *subnetSet
}

// forwardDrop says which chain drops p, and how ("policy drop", or the
// rule), or "" where every base chain hooked at forward lets it through.
// The kernel runs each such chain (iptables' and nftables', by priority):
// an accept ends only that chain, a drop ends them all, so the packet is
// forwarded only if every one accepts it.
func forwardDrop(chains []facts.FilterChain, p ringPacket) (chain, how string) {
	var base []facts.FilterChain
	for _, c := range chains {
		if c.Hook == "forward" && (c.Table == facts.IptablesTable || strings.HasPrefix(c.Table, "ip ") || strings.HasPrefix(c.Table, "inet ")) {
			base = append(base, c)
		}
	}
	slices.SortStableFunc(base, func(a, b facts.FilterChain) int { return a.Priority - b.Priority })
	for _, c := range base {
		e := chainRun{chains: chains, table: c.Table, p: p}
		verdict, how := e.run(c.Name, 0)
		if verdict == "" {
			verdict, how = c.Policy, "policy "+c.Policy
		}
		if verdict == "drop" {
			return c.Table + " " + c.Name, how
		}
	}
	return "", ""
}

// chainRun evaluates one base chain's rules, into the chains they jump to.
type chainRun struct {
	chains []facts.FilterChain
	table  string
	p      ringPacket
}

// maxJumpDepth bounds nested jumps: the kernel refuses loops, a listing
// might still hold one.
const maxJumpDepth = 32

// run returns "accept" or "drop" and the rule that decided, or "" where the
// chain ends (or returns) without a verdict.
func (e chainRun) run(name string, depth int) (verdict, how string) {
	if depth > maxJumpDepth {
		return "", ""
	}
	i := slices.IndexFunc(e.chains, func(c facts.FilterChain) bool { return c.Table == e.table && c.Name == name })
	if i < 0 {
		return "", ""
	}
	for _, r := range e.chains[i].Rules {
		if !e.matches(r) {
			continue
		}
		switch r.Verdict {
		case "accept":
			return "accept", ruleHow(name, r)
		case "drop", "reject":
			return "drop", ruleHow(name, r)
		case "return":
			return "", ""
		case "jump":
			if v, how := e.run(r.Target, depth+1); v != "" {
				return v, how
			}
		case "goto": // the target's end is this chain's end
			return e.run(r.Target, depth+1)
		}
	}
	return "", ""
}

func ruleHow(chain string, r facts.FilterRule) string {
	return fmt.Sprintf("%s rule %q", chain, r.Text)
}

// matches reports whether r matches the whole of the ring's traffic
// between p's netdevs. A rule that matches only part of it (a protocol, a
// port, one of several ring subnets) is passed over: it neither lets the
// ring's traffic through nor stops all of it.
func (e chainRun) matches(r facts.FilterRule) bool {
	if r.Partial {
		return false
	}
	if len(r.In) > 0 && ifaceIn(e.p.in, r.In) == r.NotIn {
		return false
	}
	if len(r.Out) > 0 && ifaceIn(e.p.out, r.Out) == r.NotOut {
		return false
	}
	for _, a := range []struct {
		prefixes []string
		not      bool
	}{{r.Src, r.NotSrc}, {r.Dst, r.NotDst}} {
		if len(a.prefixes) == 0 {
			continue
		}
		all, none := coverage(a.prefixes, e.p.subnets)
		if !all && !none {
			return false
		}
		if all == a.not {
			return false
		}
	}
	if len(r.CTState) > 0 && slices.Contains(r.CTState, "new") == r.NotCTState {
		return false
	}
	return true
}

// ifaceIn reports whether name is one of names, where a trailing "+"
// (iptables) or "*" (nftables) makes a prefix.
func ifaceIn(name string, names []string) bool {
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "+"); ok && strings.HasPrefix(name, p) {
			return true
		}
		if p, ok := strings.CutSuffix(n, "*"); ok && !strings.HasSuffix(p, `\`) && strings.HasPrefix(name, p) {
			return true
		}
		if n == name {
			return true
		}
	}
	return false
}

// subnetSet is a ring's subnets, prepared once for the checks of every
// node: by name (routes), and sorted as address ranges, so that whether a
// rule's prefixes cover all, some or none of them takes a few binary
// searches, not a pass over every subnet for every rule of every node.
type subnetSet struct {
	list  []netip.Prefix
	names []string       // list's names, in its order
	index map[string]int // name → position in list
	// ranges are the distinct subnets as address ranges, sorted; disjoint
	// says no two overlap (the binary searches need it).
	ranges   []addrRange
	disjoint bool
}

type addrRange struct{ lo, hi netip.Addr }

func newSubnetSet(subnets []netip.Prefix) *subnetSet {
	s := &subnetSet{list: subnets, index: map[string]int{}, disjoint: true}
	for i, p := range subnets {
		name := p.String()
		if _, dup := s.index[name]; dup {
			continue
		}
		s.index[name] = i
		s.names = append(s.names, name)
		s.ranges = append(s.ranges, rangeOf(p))
	}
	slices.SortFunc(s.ranges, func(a, b addrRange) int { return a.lo.Compare(b.lo) })
	for i := 1; i < len(s.ranges); i++ {
		if s.ranges[i].lo.Compare(s.ranges[i-1].hi) <= 0 {
			s.disjoint = false
		}
	}
	return s
}

// rangeOf is the first and last address of p.
func rangeOf(p netip.Prefix) addrRange {
	p = p.Masked()
	lo := p.Addr()
	b := lo.AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	hi, _ := netip.AddrFromSlice(b)
	return addrRange{lo, hi}
}

// parsePrefixes reads a rule's prefixes (an address is a prefix of its
// full length); an unreadable one is left out: it holds none.
func parsePrefixes(prefixes []string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range prefixes {
		q, err := netip.ParsePrefix(p)
		if err != nil {
			a, err := netip.ParseAddr(p)
			if err != nil {
				continue
			}
			q = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, q)
	}
	return out
}

// coverage says whether prefixes hold every one of subnets (all) or none
// of them (none); an unreadable prefix holds none.
func coverage(prefixes []string, subnets *subnetSet) (all, none bool) {
	qs := parsePrefixes(prefixes)
	if !subnets.disjoint {
		return coverageEach(qs, subnets.list)
	}
	rs := subnets.ranges
	covered := make([][2]int, 0, len(qs)) // [from, to) of rs inside each prefix
	none = true
	for _, q := range qs {
		qr := rangeOf(q)
		// the first subnet that ends at or after q's start
		i, _ := slices.BinarySearchFunc(rs, qr.lo, func(r addrRange, a netip.Addr) int { return r.hi.Compare(a) })
		if i < len(rs) && rs[i].lo.Compare(qr.hi) <= 0 && sameFamily(rs[i].lo, qr.lo) {
			none = false
		}
		// the subnets wholly inside q: from the first starting at or
		// after q's start to the last ending at or before q's end
		from, _ := slices.BinarySearchFunc(rs, qr.lo, func(r addrRange, a netip.Addr) int { return r.lo.Compare(a) })
		to, _ := slices.BinarySearchFunc(rs, qr.hi, func(r addrRange, a netip.Addr) int {
			if r.hi.Compare(a) <= 0 {
				return -1
			}
			return 1
		})
		if from < to {
			covered = append(covered, [2]int{from, to})
		}
	}
	// all: the ranges of subnets inside some prefix join up to every subnet
	slices.SortFunc(covered, func(a, b [2]int) int { return a[0] - b[0] })
	reach := 0
	for _, c := range covered {
		if c[0] > reach {
			break
		}
		reach = max(reach, c[1])
	}
	return reach == len(rs), none
}

func sameFamily(a, b netip.Addr) bool { return a.Is4() == b.Is4() }

// coverageEach is coverage subnet by subnet, for subnets that overlap.
func coverageEach(qs []netip.Prefix, subnets []netip.Prefix) (all, none bool) {
	all, none = true, true
	for _, s := range subnets {
		in, overlaps := false, false
		for _, q := range qs {
			in = in || q.Bits() <= s.Bits() && q.Contains(s.Addr())
			overlaps = overlaps || q.Overlaps(s)
		}
		all = all && in
		none = none && !overlaps
	}
	return all, none
}
