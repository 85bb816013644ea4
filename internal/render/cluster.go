package render

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// textCluster draws the cluster section: the topology, one line per link
// (which port of which node faces which, with MTU, speed and subnet; faulty
// links marked with their problems), then the cluster findings.
func textCluster(w io.Writer, r *report.Report, opt Options) error {
	c := r.Cluster
	if c == nil {
		return nil
	}
	var b strings.Builder
	if audited(r) {
		hang(&b, "", "  ", bold(fmt.Sprintf("cluster · %s · %d link(s)", orUnknown(c.Topology), len(c.Links)), opt.Color), opt.Width)
		links, okLeftOut := c.ShownLinks(len(r.Hosts))
		if len(links) > 0 || okLeftOut == 0 {
			textLinks(&b, links, c.Qualified, opt)
		}
		if okLeftOut > 0 {
			fmt.Fprintf(&b, "  and %d link(s) ok (the JSON lists each)\n", okLeftOut)
		}
	} else {
		// no doctor audit: the findings of the runs (all-pairs, triage)
		// without a links section that has nothing to say
		if len(c.Findings) == 0 && len(c.Qualified) == 0 {
			return nil
		}
		hang(&b, "", "  ", bold("cluster findings", opt.Color), opt.Width)
	}
	textQualified(&b, c.Qualified, opt.Width)
	for _, g := range subjectGroups(clusterSubjects(c.Findings)) {
		textSubject(&b, g, opt)
	}
	hang(&b, "  ", "  ", summaryLine(counts(c.Findings), opt.Color), opt.Width)
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// textQualified lists doctor --qualify's directions: rate, counters that
// moved, verdict; each direction on its own line, never averaged.
func textQualified(b *strings.Builder, qs []report.QualifiedDirection, width int) {
	if len(qs) == 0 {
		return
	}
	fmt.Fprintf(b, "  qualified (%s, each direction on its own):\n", qs[0].Tool)
	for _, q := range qs {
		moved := "no error counter moved"
		if len(q.Moved) > 0 {
			moved = strings.Join(q.Moved, ", ")
		}
		hang(b, "    ", "          ", fmt.Sprintf("%-5s %s → %s  %7.1f Gb/s  %s  %s", sanitize.Line(q.Rail), sanitize.Line(q.From), sanitize.Line(q.To), q.Gbps, sanitize.Line(moved), q.Verdict), width)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "topology unknown"
	}
	return s
}

// clusterSubjects prefixes the host to findings about one node's part of
// the cluster, so they group and read as "spark-01 enp1s0f1np1 → ...".
func clusterSubjects(fs []report.Finding) []report.Finding {
	out := make([]report.Finding, len(fs))
	for i, f := range fs {
		if f.Host != "" {
			f.Subject = f.Host + " " + f.Subject
		}
		out[i] = f
	}
	return out
}

// endText is "spark-01 enp1s0f1np1" and its "MTU 9000 · 200G" details.
func endText(e report.Endpoint) (string, string) {
	details := []string{}
	if e.MTU > 0 {
		details = append(details, fmt.Sprintf("MTU %d", e.MTU))
	}
	if e.SpeedMbps > 0 {
		details = append(details, speedShort(e.SpeedMbps))
	}
	name := e.Host + " " + e.NetDev
	if e.Host == report.SwitchHost {
		name = "switch " + e.NetDev
	}
	return name, strings.Join(details, " · ")
}

func speedShort(mbps int) string {
	if mbps%1000 == 0 {
		return fmt.Sprintf("%dG", mbps/1000)
	}
	return fmt.Sprintf("%dM", mbps)
}

// linkState is a link's status and the reasons for it: "ok", or
// "down: spark1 enP2p1s0f1np1 is down (no carrier)".
func linkState(l report.Link) string {
	if l.OK() {
		return "ok"
	}
	s := string(cmp.Or(l.Status, report.LinkFaulty))
	if len(l.Reasons) > 0 {
		s += ": " + strings.Join(l.Reasons, "; ")
	}
	return s
}

// textLinks draws the links; none is worth a line unless the section has
// qualified directions (a bench run's) to show instead.
func textLinks(b *strings.Builder, links []report.Link, qualified []report.QualifiedDirection, opt Options) {
	if len(links) == 0 && len(qualified) == 0 {
		fmt.Fprintf(b, "  no data links found (no two nodes share a subnet on a ConnectX netdev)\n")
		return
	}
	type row struct{ a, ad, b, bd, subnet, state string }
	var rows []row
	wa, wad, wb, wbd := 0, 0, 0, 0
	for _, l := range links {
		an, ad := endText(l.A)
		bn, bd := endText(l.B)
		rw := row{a: an, ad: ad, b: bn, bd: bd, subnet: l.Subnet, state: linkState(l)}
		rows = append(rows, rw)
		wa, wad, wb, wbd = max(wa, vlen(an)), max(wad, vlen(ad)), max(wb, vlen(bn)), max(wbd, vlen(bd))
	}
	for i, rw := range rows {
		wire, state := "────────", paint(report.OK, rw.state, opt.Color)
		switch l := links[i]; {
		case l.Status == report.LinkDegraded:
			wire, state = "───"+paint(report.Warn, "~", opt.Color)+"────", paint(report.Warn, rw.state, opt.Color)
		case !l.OK():
			wire, state = "───"+paint(report.Fail, "✗", opt.Color)+"────", paint(report.Fail, rw.state, opt.Color)
		}
		ends := fmt.Sprintf("  %-*s  %-*s  %s  %-*s  %-*s", wa, rw.a, wad, rw.ad, wire, wb, rw.b, wbd, rw.bd)
		switch {
		case vlen(ends)+2+18+1+vlen(state) <= opt.Width:
			fmt.Fprintf(b, "%s  %-18s %s\n", ends, rw.subnet, state)
		case vlen(ends) <= opt.Width:
			b.WriteString(strings.TrimRight(ends, " ") + "\n")
			hang(b, "      ", "        ", rw.subnet+"  "+state, opt.Width)
		default:
			// One end per line when the two do not fit side by side.
			hang(b, "  ", "    ", rw.a+"  "+rw.ad, opt.Width)
			hang(b, "    "+wire+"  ", "      ", rw.b+"  "+rw.bd, opt.Width)
			hang(b, "      ", "        ", rw.subnet+"  "+state, opt.Width)
		}
	}
}

// mdCluster writes the cluster section as Markdown: topology, a links table
// and the cluster findings.
func mdCluster(w io.Writer, r *report.Report, opt Options) error {
	c := r.Cluster
	if c == nil {
		return nil
	}
	head := "### cluster (" + orUnknown(c.Topology) + ")"
	if !audited(r) && c.Topology == "" {
		if len(c.Findings) == 0 {
			return nil
		}
		head = "### cluster findings"
	}
	if _, err := fmt.Fprintf(w, "%s\n\n%s\n\n", head, summaryLine(counts(c.Findings), false)); err != nil {
		return err
	}
	var rows [][]string
	for _, l := range c.Links {
		an, ad := endText(l.A)
		bn, bd := endText(l.B)
		state := linkState(l)
		if !l.OK() {
			state = "**" + sanitize.Markdown(state) + "**"
		}
		rows = append(rows, []string{sanitize.Markdown(an + " (" + ad + ")"), sanitize.Markdown(bn + " (" + bd + ")"), sanitize.Markdown(l.Subnet), state})
	}
	if len(rows) > 0 {
		if err := mdTable(w, []string{"end A", "end B", "subnet", "state"}, rows); err != nil {
			return err
		}
	}
	rows = nil
	for _, g := range subjectGroups(clusterSubjects(c.Findings)) {
		for _, f := range g {
			if f.Severity == report.OK && !opt.Verbose {
				continue
			}
			rows = append(rows, []string{mdSeverity(string(f.Severity)), mdCode(f.ID), sanitize.Markdown(f.Subject), sanitize.Markdown(f.Observed), sanitize.Markdown(f.Expected), mdCode(oneLine(remedyText(f.Remedy)))})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return mdTable(w, []string{"severity", "check", "subject", "observed", "expected", "fix"}, rows)
}
