package cluster

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Segment is a set of rails on different nodes that share a subnet: two
// rails are a direct cable, more are a switch (or a misaddressed network).
type Segment struct {
	Subnet netip.Prefix
	Rails  []Rail
	// LinkLocal is true when the rails use 169.254/16 and were paired by
	// netdev name, since addresses alone cannot tell which faces which.
	LinkLocal bool
}

// Hosts counts the distinct nodes on the segment.
func (s Segment) Hosts() int {
	seen := map[string]bool{}
	for _, r := range s.Rails {
		seen[r.Host] = true
	}
	return len(seen)
}

// Segments groups rails into subnets. Rails whose prefixes overlap (one
// /24 inside another's /16) land in one segment, so a prefix-length mismatch
// shows as a problem of that link instead of two lonely rails.
//
// While every subnet so far has one prefix length, two overlap only where
// they are equal, so a rail finds its segment by its subnet: linear in the
// rails. A rail of another length (a mismatch) makes the rest try each
// segment in turn, as the grouping is defined.
func Segments(rails []Rail) []Segment {
	var segs []Segment
	bySubnet := map[netip.Prefix]int{} // while uniform
	byNetDev := map[string]int{}       // link-local segments
	uniform := -1                      // the one prefix length so far; -2 once mixed
	for _, r := range rails {
		if linkLocal.Contains(r.Addr.Addr()) {
			if i, ok := byNetDev[r.NetDev]; ok {
				segs[i].Rails = append(segs[i].Rails, r)
			} else {
				byNetDev[r.NetDev] = len(segs)
				segs = append(segs, Segment{Subnet: linkLocal, Rails: []Rail{r}, LinkLocal: true})
			}
			continue
		}
		p := r.Subnet()
		if uniform == -1 || uniform == p.Bits() {
			uniform = p.Bits()
			if i, ok := bySubnet[p]; ok {
				segs[i].Rails = append(segs[i].Rails, r)
			} else {
				bySubnet[p] = len(segs)
				segs = append(segs, Segment{Subnet: p, Rails: []Rail{r}})
			}
			continue
		}
		uniform = -2
		placed := false
		for i := range segs {
			s := &segs[i]
			if !s.LinkLocal && (s.Subnet.Contains(r.Addr.Addr()) || p.Contains(s.Subnet.Addr())) {
				if p.Bits() < s.Subnet.Bits() {
					s.Subnet = p
				}
				s.Rails = append(s.Rails, r)
				placed = true
				break
			}
		}
		if !placed {
			segs = append(segs, Segment{Subnet: p, Rails: []Rail{r}})
		}
	}
	sort.SliceStable(segs, func(i, j int) bool {
		a, b := segs[i], segs[j]
		if a.Subnet != b.Subnet {
			return a.Subnet.Addr().Less(b.Subnet.Addr())
		}
		return a.Rails[0].NetDev < b.Rails[0].NetDev
	})
	return segs
}

func endpoint(r Rail) report.Endpoint {
	return report.Endpoint{Host: r.Host, NetDev: r.NetDev, RDMADev: r.RDMADev, Addr: r.Addr.String(), MTU: r.MTU, SpeedMbps: r.SpeedMbps}
}

// SwitchHost is the Endpoint.Host of the switch side of a switched rail.
const SwitchHost = report.SwitchHost

// buildLinks turns segments into links and the findings about their ends.
// A two-node segment is one link; on a switch segment each rail gets a link
// to the switch, checked against the segment's majority MTU and speed.
func buildLinks(segs []Segment, topo Topology) ([]report.Link, []report.Finding) {
	var links []report.Link
	var out []report.Finding
	for _, s := range segs {
		switch {
		case s.Hosts() == 1:
			out = append(out, unpairedFindings(s)...)
		case len(s.Rails) == 2:
			l, fs := directLink(s, topo)
			links = append(links, l)
			out = append(out, fs...)
		default:
			ls, fs := switchLinks(s)
			links = append(links, ls...)
			out = append(out, fs...)
		}
	}
	return links, out
}

