package allpairs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"

	"github.com/sparkrig/sparkrig/internal/report"
)

// SuspectName says in words what a suspect names.
func (r *Result) SuspectName(s Suspect) string {
	switch s.Kind {
	case SuspectNode:
		return r.Names[s.Node] + " (both directions of its port)"
	case SuspectCable:
		if s.Side == Tx {
			return r.Names[s.Node] + "'s cable, sending (" + r.Names[s.Node] + " → switch)"
		}
		return r.Names[s.Node] + "'s cable, receiving (switch → " + r.Names[s.Node] + ")"
	}
	if s.Kind == SuspectLost {
		return r.Names[s.Node] + " (stopped answering during the run)"
	}
	return "the path " + r.Names[s.Node] + " → " + r.Names[s.Peer]
}

// Report is the run as the report model holds it, and a finding for each
// suspect not cleared: confirmed ones fail, unresolved ones warn.
func (r *Result) Report(schedule Schedule, tool, segment string) (*report.AllPairs, []report.Finding) {
	j := r.Judgement
	ap := &report.AllPairs{Schedule: "all-pairs", Tool: tool, Segment: segment, TestSeconds: r.TestDuration.Seconds(),
		Rounds: len(r.Rounds), WallSeconds: r.Wall.Round(time.Millisecond).Seconds(), Nodes: r.Names, Matrix: r.Matrix(),
		Reference: j.Reference, RefName: j.RefName, Floor: j.Floor, Rules: RulesSource, Suspects: []report.AllPairsSuspect{}}
	if schedule == Ring {
		ap.Schedule = "ring"
	}
	for _, s := range j.Scores {
		ap.Scores = append(ap.Scores, report.AllPairsScore{Node: r.Names[s.Node], TxPass: s.TxPass, TxTests: s.TxTest,
			RxPass: s.RxPass, RxTests: s.RxTest, TxMedian: s.TxMedian, RxMedian: s.RxMedian})
	}
	for _, m := range r.Measurements {
		if m.Retest {
			ap.Retests = append(ap.Retests, report.AllPairsDirection{From: r.Names[m.From], To: r.Names[m.To], Gbps: m.Gbps, Error: m.Err})
		}
	}
	var fs []report.Finding
	tools := map[string]bool{}
	index := map[Pair]int{}
	for _, m := range r.Measurements {
		if m.Retest || m.From >= len(r.Names) || m.To >= len(r.Names) {
			continue
		}
		k := pairOf(m.Test)
		i, ok := index[k]
		if !ok {
			i, index[k] = len(ap.Pairs), len(ap.Pairs)
			ap.Pairs = append(ap.Pairs, report.AllPairsPair{A: r.Names[k.A], B: r.Names[k.B], Tool: m.Tool})
		}
		if m.Tool != "" {
			tools[m.Tool] = true
		}
		p := &ap.Pairs[i]
		for _, c := range m.Moved {
			if !slices.Contains(p.Moved, c) {
				p.Moved = append(p.Moved, c)
			}
		}
	}
	switch {
	case len(tools) > 1:
		ap.Tool = ToolRDMA + " where both ends have RDMA, else " + ToolTCP
	case len(tools) == 1:
		for t := range tools {
			ap.Tool = t
		}
	}
	for _, t := range slices.Sorted(maps.Keys(j.refs)) {
		ap.Tools = append(ap.Tools, report.AllPairsTool{Tool: t, Reference: j.refs[t].Gbps, Floor: j.refs[t].Floor()})
	}
	for _, p := range ap.Pairs {
		if len(p.Moved) > 0 {
			fs = append(fs, bench.ErrorsFinding(p.A+"↔"+p.B, p.Moved))
		}
	}
	ap.Unjudged, fs = r.unjudged(fs)
	for _, s := range j.Suspects {
		rs := report.AllPairsSuspect{Kind: s.Kind, Node: r.Names[s.Node], Side: string(s.Side), Status: s.Status,
			Name: r.SuspectName(s), Evidence: s.Evidence}
		if s.Kind == SuspectPair {
			rs.Peer = r.Names[s.Peer]
		}
		ap.Suspects = append(ap.Suspects, rs)
		if s.Status == "cleared" {
			continue
		}
		sev := report.Fail
		if s.Status != "confirmed" {
			sev = report.Warn
		}
		f := report.Finding{ID: "allpairs." + s.Kind, Severity: sev, Host: r.Names[s.Node],
			Observed: strings.Join(s.Evidence, "; "), Source: RulesSource}
		switch s.Kind {
		case SuspectLost:
			f.Subject = "node"
			f.Title = "every node answers until the run ends"
			f.Expected = "the node answers over its management network and carries traffic"
			f.Why = "the node stopped answering during the run: it lost power, its links or its management network, or hung; its tests after that are not a rate"
			f.Remedy = report.Manual(report.ActionInspect, "reach the node through its BMC or console: power, link lights, kernel log (journalctl -k); then run qualify again")
		case SuspectNode:
			f.Subject = "port"
			f.Title = "the node moves traffic at the segment's rate both ways"
			f.Expected = fmt.Sprintf("at least %s Gb/s in each direction (%.0f %% of the %s %s Gb/s)", Rate(j.Floor), 100*j.Floor/max(j.Reference, 1e-9), j.RefName, Rate(j.Reference))
			f.Why = "every pair with this node is slow in both directions while the other pairs are not: the node's port, its cable or the node itself"
			f.Remedy = report.Manual(report.ActionCable, "check the node's port (ethtool, its error counters), reseat or replace its cable, then its switch port; reboot a node whose port trained degraded")
		case SuspectCable:
			f.Subject = "cable " + string(s.Side)
			f.Title = "each direction of the node's cable moves traffic at the segment's rate"
			f.Expected = fmt.Sprintf("at least %s Gb/s", Rate(j.Floor))
			f.Why = "one direction of one node's link is slow with every partner and the other direction is not: a shaper, a transceiver or a fibre on one side"
			f.Remedy = report.Manual(report.ActionInspect, "look at that direction: the node's qdisc (tc qdisc show), its transmit and the switch port's counters, the cable's transceiver")
		default:
			f.Host, f.Subject = "", r.SuspectName(s)
			f.Title = "every pair moves traffic at the segment's rate"
			f.Expected = fmt.Sprintf("at least %s Gb/s", Rate(j.Floor))
			f.Why = "this path alone is slow while both ends are fine with others: the switch's path between their ports (a trunk, a bad ECMP member) or a route"
			f.Remedy = report.Manual(report.ActionInspect, "compare the two switch ports' counters and the path between them; trace the route (ip route get)")
		}
		fs = append(fs, f)
	}
	return ap, fs
}

