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
	subnets []netip.Prefix
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

// coverage says whether prefixes hold every one of subnets (all) or none
// of them (none); an unreadable prefix holds none.
func coverage(prefixes []string, subnets []netip.Prefix) (all, none bool) {
	all, none = true, true
	for _, s := range subnets {
		in, overlaps := false, false
		for _, p := range prefixes {
			q, err := netip.ParsePrefix(p)
			if err != nil {
				a, err := netip.ParseAddr(p)
				if err != nil {
					continue
				}
				q = netip.PrefixFrom(a, a.BitLen())
			}
			in = in || q.Bits() <= s.Bits() && q.Contains(s.Addr())
			overlaps = overlaps || q.Overlaps(s)
		}
		all = all && in
		none = none && !overlaps
	}
	return all, none
}
