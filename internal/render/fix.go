package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/fix"
)

// FixPlan prints `sparkrig fix --plan`: per host, the rails, then a unified diff of every file
// that would change with the findings it resolves. It returns the number of
// files that would change.
func FixPlan(w io.Writer, p *fix.Plan) (changes int, err error) {
	w = safe(w)
	var b strings.Builder
	fmt.Fprintf(&b, "topology %s, %s addressing\n", p.Topology, p.Addressing)
	for _, h := range p.Hosts {
		fmt.Fprintf(&b, "\n== %s\n", h.Host)
		for _, r := range h.Rails {
			addr := r.Addr
			if addr == "" {
				addr = "link-local"
			}
			fmt.Fprintf(&b, "   %-14s %-13s %-18s mtu %d -> %s\n", r.NetDev, r.RDMADev, addr, r.MTU, strings.Join(r.Peers, ", "))
			for _, rt := range r.Routes {
				fmt.Fprintf(&b, "   %-14s route %s via %s\n", "", rt.To, rt.Via)
			}
			if r.Change != "" && !strings.HasPrefix(r.Change, "keep ") {
				fmt.Fprintf(&b, "   %-14s %s\n", "", r.Change)
			}
		}
		if len(h.Protected) > 0 {
			fmt.Fprintf(&b, "   untouched: %s\n", strings.Join(h.Protected, ", "))
		}
		for _, n := range h.Notes {
			fmt.Fprintf(&b, "   note: %s\n", n)
		}
		for _, c := range h.Files {
			if !c.Changed() {
				fmt.Fprintf(&b, "\n%s: no change\n", c.Path)
				continue
			}
			changes++
			fmt.Fprintf(&b, "\n%s (mode %04o): %s\n", c.Path, c.Mode, c.Why)
			if len(c.Resolves) > 0 {
				fmt.Fprintf(&b, "resolves: %s\n", strings.Join(c.Resolves, ", "))
			}
			oldName := "a" + c.Path
			if !c.OldExists {
				oldName = "/dev/null"
			}
			b.WriteString(fix.Unified(oldName, "b"+c.Path, c.Old, c.New))
		}
	}
	if changes == 0 {
		b.WriteString("\nnothing to change\n")
	}
	_, err = io.WriteString(w, b.String())
	return changes, err
}
