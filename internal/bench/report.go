package bench

import (
	"fmt"
	"slices"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Report is the plan as `bench --dry-run` shows it: every command as the
// shell line it runs, in order.
func (p *Plan) Report() *report.BenchPlan {
	out := &report.BenchPlan{Hosts: p.Hosts, Kinds: p.Kinds, Topology: p.Topology, Rails: []report.BenchRail{}, Steps: []report.BenchStep{},
		Notes: planNotes(p.Notes), Refusals: refusals(p.Refusals)}
	for _, r := range p.Rails {
		out.Rails = append(out.Rails, report.BenchRail{Name: r.String(), Detail: railDetail(r)})
	}
	for _, v := range p.NCCLEnv {
		out.Env = append(out.Env, report.EnvVar{Name: v.Name, Value: v.Value})
	}
	for _, st := range p.Steps {
		s := report.BenchStep{ID: st.ID, Timeout: st.Timeout.String(), Commands: []report.BenchCommand{}}
		for _, c := range st.Commands() {
			s.Commands = append(s.Commands, report.BenchCommand{Host: c.Host, Role: c.Role, Line: CommandLine(c)})
		}
		out.Steps = append(out.Steps, s)
	}
	return out
}

func railDetail(r Rail) string {
	if !r.A.RDMAReady() || !r.B.RDMAReady() {
		return fmt.Sprintf("%s ↔ %s (no RDMA)", r.A.Addr, r.B.Addr)
	}
	return fmt.Sprintf("%s/%d gid %d %s ↔ %s/%d gid %d %s", r.A.RDMADev, r.A.Port, r.A.GIDIndex, r.A.Addr, r.B.RDMADev, r.B.Port, r.B.GIDIndex, r.B.Addr)
}

func planNotes(ns []fabric.Note) []report.PlanNote {
	var out []report.PlanNote
	for _, n := range ns {
		out = append(out, report.PlanNote{ID: n.ID, Host: n.Host, Detail: n.Detail, Fix: n.Fix})
	}
	return out
}

func refusals(rs []Refusal) []report.BenchRefusal {
	var out []report.BenchRefusal
	for _, r := range rs {
		out = append(out, report.BenchRefusal{Host: r.Host, Reason: r.Reason, Forceable: r.Forceable})
	}
	return out
}

// Outline is what the run adds to its analyses in the report: how each
// step ended, missing tools and the plan's notes.
func (rec *Record) Outline() *report.BenchRun {
	out := &report.BenchRun{ID: rec.Bench.ID, Steps: []report.BenchOutcome{}, Missing: rec.Bench.Missing}
	for i, st := range rec.Bench.Steps {
		o := report.BenchOutcome{File: st.ID, Status: st.Status, Error: st.Error}
		if i < len(rec.Analyses) {
			o.File = rec.Analyses[i].File
		}
		out.Steps = append(out.Steps, o)
	}
	if p := rec.Bench.Plan; p != nil {
		out.Notes, out.Refusals = planNotes(p.Notes), refusals(p.Refusals)
		out.LeftOut = p.LeftOut()
	}
	return out
}

// LeftOut lists the benchmarks asked for of which the plan holds no step
// (no rail with RDMA on both ends, a node without a GPU): not evaluated.
func (p *Plan) LeftOut() []string {
	var out []string
	for _, k := range p.Kinds {
		if !slices.ContainsFunc(p.Steps, func(st Step) bool { return st.Kind == k }) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// qualified is the qualify steps' verdicts per direction and their
// findings, as the report's cluster section carries them (nil without a
// qualify step).
func (rec *Record) qualified() *report.Cluster {
	if rec.Bench.Plan == nil {
		return nil
	}
	q := Qualify(rec, 0, "")
	if len(q.Directions) == 0 {
		return nil
	}
	return &report.Cluster{Topology: rec.Bench.Plan.Topology, Links: []report.Link{}, Qualified: q.Report(), Findings: q.Findings}
}

// Report is the gate's answer as the report model carries it.
func (v Validity) Report() *report.Validity {
	return &report.Validity{Valid: v.Valid, Sampled: v.Sampled, Reasons: v.Reasons}
}
