package cluster

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// ringSource is where routed rings' needs are described.
const ringSource = "FujitsuPolycom/sparkring docs/PREREQUISITES.md; christopherowen/dgx-spark-networking (community, 2026)"

// ringFindings checks what a switchless ring of four or more nodes needs
// beyond its cables: each node reaches the subnets of the nodes it is not
// cabled to through a neighbour, so every node must forward, route each
// such subnet, accept forwarded traffic (Docker's FORWARD policy DROP
// "presents exactly like a dead cable") and not drop it by strict
// reverse-path filtering.
func ringFindings(nodes []*facts.Node, a *Analysis) []report.Finding {
	if !a.Topology.IsRing() {
		return nil
	}
	out := ringKnownIssues(nodes)
	if len(nodes) < 4 {
		return out
	}
	var subnets []netip.Prefix
	for _, s := range a.Segments {
		subnets = append(subnets, s.Subnet)
	}
	set := newSubnetSet(subnets)
	byHost := map[string][]Rail{}
	for _, r := range a.Rails {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for _, n := range nodes {
		var own []netip.Prefix
		var rails []string
		for _, r := range byHost[n.Host] {
			own = append(own, r.Subnet())
			rails = append(rails, r.NetDev)
		}
		out = append(out, forwarding(n), routesTo(n, set, own), forwardPolicy(n, rails, set), rpFilter(n, rails))
	}
	return slices.DeleteFunc(out, func(f report.Finding) bool { return f.ID == "" })
}

// ringKnownIssues matches the known issues that apply to rings (NCCL
// versions and settings) on every node of one.
func ringKnownIssues(nodes []*facts.Node) []report.Finding {
	ks, err := expect.KnownIssues()
	if err != nil {
		return nil
	}
	var out []report.Finding
	for _, k := range ks {
		if k.Match.RingNodesMin == 0 || len(nodes) < k.Match.RingNodesMin {
			continue
		}
		for _, n := range nodes {
			if seen, ok := check.KnownIssueSeen(n, k); ok {
				f := check.KnownFinding(k, seen+fmt.Sprintf(" in a %d-node ring", len(nodes)))
				f.Host = n.Host
				out = append(out, f)
			}
		}
	}
	return out
}

// SysctlDropIn is the kernel parameters drop-in sparkrig fix writes (a ring
// node's forwarding among them); the manual remedies name the same file.
const SysctlDropIn = "/etc/sysctl.d/60-sparkrig.conf"

func forwarding(n *facts.Node) report.Finding {
	f := report.Finding{ID: "cluster.ring-forwarding", Host: n.Host, Subject: "net.ipv4.ip_forward", Title: "the node forwards between its ring ports",
		Expected: "1", Source: ringSource}
	v, ok := n.Sysctls["net.ipv4.ip_forward"]
	switch {
	case !ok:
		f.Severity, f.Observed = report.NotEvaluated, "net.ipv4.ip_forward was not captured"
	case strings.TrimSpace(v) == "1":
		f.Severity, f.Observed = report.OK, "1"
	default:
		f.Severity, f.Observed = report.Fail, strings.TrimSpace(v)
		f.Why = "in a ring of four or more nodes, traffic between nodes that share no cable passes through a neighbour; a node that does not forward drops it"
		f.Remedy = report.Manual(report.ActionRun, "echo 'net.ipv4.ip_forward = 1' | sudo tee -a "+SysctlDropIn+" && sudo sysctl --system (the line sparkrig fix --topology ring writes there)")
	}
	return f
}

// routesTo looks each of the node's routes up among the ring's subnets
// (not each subnet among its routes): linear in the node's routes and
// subnets, and the subnets it lacks are listed only where it lacks some.
func routesTo(n *facts.Node, all *subnetSet, own []netip.Prefix) report.Finding {
	f := report.Finding{ID: "cluster.ring-routes", Host: n.Host, Subject: "routes", Title: "a route to every ring subnet the node is not on",
		Expected: "a route through a neighbour for each", Source: ringSource}
	if !n.Has(facts.SrcRoutes) {
		f.Severity, f.Observed = report.NotEvaluated, "ip route was not captured"
		return f
	}
	ownSet := map[string]bool{}
	for _, s := range own {
		if _, ok := all.index[s.String()]; ok {
			ownSet[s.String()] = true
		}
	}
	routed := map[string]bool{}
	for _, r := range n.Routes {
		if _, ok := all.index[r.Dst]; ok && r.Gateway != "" && !ownSet[r.Dst] {
			routed[r.Dst] = true
		}
	}
	others := len(all.names) - len(ownSet)
	if len(routed) == others {
		f.Severity, f.Observed = report.OK, fmt.Sprintf("all %d other subnets routed", others)
		return f
	}
	const shown = 8
	var missing []string
	for _, s := range all.names {
		if !ownSet[s] && !routed[s] {
			if len(missing) == shown {
				missing = append(missing, fmt.Sprintf("and %d more", others-len(routed)-shown))
				break
			}
			missing = append(missing, s)
		}
	}
	f.Severity = report.Fail
	f.Observed = "no route to " + strings.Join(missing, ", ")
	f.Why = "without a route, traffic to a node that shares no cable with this one leaves by the default route or not at all: NCCL connections to it time out"
	f.Remedy = report.Manual(report.ActionRun, "sparkrig fix --topology ring plans a netplan route for each through the nearer neighbour (or: sudo ip route add SUBNET via NEIGHBOUR-ADDRESS)")
	return f
}

// forwardPolicy judges the node's packet filter as the kernel applies it
// to what the ring forwards: each way between two of its ring netdevs,
// through every base chain hooked at forward (iptables' filter FORWARD,
// nftables' chains, iptables-nft's among them), by priority, with their
// policies and the verdicts of the rules that match, jumps into DOCKER-USER
// and the like included.
func forwardPolicy(n *facts.Node, rails []string, subnets *subnetSet) report.Finding {
	f := report.Finding{ID: "cluster.ring-forward-drop", Host: n.Host, Subject: "FORWARD", Title: "forwarded ring traffic is accepted",
		Expected: "every forward chain (iptables FORWARD, nftables) accepts traffic between the ring netdevs: policy accept, or a rule accepting the ring (DOCKER-USER where Docker is installed)",
		Source:   "FujitsuPolycom/sparkring docs/PREREQUISITES.md (Docker sets FORWARD DROP); docs.docker.com/engine/network/firewall-iptables (DOCKER-USER is processed first); nft(8) (base chains by priority: accept ends one chain, drop all)"}
	fw := n.Firewall
	if fw == nil {
		f.Severity, f.Observed = report.NotEvaluated, "the filter rules were not readable (iptables -S and nft list ruleset need root: run with sudo)"
		if st := n.Sources[facts.SrcFirewall]; st.Status == "unparsable" {
			f.Observed = "the filter rules were not readable: " + st.Detail
		}
		return f
	}
	rails = slices.Compact(slices.Sorted(slices.Values(rails)))
	// With iptables-nft, iptables' filter table is nftables' "ip filter":
	// iptables -S shows it whole (nft shows some of its matches only as
	// "xt"), so it is judged once, from iptables.
	nft := fw.NFT
	if fw.Iptables != nil {
		nft = slices.DeleteFunc(slices.Clone(nft), func(c facts.FilterChain) bool { return c.Table == "ip filter" })
	}
	type drop struct{ chain, how string }
	var drops []drop
	var ways []string
	for _, in := range rails {
		for _, out := range rails {
			if in == out {
				continue
			}
			p := ringPacket{in: in, out: out, subnets: subnets}
			chain, how := forwardDrop(fw.Iptables, p)
			if chain == "" {
				chain, how = forwardDrop(nft, p)
			}
			if chain == "" {
				continue
			}
			if !slices.Contains(drops, drop{chain, how}) {
				drops = append(drops, drop{chain, how})
			}
			ways = append(ways, in+" → "+out)
		}
	}
	if len(drops) == 0 {
		if fw.NFTError != "" {
			f.Severity, f.Observed = report.NotEvaluated, "iptables accepts the ring's traffic, but nftables' ruleset was not readable ("+fw.NFTError+")"
			return f
		}
		f.Severity, f.Observed = report.OK, fmt.Sprintf("every forward chain passes the ring's traffic between its %d netdevs", len(rails))
		return f
	}
	var by []string
	for _, d := range drops {
		by = append(by, d.chain+" ("+d.how+")")
	}
	f.Severity = report.Fail
	if len(ways) > 4 {
		ways = append(ways[:4], fmt.Sprintf("and %d more", len(ways)-4))
	}
	f.Observed = strings.Join(by, "; ") + " drops " + strings.Join(ways, ", ")
	f.Why = "installing Docker sets the FORWARD policy to DROP: a ring neighbour then drops the traffic it should pass on, which looks exactly like a dead cable"
	f.Remedy = report.Manual(report.ActionRun, "accept the ring before Docker's rules: sudo iptables -I DOCKER-USER -i RAIL -o RAIL -j ACCEPT for each pair of ring netdevs ("+strings.Join(rails, ", ")+"), persisted with a systemd unit or iptables-persistent; or sudo iptables -P FORWARD ACCEPT where Docker is not used")
	for _, d := range drops {
		if strings.HasPrefix(d.chain, facts.IptablesTable+" ") {
			continue
		}
		f.Remedy.Steps = append(f.Remedy.Steps, report.Step{Action: report.ActionRun, Text: fmt.Sprintf("accept the ring in nftables' %s before its drop: sudo nft insert rule %s iifname { %s } oifname { %s } accept (persisted in /etc/nftables.conf)",
			d.chain, d.chain, strings.Join(rails, ", "), strings.Join(rails, ", "))})
	}
	return f
}

func rpFilter(n *facts.Node, rails []string) report.Finding {
	f := report.Finding{ID: "cluster.ring-rp-filter", Host: n.Host, Subject: "rp_filter", Title: "reverse-path filtering lets routed ring traffic in",
		Expected: "0 or 2 (loose) on the ring netdevs", Source: "Linux ip-sysctl.rst (rp_filter: the maximum of conf/all and conf/<dev> applies)"}
	all, ok := n.Sysctls["net.ipv4.conf.all.rp_filter"]
	if !ok {
		f.Severity, f.Observed = report.NotEvaluated, "rp_filter was not captured"
		return f
	}
	var strict []string
	for _, d := range rails {
		v := n.Sysctls["net.ipv4.conf."+d+".rp_filter"]
		if strings.TrimSpace(all) == "1" && strings.TrimSpace(v) != "2" || strings.TrimSpace(v) == "1" && strings.TrimSpace(all) != "2" {
			strict = append(strict, d)
		}
	}
	if len(strict) == 0 {
		f.Severity, f.Observed = report.OK, "not strict on any ring netdev"
		return f
	}
	slices.Sort(strict)
	strict = slices.Compact(strict)
	f.Severity, f.Observed = report.Warn, "strict (1) on "+strings.Join(strict, ", ")
	f.Why = "strict filtering drops a packet that arrives on a port other than the one this node would route the reply out of, which a ring's two ways round produce"
	f.Remedy = report.Manual(report.ActionRun, "sudo sysctl -w net.ipv4.conf.all.rp_filter=2 and persist it in /etc/sysctl.d (sparkrig fix --topology ring writes it)")
	return f
}
