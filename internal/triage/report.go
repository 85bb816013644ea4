package triage

import (
	"time"

	"github.com/sparkrig/sparkrig/internal/sanitize"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Report is the diagnosis and the samples as the report model holds them.
func (d Diagnosis) Report(first, second []Sample, wall time.Duration) *report.Triage {
	t := &report.Triage{Verdict: d.Verdict, FirstRank: d.FirstRank, FirstNode: d.FirstNode, Evidence: d.Evidence,
		NCCLVersion: d.Version, IntervalSeconds: d.Interval.Seconds(), WallSeconds: wall.Seconds(),
		Ranks: []report.TriageRank{}, Libraries: []report.TriageLibrary{}}
	for _, r := range d.Ranks {
		t.Ranks = append(t.Ranks, report.TriageRank{Rank: r.Rank, Node: r.Node, Addr: r.Addr, PID: r.PID, Ops: r.Ops, Missing: r.Missing, Error: r.Error})
	}
	for _, l := range d.Libraries {
		t.Libraries = append(t.Libraries, report.TriageLibrary{Path: l.Path, BuildID: l.BuildID, Version: l.Version, Nodes: l.Nodes, PIDs: l.PIDs})
	}
	for i, s := range first {
		n := report.TriageNode{Host: s.Host, Name: s.Name, Error: s.Err, Processes: len(s.Procs), Log: s.Log}
		var s2 *Sample
		if i < len(second) && second[i].Host == s.Host {
			s2 = &second[i]
			if s2.Err != "" && n.Error == "" {
				n.Error = s2.Err
			}
			n.Log = s2.Log
		}
		switch {
		case s.NoRAS:
			n.RAS = "none"
		case len(s.RAS) > 0:
			if _, a := s.Status(); a != nil {
				n.RAS = a.Client + " " + a.Format
			} else {
				n.RAS = "no answer"
			}
		}
		for _, g := range s.GPUs {
			tg := report.TriageGPU{Index: g.Index, Name: g.Name, Util: [2]float64{g.Util, -1}, Power: [2]float64{g.Power, -1}, SMClock: [2]float64{g.SMClock, -1}}
			if s2 != nil {
				for _, g2 := range s2.GPUs {
					if g2.Index == g.Index {
						tg.Util[1], tg.Power[1], tg.SMClock[1] = g2.Util, g2.Power, g2.SMClock
					}
				}
			}
			n.GPUs = append(n.GPUs, tg)
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t
}

// cleanReport escapes every string that came from a node (RAS answers,
// host names, paths, log lines, and the findings built from them), so no
// format, HTML and JSON included, carries a terminal escape or a bidi
// control from outside.
func cleanReport(t *report.Triage, fs []report.Finding) {
	l := sanitize.Line
	t.FirstNode = l(t.FirstNode)
	t.NCCLVersion = l(t.NCCLVersion)
	for i := range t.Evidence {
		t.Evidence[i] = l(t.Evidence[i])
	}
	for i := range t.Ranks {
		r := &t.Ranks[i]
		r.Node, r.Addr, r.Error = l(r.Node), l(r.Addr), l(r.Error)
	}
	for i := range t.Libraries {
		x := &t.Libraries[i]
		x.Path, x.BuildID, x.Version = l(x.Path), l(x.BuildID), l(x.Version)
		for j := range x.Nodes {
			x.Nodes[j] = l(x.Nodes[j])
		}
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.Host, n.Name, n.Error, n.RAS = l(n.Host), l(n.Name), l(n.Error), l(n.RAS)
		for j := range n.Log {
			n.Log[j] = l(n.Log[j])
		}
		for j := range n.GPUs {
			n.GPUs[j].Name = l(n.GPUs[j].Name)
		}
	}
	for i := range fs {
		f := &fs[i]
		f.Host, f.Subject, f.Observed = l(f.Host), l(f.Subject), l(f.Observed)
		if f.Remedy != nil {
			for j := range f.Remedy.Steps {
				f.Remedy.Steps[j].Text = l(f.Remedy.Steps[j].Text)
			}
		}
	}
}