func directLink(s Segment, topo Topology) (report.Link, []report.Finding) {
	a, b := s.Rails[0], s.Rails[1]
	l := report.Link{A: endpoint(a), B: endpoint(b), Subnet: s.Subnet.String(), Status: report.LinkOK}
	subject := linkName(a, b)
	var out []report.Finding
	add := func(f report.Finding, status report.LinkStatus, problem string) {
		f.Subject = subject
		out = append(out, f)
		l.Flag(status, problem)
	}
	if a.MTU != b.MTU {
		add(mtuMismatch(a, b), report.LinkFaulty, fmt.Sprintf("MTU %d ≠ %d", a.MTU, b.MTU))
	}
	if a.SpeedMbps > 0 && b.SpeedMbps > 0 && a.SpeedMbps != b.SpeedMbps {
		add(speedMismatch(a, b), report.LinkDegraded, fmt.Sprintf("speed %s ≠ %s", mbps(a.SpeedMbps), mbps(b.SpeedMbps)))
	}
	if a.Addr.Bits() != b.Addr.Bits() {
		add(prefixMismatch(a, b), report.LinkFaulty, fmt.Sprintf("prefix /%d ≠ /%d", a.Addr.Bits(), b.Addr.Bits()))
	}
	if f, bad := cablingFinding(a, b, topo); bad {
		add(f, report.LinkDegraded, fmt.Sprintf("port %d ↔ port %d", a.Port, b.Port))
	}
	if l.OK() {
		obs := fmt.Sprintf("MTU %d, %s, %s", a.MTU, speedOrUnknown(a.SpeedMbps), s.Subnet)
		if s.LinkLocal {
			obs += "; paired by netdev name (link-local addresses do not show which port faces which)"
		}
		out = append(out, report.Finding{ID: "cluster.link", Severity: report.OK, Subject: subject, Title: "link ends agree", Observed: obs})
	}
	return l, out
}

func switchLinks(s Segment) ([]report.Link, []report.Finding) {
	var links []report.Link
	var out []report.Finding
	mtu := majorityInt(s.Rails, func(r Rail) int { return r.MTU })
	speed := majorityInt(s.Rails, func(r Rail) int { return r.SpeedMbps })
	for _, r := range s.Rails {
		l := report.Link{A: endpoint(r), B: report.Endpoint{Host: SwitchHost, NetDev: s.Subnet.String(), MTU: mtu, SpeedMbps: speed}, Subnet: s.Subnet.String(), Status: report.LinkOK}
		if r.MTU != mtu {
			l.Flag(report.LinkFaulty, fmt.Sprintf("MTU %d, the segment's others %d", r.MTU, mtu))
			out = append(out, report.Finding{ID: "cluster.mtu-mismatch", Severity: report.Fail, Host: r.Host, Subject: r.NetDev,
				Title: "MTU differs from the rest of its switched subnet", Observed: fmt.Sprintf("%s %s MTU %d; most of %s uses %d", r.Host, r.NetDev, r.MTU, s.Subnet, mtu),
				Expected: fmt.Sprintf("MTU %d (and the switch port at least as large)", mtu), Why: mtuWhy,
				Remedy: report.Manual(report.ActionRun, fmt.Sprintf("sudo ip link set %s mtu %d on %s, and set `mtu: %d` for it in /etc/netplan/40-cx7.yaml so it persists", r.NetDev, mtu, r.Host, mtu)), Source: mtuSource})
		}
		if r.SpeedMbps > 0 && speed > 0 && r.SpeedMbps < speed {
			l.Flag(report.LinkDegraded, fmt.Sprintf("speed %s, the segment's others %s", mbps(r.SpeedMbps), mbps(speed)))
			out = append(out, report.Finding{ID: "cluster.speed-mismatch", Severity: report.Warn, Host: r.Host, Subject: r.NetDev,
				Title: "slower than the rest of its switched subnet", Observed: fmt.Sprintf("%s %s at %s; most of %s at %s", r.Host, r.NetDev, mbps(r.SpeedMbps), s.Subnet, mbps(speed)),
				Expected: mbps(speed), Why: "the slowest port sets the pace of every collective",
				Remedy: report.Manual(report.ActionInspect, "force the switch port to 200G (auto-negotiation may settle at 100G), then check `ethtool "+r.NetDev+" | grep Speed`"), Source: "DGX Spark platform notes, pitfall 4"})
		}
		links = append(links, l)
	}
	return links, out
}

