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
func judgeLinks(nodes []*facts.Node, segs []Segment, links []report.Link) []report.Link {
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
	for i := range links {
		l := &links[i]
		for _, e := range []report.Endpoint{l.A, l.B} {
			if d := netdev(e.Host, e.NetDev); d != nil && isDown(d) {
				l.Flag(report.LinkDown, fmt.Sprintf("%s %s is down (no carrier)", e.Host, e.NetDev))
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
			switch {
			case d == nil:
			case isDown(d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s is down: the port runs at half bandwidth", e.Host, twin))
			case !hasIPv4(d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s has no IPv4 address: the port runs at half bandwidth", e.Host, twin))
			case unpaired[[2]string{e.Host, twin}] && len(ends[[2]string{e.Host, twin}]) == 0:
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s has no peer in its subnet: the port runs at half bandwidth", e.Host, twin))
			case sameSubnet(e.Addr, d):
				l.Flag(report.LinkDegraded, fmt.Sprintf("its twin %s %s is on the same subnet: the kernel sends the subnet's traffic through one of them", e.Host, twin))
			}
		}
	}
	return links
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
