package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

func textFixPlan(w io.Writer, r *report.Report, opt Options) error {
	if r.FixPlan == nil {
		return nil
	}
	return FixPlan(w, r.FixPlan, opt)
}

// FixPlan prints `sparkrig fix --plan`: per host, the rails, then a unified
// diff of every file that would change with the findings it resolves and the
// activation a node needs to run files that are already right; then every
// warn or fail finding no change resolves, with its manual remedy. Diff
// lines are file contents and keep their length.
func FixPlan(w io.Writer, p *report.FixPlan, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	var b strings.Builder
	hang(&b, "", "  ", fmt.Sprintf("topology %s, %s addressing", p.Topology, p.Addressing), opt.Width)
	for _, h := range p.Hosts {
		fmt.Fprintf(&b, "\n== %s\n", h.Host)
		for _, r := range h.Rails {
			addr := r.Addr
			if addr == "" {
				addr = "link-local"
			}
			rail := fmt.Sprintf("   %-14s %-13s %-18s mtu %d", r.NetDev, r.RDMADev, addr, r.MTU)
			peers := "-> " + strings.Join(r.Peers, ", ")
			if vlen(rail)+1+vlen(peers) <= opt.Width {
				b.WriteString(rail + " " + peers + "\n")
			} else {
				b.WriteString(rail + "\n")
				hang(&b, "   "+strings.Repeat(" ", 15), "   "+strings.Repeat(" ", 18), peers, opt.Width)
			}
			for _, rt := range r.Routes {
				fmt.Fprintf(&b, "   %-14s route %s via %s\n", "", rt.To, rt.Via)
			}
			if r.Change != "" && !strings.HasPrefix(r.Change, "keep ") {
				hang(&b, "   "+strings.Repeat(" ", 15), "   "+strings.Repeat(" ", 17), r.Change, opt.Width)
			}
		}
		if len(h.Protected) > 0 {
			hang(&b, "   untouched: ", "     ", strings.Join(h.Protected, ", "), opt.Width)
		}
		for _, n := range h.Notes {
			hang(&b, "   note: ", "         ", n, opt.Width)
		}
		for _, c := range h.Files {
			if !c.Changed {
				fmt.Fprintf(&b, "\n%s: no change\n", c.Path)
				continue
			}
			b.WriteString("\n")
			hang(&b, "", "  ", fmt.Sprintf("%s (mode %04o): %s", c.Path, c.Mode, c.Why), opt.Width)
			if len(c.Resolves) > 0 {
				hang(&b, "resolves: ", "          ", keyList(c.Resolves), opt.Width)
			}
			b.WriteString(c.Diff)
		}
		if a := h.Reactivate; a != nil {
			b.WriteString("\n")
			hang(&b, "", "  ", "activate: "+a.Command+" (the files are right; "+a.Why+")", opt.Width)
			if len(a.Resolves) > 0 {
				hang(&b, "resolves: ", "          ", keyList(a.Resolves), opt.Width)
			}
		}
	}
	changes, manual := p.Changes(), p.Manual
	if len(manual) > 0 {
		hang(&b, "\n", "  ", fmt.Sprintf("fix cannot change these %d finding(s); each needs a person:", len(manual)), opt.Width)
		for _, f := range manual {
			where := f.Subject
			if f.Host != "" {
				where = f.Host + " " + f.Subject
			}
			b.WriteString("\n")
			hang(&b, "  "+sevBadge(f.Severity, opt.Color)+"  ", "        ", f.ID+" — "+where+": "+f.Observed, opt.Width)
			writeField(&b, "        ", "do", remedyText(f.Remedy), opt.Width, true)
		}
	}
	switch {
	case changes == 0 && len(manual) == 0:
		b.WriteString("\nnothing to change\n")
	case changes == 0:
		b.WriteString("\nnothing fix can change\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