// unpairedFindings: a rail whose subnet no other node shares. Typically the
// twin on the far node is unaddressed, or the two nodes use different
// subnets on one cable.
func unpairedFindings(s Segment) []report.Finding {
	var out []report.Finding
	for _, r := range s.Rails {
		out = append(out, report.Finding{ID: "cluster.rail-unpaired", Severity: report.Warn, Host: r.Host, Subject: r.NetDev,
			Title:    "no other node has an address on this rail's subnet",
			Observed: fmt.Sprintf("%s %s %s: no peer in %s", r.Host, r.NetDev, r.Addr, s.Subnet),
			Expected: "the node at the other end of the cable addressed in the same subnet",
			Why:      "NCCL and RoCE reach a peer only within the subnet; this rail carries no traffic, so the port runs at half bandwidth or not at all",
			Remedy:   report.Manual(report.ActionRun, fmt.Sprintf("address the facing netdev of the peer node in %s (e.g. the same netdev name, host part .11), MTU %d, in /etc/netplan/40-cx7.yaml, then `sudo netplan apply`", s.Subnet, r.MTU)),
			Source:   "NVIDIA DGX Spark playbooks (connect two Sparks); DGX Spark platform notes, pitfall 1"})
	}
	return out
}

const (
	mtuWhy    = "frames larger than the smaller end's MTU are dropped, so RoCE and NCCL stall or fall back, and large transfers fail where small ones pass"
	mtuSource = "seed 000 (MTU 9000 on ConnectX-7); DGX Spark platform notes, pitfall 5"
)

func mtuMismatch(a, b Rail) report.Finding {
	want := max(a.MTU, b.MTU)
	low := a
	if b.MTU < a.MTU {
		low = b
	}
	return report.Finding{ID: "cluster.mtu-mismatch", Severity: report.Fail, Title: "both ends of a link have the same MTU",
		Observed: fmt.Sprintf("%s %s MTU %d, %s %s MTU %d", a.Host, a.NetDev, a.MTU, b.Host, b.NetDev, b.MTU),
		Expected: "equal MTU on both ends (9000 on DGX Spark)", Why: mtuWhy,
		Remedy: report.Manual(report.ActionRun, fmt.Sprintf("on %s: sudo ip link set %s mtu %d, and set `mtu: %d` for %s in /etc/netplan/40-cx7.yaml so it persists", low.Host, low.NetDev, want, want, low.NetDev)),
		Source: mtuSource}
}

func speedMismatch(a, b Rail) report.Finding {
	return report.Finding{ID: "cluster.speed-mismatch", Severity: report.Warn, Title: "both ends of a link at the same speed",
		Observed: fmt.Sprintf("%s %s %s, %s %s %s", a.Host, a.NetDev, mbps(a.SpeedMbps), b.Host, b.NetDev, mbps(b.SpeedMbps)),
		Expected: "the same negotiated speed (200 Gb/s per Spark port)", Why: "a link runs at the slower end's speed",
		Remedy: report.Manual(report.ActionCable, "check the cable (QSFP112 for 200G) and `ethtool <netdev> | grep Speed` on both nodes; on a switch force 200G"),
		Source: "DGX Spark platform notes, pitfall 4"}
}

