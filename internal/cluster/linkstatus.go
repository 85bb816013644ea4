package cluster

import (
	"fmt"
	"net/netip"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
)

// judgeLinks completes each link's status with what its ends' own state
// shows: an end without carrier is down, and a link on one function of a
// two-function ConnectX-7 port whose twin is down, unaddressed, without a
// peer in its subnet or on the link's own subnet runs the port at half
// bandwidth. A rail no other node shares whose facing twin is
// cabled but unaddressed is drawn as a link to that twin, so the idle half
// of the port shows.
//
// It also returns a finding for each cause of a down or degraded link on a
// node that is not a DGX Spark (a Spark's own checks report its twins), so
// that no link is drawn worse than ok without a finding that says why and
// what to do.
func judgeLinks(nodes []*facts.Node, segs []Segment, links []report.Link) ([]report.Link, []report.Finding) {
	byHost := map[string]*facts.Node{}
	for _, n := range nodes {
		byHost[n.Host] = n
	}
	netdev := func(host, name string) *facts.NetDev {
		if n := byHost[host]; n != nil {
			return n.NetDev(name)
		}
		return nil
	}
	links = append(links, unaddressedTwinLinks(segs, links, netdev)...)
	ends := linkEnds(links)
	unpaired := map[[2]string]bool{} // host, netdev of rails no other node shares
	for _, s := range segs {
		if s.Hosts() == 1 {
			for _, r := range s.Rails {
				unpaired[[2]string{r.Host, r.NetDev}] = true
			}
		}
	}
	var fs linkFindings
	spark := func(host string) bool { return byHost[host] != nil && platform.IsSpark(byHost[host]) }
	for i := range links {
		l := &links[i]
		if l.Status == report.LinkUnaddressed {
			for _, e := range []report.Endpoint{l.A, l.B} {
				if d := netdev(e.Host, e.NetDev); d != nil && !hasIPv4(d) && !spark(e.Host) {
					fs.add(causeUnaddressed, e.Host, e.NetDev, l)
				}
			}
		}
		for _, e := range []report.Endpoint{l.A, l.B} {
			if d := netdev(e.Host, e.NetDev); d != nil && isDown(d) {
				l.Flag(report.LinkDown, fmt.Sprintf("%s %s is down (no carrier)", e.Host, e.NetDev))
				if !spark(e.Host) {
					fs.add(causeDown, e.Host, e.NetDev, l)
				}
			}
		}
		if l.Status == report.LinkDown || l.Status == report.LinkUnaddressed {
			continue // the link itself carries nothing; its twin says half bandwidth
		}
		for _, e := range []report.Endpoint{l.A, l.B} {
			twin, ok := twinOf(e.NetDev)
			if !ok {
				continue
			}
			d := netdev(e.Host, twin)
			cause := causeNone
			switch {
			case d == nil:
			case isDown(d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s is down: the port runs at half bandwidth", e.Host, twin))
				cause = causeTwinDown
			case !hasIPv4(d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s has no IPv4 address: the port runs at half bandwidth", e.Host, twin))
				cause = causeUnaddressed
			case unpaired[[2]string{e.Host, twin}] && len(ends[[2]string{e.Host, twin}]) == 0:
				// cluster.rail-unpaired reports it
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s has no peer in its subnet: the port runs at half bandwidth", e.Host, twin))
			case sameSubnet(e.Addr, d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s is on the same subnet: the kernel sends the subnet's traffic through one of them", e.Host, twin))
				cause = causeSameSubnet
			}
			if cause != causeNone && !spark(e.Host) {
				fs.add(cause, e.Host, twin, l)
			}
		}
	}
	return links, fs.out
}

// The causes of a link worse than ok that a finding names.
const (
	causeNone = iota
	causeDown
	causeTwinDown
	causeUnaddressed
	causeSameSubnet
)

// linkFindings collects one finding per cause (host and netdev), however
// many links it shows on.
type linkFindings struct {
	out  []report.Finding
	seen map[string]bool
}

func (lf *linkFindings) add(cause int, host, netdev string, l *report.Link) {
	if lf.seen == nil {
		lf.seen = map[string]bool{}
	}
	f := report.Finding{Host: host, Subject: netdev, Source: "DGX Spark platform notes (ConnectX-7 twins: each PCIe function carries about half of a port)"}
	link := fmt.Sprintf("%s %s ↔ %s %s", l.A.Host, l.A.NetDev, l.B.Host, l.B.NetDev)
	switch cause {
	case causeDown:
		f.ID, f.Severity, f.Title = "cluster.link-down", report.Fail, "both ends of a link have carrier"
		f.Observed = fmt.Sprintf("%s %s is down (no carrier); link %s", host, netdev, link)
		f.Expected = "carrier at both ends"
		f.Why = "a link without carrier carries nothing: its rail is lost to NCCL and RoCE"
		f.Remedy = report.Manual(report.ActionCable, fmt.Sprintf("on %s: `sudo ip link set %s up`; if `ip link show %s` still lacks LOWER_UP, re-seat or replace the cable and check the far end", host, netdev, netdev))
	case causeTwinDown:
		f.ID, f.Severity, f.Title = "cluster.link-degraded", report.Warn, "both twins of a cabled port carry traffic"
		f.Observed = fmt.Sprintf("%s %s is down; link %s runs at half bandwidth", host, netdev, link)
		f.Expected = "both twins of the port up and addressed"
		f.Why = "each twin of a ConnectX-7 port carries about half of its bandwidth; with one down the link runs at half"
		f.Remedy = report.Manual(report.ActionRun, fmt.Sprintf("on %s: `sudo ip link set %s up`; if it stays down, check the port's cable", host, netdev))
	case causeUnaddressed:
		f.ID, f.Severity, f.Title = "cluster.link-degraded", report.Warn, "both twins of a cabled port carry traffic"
		f.Observed = fmt.Sprintf("%s %s has no IPv4 address; link %s runs at half bandwidth", host, netdev, link)
		f.Expected = "both twins of the port addressed, each on a subnet of its own shared with the twin it faces"
		f.Why = "each twin of a ConnectX-7 port carries about half of its bandwidth; an unaddressed twin carries nothing"
		f.Remedy = report.Manual(report.ActionRun, fmt.Sprintf("address %s on %s and the twin it faces on the peer in a subnet of their own (same MTU) in /etc/netplan/40-cx7.yaml, then `sudo netplan apply` on both", netdev, host))
	case causeSameSubnet:
		f.ID, f.Severity, f.Title = "cluster.link-degraded", report.Warn, "twins of a port on different subnets"
		f.Observed = fmt.Sprintf("%s %s is on the subnet of its twin; link %s", host, netdev, link)
		f.Expected = "each twin on a subnet of its own"
		f.Why = "with both twins in one subnet the kernel sends the subnet's traffic through one of them, so the port runs at half bandwidth"
		f.Remedy = report.Manual(report.ActionRun, fmt.Sprintf("move %s on %s to a subnet of its own, and the twin it faces on the peer with it (the peer must move too, or the pair loses its link), in /etc/netplan/40-cx7.yaml, then `sudo netplan apply` on both", netdev, host))
	}
	k := f.ID + "\x00" + host + "\x00" + netdev
	if lf.seen[k] {
		return
	}
	lf.seen[k] = true
	lf.out = append(lf.out, f)
}

// unaddressedTwinLinks draws, for each rail no other node shares, the link
// its cable makes to the far node's unaddressed twin: the far node is the
// one the rail's own twin is linked with, the far netdev that link's far
// end's twin.
func unaddressedTwinLinks(segs []Segment, links []report.Link, netdev func(host, name string) *facts.NetDev) []report.Link {
	var out []report.Link
	var ends map[[2]string][]int
	for _, s := range segs {
		if s.Hosts() != 1 {
			continue
		}
		if ends == nil {
			ends = linkEnds(links)
		}
		for _, r := range s.Rails {
			twin, ok := twinOf(r.NetDev)
			if !ok {
				continue
			}
			for _, li := range ends[[2]string{r.Host, twin}] {
				l := links[li]
				far := l.B
				if l.B.Host == r.Host && l.B.NetDev == twin {
					far = l.A
				} else if l.A.Host != r.Host || l.A.NetDev != twin {
					continue
				}
				farTwin, ok := twinOf(far.NetDev)
				d := netdev(far.Host, farTwin)
				if !ok || d == nil || hasIPv4(d) || isDown(d) {
					continue
				}
				end := report.Endpoint{Host: far.Host, NetDev: farTwin, RDMADev: d.RDMADev, MTU: d.MTU}
				if d.SpeedMbps != nil {
					end.SpeedMbps = *d.SpeedMbps
				}
				nl := report.Link{A: endpoint(r), B: end, Subnet: s.Subnet.String(), Status: report.LinkOK}
				if l.A == far { // the same side as the twins' link
					nl.A, nl.B = end, endpoint(r)
				}
				nl.Flag(report.LinkUnaddressed, fmt.Sprintf("%s %s has no IPv4 address: this twin carries nothing, the port runs at half bandwidth", far.Host, farTwin))
				out = append(out, nl)
				break
			}
		}
	}
	return out
}

// twinOf names the other function of a DGX Spark ConnectX-7 port.
func twinOf(name string) (string, bool) {
	for _, p := range platform.SparkPorts {
		switch name {
		case p.Twins[0]:
			return p.Twins[1], true
		case p.Twins[1]:
			return p.Twins[0], true
		}
	}
	return "", false
}

// isDown: the kernel says the netdev is down, or it has no carrier.
func isDown(d *facts.NetDev) bool {
	return d.OperState == "down" || d.OperState == "lowerlayerdown" || d.Carrier != nil && !*d.Carrier
}

func hasIPv4(d *facts.NetDev) bool {
	for _, a := range d.Addrs {
		if p, err := netip.ParsePrefix(a.CIDR); err == nil && p.Addr().Is4() {
			return true
		}
	}
	return false
}

// sameSubnet: the netdev holds an IPv4 address in addr's subnet.
func sameSubnet(addr string, d *facts.NetDev) bool {
	p, err := netip.ParsePrefix(addr)
	if err != nil {
		return false
	}
	for _, a := range d.Addrs {
		if q, err := netip.ParsePrefix(a.CIDR); err == nil && q.Addr().Is4() && q.Masked() == p.Masked() {
			return true
		}
	}
	return false
}

// linkEnds indexes links by their ends (host, netdev), in order, so that
// finding a netdev's links takes a lookup, not a pass over every link.
func linkEnds(links []report.Link) map[[2]string][]int {
	ends := make(map[[2]string][]int, 2*len(links))
	for i, l := range links {
		a, b := [2]string{l.A.Host, l.A.NetDev}, [2]string{l.B.Host, l.B.NetDev}
		ends[a] = append(ends[a], i)
		if b != a {
			ends[b] = append(ends[b], i)
		}
	}
	return ends
}
