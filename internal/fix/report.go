package fix

import "github.com/sparkrig/sparkrig/internal/report"

// Report is the plan as the report model carries it: each file with its
// unified diff; manual are the warn and fail findings no change resolves.
func (p *Plan) Report(manual []report.Finding) *report.FixPlan {
	out := &report.FixPlan{Topology: string(p.Topology), Addressing: p.Addressing, Hosts: []report.FixHost{}, Manual: manual}
	for _, v := range p.Env {
		out.Env = append(out.Env, report.EnvVar{Name: v.Name, Value: v.Value})
	}
	for _, n := range p.Notes {
		out.Notes = append(out.Notes, report.PlanNote{ID: n.ID, Host: n.Host, Detail: n.Detail, Fix: n.Fix})
	}
	for _, h := range p.Hosts {
		fh := report.FixHost{Host: h.Host, Rails: []report.FixRail{}, Files: []report.FixFile{}, Protected: h.Protected, Notes: h.Notes}
		if a := h.Reactivate; a != nil {
			fh.Reactivate = &report.FixActivation{Command: a.Command(), Why: a.Why, Resolves: a.Resolves}
		}
		for _, r := range h.Rails {
			fr := report.FixRail{NetDev: r.NetDev, RDMADev: r.RDMADev, Addr: r.Addr, MTU: r.MTU, Peers: r.Peers, Change: r.Change}
			for _, rt := range r.Routes {
				fr.Routes = append(fr.Routes, report.FixRoute{To: rt.To, Via: rt.Via})
			}
			fh.Rails = append(fh.Rails, fr)
		}
		for _, c := range h.Files {
			f := report.FixFile{Path: c.Path, Mode: uint32(c.Mode.Perm()), Changed: c.Changed(), Why: c.Why, Resolves: c.Resolves}
			if f.Changed {
				oldName := "a" + c.Path
				if !c.OldExists {
					oldName = "/dev/null"
				}
				f.Diff = Unified(oldName, "b"+c.Path, c.Old, c.New)
			}
			fh.Files = append(fh.Files, f)
		}
		out.Hosts = append(out.Hosts, fh)
	}
	return out
}