func prefixMismatch(a, b Rail) report.Finding {
	return report.Finding{ID: "cluster.subnet-mismatch", Severity: report.Warn, Title: "both ends of a link in the same subnet",
		Observed: fmt.Sprintf("%s %s %s, %s %s %s", a.Host, a.NetDev, a.Addr, b.Host, b.NetDev, b.Addr),
		Expected: "the same prefix length on both ends", Why: "different prefixes give the two ends different routes; replies may leave by another interface",
		Remedy: report.Manual(report.ActionRun, "use the same prefix (e.g. /24) on both ends in /etc/netplan/40-cx7.yaml, then `sudo netplan apply`"),
		Source: "NVIDIA DGX Spark playbooks (static per-twin /24 subnets)"}
}

// cablingFinding checks the physical ports a link joins: the same port on
// both nodes of a direct pair, port 0 to port 1 in the three-node ring.
func cablingFinding(a, b Rail, topo Topology) (report.Finding, bool) {
	if a.Port < 0 || b.Port < 0 {
		return report.Finding{}, false
	}
	switch {
	case (topo == TwoNodesOneCable || topo == TwoNodesTwoCables) && a.Port != b.Port:
		return report.Finding{ID: "cluster.port-mismatch", Severity: report.Warn, Title: "the same physical port on both nodes",
			Observed: fmt.Sprintf("%s port %d (%s) ↔ %s port %d (%s)", a.Host, a.Port, a.NetDev, b.Host, b.Port, b.NetDev),
			Expected: "the same port index on both nodes",
			Why:      "NCCL pairs devices by name and index; different ports on the two ends make it pair the wrong devices",
			Remedy:   report.Manual(report.ActionCable, "recable so both ends use the same QSFP port, or address the netdevs of the port that is cabled"),
			Source:   "NVIDIA DGX Spark playbooks; DGX Spark platform notes, pitfall 3"}, true
	case topo.IsRing() && a.Port == b.Port:
		return report.Finding{ID: "cluster.ring-cabling", Severity: report.Fail, Title: "ring cabled port 0 to port 1",
			Observed: fmt.Sprintf("%s port %d (%s) ↔ %s port %d (%s)", a.Host, a.Port, a.NetDev, b.Host, b.Port, b.NetDev),
			Expected: "every cable joins one node's port 0 to the next node's port 1 (N1.P0–N2.P1, N2.P0–N3.P1, …, Nn.P0–N1.P1)",
			Why:      "with p0–p0 or p1–p1 cables NCCL pairs the wrong HCAs and connections fail (ibv_modify_qp error 110)",
			Remedy:   report.Manual(report.ActionCable, "recable each node's port 0 to the next node's port 1 (N1.P0–N2.P1, …, Nn.P0–N1.P1); keep NCCL_IB_SUBNET_AWARE_ROUTING=1"),
			Source:   "NVIDIA DGX Spark playbooks (three-node ring); community reports of p0–p0 cabling failing with error 110"}, true
	}
	return report.Finding{}, false
}

func linkName(a, b Rail) string {
	return fmt.Sprintf("%s:%s↔%s:%s", a.Host, a.NetDev, b.Host, b.NetDev)
}

func mbps(v int) string {
	if v%1000 == 0 {
		return fmt.Sprintf("%d Gb/s", v/1000)
	}
	return fmt.Sprintf("%d Mb/s", v)
}

func speedOrUnknown(v int) string {
	if v <= 0 {
		return "speed unknown"
	}
	return mbps(v)
}

// majorityInt returns the most common non-zero value (the smallest on a tie).
func majorityInt(rs []Rail, f func(Rail) int) int {
	count := map[int]int{}
	for _, r := range rs {
		if v := f(r); v != 0 {
			count[v]++
		}
	}
	best, n := 0, 0
	for v, c := range count {
		if c > n || c == n && v < best {
			best, n = v, c
		}
	}
	return best
}