// unjudged says what keeps the run from a verdict on every node and pair,
// and adds a finding for each: nodes not reached (they fail), directions
// an interrupt left unmeasured and no credible reference (not evaluated,
// with --expected-gbps as the way out).
func (r *Result) unjudged(fs []report.Finding) ([]string, []report.Finding) {
	var out []string
	for _, h := range slices.Sorted(maps.Keys(r.Unreachable)) {
		line := h + " could not be reached: its pairs were not measured (" + r.Unreachable[h] + ")"
		out = append(out, line)
		fs = append(fs, report.Finding{ID: "allpairs.unreachable", Severity: report.Fail, Host: h, Subject: "node",
			Title: "every node is reached before the rounds", Observed: r.Unreachable[h], Expected: "the node answers over SSH (or the runner chosen)",
			Why:    "a node not reached has none of its pairs measured: its links are not qualified",
			Remedy: report.Manual(report.ActionInspect, "check that the node is up and reachable (ssh NODE true), then run qualify again"), Source: RulesSource})
	}
	if missing := r.NotMeasured(); len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for i, t := range missing {
			if i == 6 {
				names = append(names, fmt.Sprintf("and %d more", len(missing)-i))
				break
			}
			names = append(names, r.Names[t.From]+"→"+r.Names[t.To])
		}
		line := fmt.Sprintf("%d of %d directions were not measured (%s)", len(missing), r.scheduled(), strings.Join(names, ", "))
		if r.Interrupted {
			line = "interrupted: " + line
		}
		out = append(out, line)
		fs = append(fs, report.Finding{ID: "allpairs.not-measured", Severity: report.NotEvaluated, Subject: "pairs",
			Title: "every direction of every pair is measured", Observed: line, Expected: "every direction measured",
			Why: "a direction not measured is not qualified: no all-clear covers it", Source: RulesSource})
	}
	for _, why := range r.Judgement.Unjudged {
		line := "no credible reference: " + why + "; give the rate each direction should reach with --expected-gbps"
		out = append(out, line)
		fs = append(fs, report.Finding{ID: "allpairs.no-reference", Severity: report.NotEvaluated, Subject: "reference",
			Title: "the directions are judged against a credible rate", Observed: why, Expected: "an expected rate, or two directions agreeing on the best rate",
			Why:    "without a reference a slow direction cannot be told from a normal one, so the run cannot say the links are sound",
			Remedy: report.Manual(report.ActionRun, "sparkrig qualify ... --expected-gbps RATE (the rate a direction of these links should reach)"), Source: RulesSource})
	}
	return out, fs
}
