package cluster

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// The active mesh (facts holds its evidence, capture its script): from each
// node, ping peers' addresses on each rail with the don't-fragment bit set
// and a payload that fills the sender's MTU, so a jumbo-frame mismatch shows
// on the rail and in the direction where it happens.

// MaxPingTargets bounds the targets one node pings (a 32-node switch with
// two rails each has 62).
const MaxPingTargets = 256

// PingPeers bounds the peers one rail pings on its segment. A segment of at
// most PingPeers+1 rails is meshed whole: every rail pings every other. In a
// larger one (a switch of hundreds or thousands of nodes), the rails, in the
// segment's order r[0] … r[m-1], each ping PingPeers peers at offsets spread
// evenly around that order: r[i] pings r[(i+o_j) mod m] with
// o_j = 1 + j·(m-1)/PingPeers for j = 0 … PingPeers-1. Every rail then sends
// and answers exactly PingPeers probes, its neighbour in the order and
// peers across the whole segment among them, so the mesh grows with the
// node count, not its square, and a rail whose MTU or cable is wrong still
// fails PingPeers probes in each direction.
const PingPeers = 16

// PingPlan lists, per source host, the targets of the mesh: every other
// node's rail on each segment, or PingPeers of them on a larger segment.
// Hosts keep the order of segs' rails.
func PingPlan(segs []Segment) map[string][]facts.PingTarget {
	plan := map[string][]facts.PingTarget{}
	for _, s := range segs {
		m := len(s.Rails)
		peers := m - 1
		if peers > PingPeers {
			peers = PingPeers
		}
		for i, from := range s.Rails {
			if from.MTU <= 28 {
				continue
			}
			for j := 0; j < peers; j++ {
				off := j + 1
				if m-1 > PingPeers {
					off = 1 + j*(m-1)/PingPeers
				}
				to := s.Rails[(i+off)%m]
				if to.Host != from.Host && len(plan[from.Host]) < MaxPingTargets {
					plan[from.Host] = append(plan[from.Host], facts.PingTarget{From: from, To: to})
				}
			}
		}
	}
	return plan
}

// PlanPings is the mesh's plan for the nodes' rails: what acquire is handed
// to run the mesh once the nodes' facts are read.
func PlanPings(nodes []*facts.Node) map[string][]facts.PingTarget {
	var rails []Rail
	for _, n := range nodes {
		rails = append(rails, Rails(n)...)
	}
	return PingPlan(Segments(rails))
}

// PingFindings turns mesh results into findings: one per probe that did not
// pass; the probes a rail sent that all passed are one finding per rail
// once it pinged more than foldPings peers (a large segment), else one per
// probe as well.
func PingFindings(rs []facts.PingResult) []report.Finding {
	type rail struct{ host, netdev string }
	passed := map[rail][]facts.PingResult{}
	var order []rail
	out := make([]report.Finding, 0, len(rs))
	for _, r := range rs {
		f := pingFinding(r)
		if f.Severity != report.OK {
			out = append(out, f)
			continue
		}
		k := rail{r.From.Host, r.From.NetDev}
		if passed[k] == nil {
			order = append(order, k)
		}
		passed[k] = append(passed[k], r)
	}
	for _, k := range order {
		ok := passed[k]
		if len(ok) <= foldPings {
			for _, r := range ok {
				out = append(out, pingFinding(r))
			}
			continue
		}
		f := pingFinding(ok[0])
		f.Subject = fmt.Sprintf("%s → %d peers", k.netdev, len(ok))
		var rtt float64
		for _, r := range ok {
			rtt += r.Full.AvgRTTms
		}
		f.Observed = fmt.Sprintf("%d/%d replies from each of %d peers, avg RTT %.3f ms", ok[0].Full.Received, ok[0].Full.Sent, len(ok), rtt/float64(len(ok)))
		out = append(out, f)
	}
	return out
}

// foldPings is the number of passing probes from one rail listed one by
// one; more are one finding (the JSON of a large mesh would otherwise hold
// a finding per probe: 320,000 at 10,000 nodes of two rails).
const foldPings = 8

func pingFinding(r facts.PingResult) report.Finding {
	f := report.Finding{ID: "cluster.df-ping", Host: r.From.Host,
		Subject:  fmt.Sprintf("%s → %s %s", r.From.NetDev, r.To.Host, r.To.Addr.Addr()),
		Title:    "don't-fragment ping at the rail's MTU",
		Expected: fmt.Sprintf("%d of %d replies to %d-byte frames (ping -M do -s %d)", facts.PingCount, facts.PingCount, r.From.MTU, r.Size()),
		Source:   "seed 000 (MTU 9000 end to end); DGX Spark platform notes, pitfall 5"}
	switch {
	case r.ErrText != "":
		f.Severity, f.Observed = report.NotEvaluated, r.ErrText
	case !r.FullOK:
		f.Severity, f.Observed = report.NotEvaluated, "ping did not run: "+firstLine(r.Output)
		f.Remedy = report.Manual(report.ActionUpgrade, "install iputils-ping on "+r.From.Host)
	case r.Full.Received == r.Full.Sent:
		f.Severity = report.OK
		f.Observed = fmt.Sprintf("%d/%d replies, avg RTT %.3f ms", r.Full.Received, r.Full.Sent, r.Full.AvgRTTms)
	default:
		f.Severity = report.Fail
		if r.Full.Received > 0 {
			f.Severity = report.Warn
		}
		f.Observed = fmt.Sprintf("%d/%d replies (%.0f%% loss) at %d-byte frames", r.Full.Received, r.Full.Sent, r.Full.Loss(), r.From.MTU)
		switch {
		case r.Small != nil && r.Small.Received > 0 && r.Full.Received == 0:
			f.Observed += "; 1500-byte frames pass"
			f.Why = "frames above 1500 bytes are dropped between these ends: an MTU mismatch on the link (or a switch port with a smaller MTU)"
			f.Remedy = report.Manual(report.ActionRun, fmt.Sprintf("set MTU %d on %s's facing netdev and on any switch port between them (netplan `mtu: %d`)", r.From.MTU, r.To.Host, r.From.MTU))
		case r.Small != nil && r.Small.Received == 0:
			f.Observed += "; 1500-byte frames are lost too"
			f.Why = "the peer address does not answer on this rail at all: a cable, link state, addressing or firewall problem"
			f.Remedy = report.Manual(report.ActionCable, fmt.Sprintf("check `ip -br addr` and `ip -br link` on both ends and the cable of %s", r.From.NetDev))
		default:
			f.Why = "lost probes on a direct link point to a bad cable or port, or congestion on a switch"
			f.Remedy = report.Manual(report.ActionCable, "check the cable and `ethtool -S "+r.From.NetDev+"` error counters on both ends")
		}
	}
	return f
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	if s == "" {
		return "no output"
	}
	return s
}
