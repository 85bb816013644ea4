package render

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// TriageText writes a triage for a terminal: the verdict and the first
// failing rank with the evidence, the findings, the ranks' operation
// counts at both samples, the libnccl builds, the GPUs and the log tails.
func TriageText(w io.Writer, t *report.Triage, findings []report.Finding, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	var b strings.Builder
	fmt.Fprintf(&b, "triage · %d node(s)", len(t.Nodes))
	if t.NCCLVersion != "" {
		fmt.Fprintf(&b, " · NCCL %s", sanitize.Line(t.NCCLVersion))
	}
	if t.IntervalSeconds > 0 {
		fmt.Fprintf(&b, " · samples %.0f s apart", t.IntervalSeconds)
	}
	fmt.Fprintf(&b, " · %.1f s\n", t.WallSeconds)
	head := "verdict: " + t.Verdict
	if t.FirstRank >= 0 {
		head += fmt.Sprintf(" — first failing rank %d", t.FirstRank)
		if t.FirstNode != "" {
			head += " on " + sanitize.Line(t.FirstNode)
		}
	}
	hang(&b, "  ", "  ", head, opt.Width)
	for _, e := range t.Evidence {
		hang(&b, "    ", "      ", sanitize.Line(e), opt.Width)
	}
	findingsText(&b, findings, opt)
	if len(t.Ranks) > 0 {
		b.WriteString("\n  rank  node             pid      operations\n")
		for _, r := range t.Ranks {
			node := r.Node
			if node == "" {
				node = r.Addr
			}
			node = sanitize.Line(node)
			if vlen(node) > 16 {
				node, _ = cut(node, 16)
			}
			ops := opsText(r.Ops)
			switch {
			case r.Missing:
				ops += "  missing"
			case r.Error != "":
				ops += "  " + sanitize.Line(r.Error)
			}
			l, _ := cut(fmt.Sprintf("  %4d  %s %-8d %s", r.Rank, padRight(node, 16), r.PID, ops), opt.Width)
			b.WriteString(l + "\n")
		}
	}
	if len(t.Libraries) > 0 {
		b.WriteString("\n  libnccl\n")
		for _, l := range t.Libraries {
			id := l.BuildID
			if id == "" {
				id = "build ID unread"
			}
			v := l.Version
			if v == "" {
				v = "?"
			}
			hang(&b, "    ", "      ", fmt.Sprintf("%s · build %s · NCCL %s · %s (%d process(es))", sanitize.Line(l.Path), sanitize.Line(id), sanitize.Line(v), sanitize.Line(strings.Join(l.Nodes, ", ")), len(l.PIDs)), opt.Width)
		}
	}
	gpus := false
	for _, n := range t.Nodes {
		if len(n.GPUs) > 0 || n.Error != "" {
			gpus = true
		}
	}
	if gpus {
		b.WriteString("\n  node             GPU  utilisation      power              SM clock\n")
		for _, n := range t.Nodes {
			name := sanitize.Line(n.Host)
			if vlen(name) > 16 {
				name, _ = cut(name, 16)
			}
			if n.Error != "" {
				hang(&b, "  "+padRight(name, 16)+" ", "    ", "not sampled: "+sanitize.Line(n.Error), opt.Width)
				continue
			}
			for _, g := range n.GPUs {
				l, _ := cut(fmt.Sprintf("  %s %3d  %-16s %-18s %s", padRight(name, 16), g.Index,
					pair(g.Util, "%"), pair(g.Power, "W"), pair(g.SMClock, "MHz")), opt.Width)
				b.WriteString(l + "\n")
			}
		}
	}
	for _, n := range t.Nodes {
		if len(n.Log) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  log on %s (last %d lines)\n", sanitize.Line(n.Host), len(n.Log))
		for _, l := range n.Log {
			s, _ := cut("    "+sanitize.Line(l), opt.Width)
			b.WriteString(s + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func opsText(o [2]int64) string {
	s := func(v int64) string {
		if v < 0 {
			return "?"
		}
		return strconv.FormatInt(v, 10)
	}
	return s(o[0]) + " → " + s(o[1])
}

func pair(v [2]float64, unit string) string {
	s := func(x float64) string {
		if x < 0 {
			return "?"
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	if v[1] < 0 {
		return s(v[0]) + " " + unit
	}
	return s(v[0]) + " → " + s(v[1]) + " " + unit
}

// triagePage is parsed when first written (see pageTmpl).
var triagePage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("triage").Funcs(template.FuncMap{"ops": opsText, "pair": pair, "remedy": remedyText}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sparkrig triage · {{.T.Verdict}}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #eee}
.fail{color:#b00;font-weight:bold}.warn{color:#a60;font-weight:bold}pre{background:#f6f6f6;padding:.5em}</style></head><body>
<h1>Triage: {{.T.Verdict}}</h1>
{{template "triage-body" .}}</body></html>
{{define "triage-body"}}<p>{{len .T.Nodes}} node(s){{if .T.NCCLVersion}} · NCCL {{.T.NCCLVersion}}{{end}} · samples {{printf "%.0f" .T.IntervalSeconds}} s apart{{if ge .T.FirstRank 0}} · <b>first failing rank {{.T.FirstRank}}{{if .T.FirstNode}} on {{.T.FirstNode}}{{end}}</b>{{end}}</p>
<ul>{{range .T.Evidence}}<li>{{.}}</li>{{end}}</ul>
{{range .F}}<p><span class="{{.Severity}}">{{.Severity}}</span> {{.ID}} — {{.Host}} {{.Subject}}<br>seen: {{.Observed}}<br>why: {{.Why}}<br>fix: {{remedy .Remedy}}<br><small>{{.Source}}</small></p>{{end}}
{{if .T.Ranks}}<h2>Ranks</h2><table><tr><th>rank</th><th>node</th><th>pid</th><th>operations</th><th></th></tr>
{{range .T.Ranks}}<tr><td>{{.Rank}}</td><td>{{if .Node}}{{.Node}}{{else}}{{.Addr}}{{end}}</td><td>{{.PID}}</td><td>{{ops .Ops}}</td><td>{{if .Missing}}missing{{end}} {{.Error}}</td></tr>{{end}}</table>{{end}}
{{if .T.Libraries}}<h2>libnccl</h2><table><tr><th>path</th><th>build ID</th><th>version</th><th>nodes</th></tr>
{{range .T.Libraries}}<tr><td>{{.Path}}</td><td>{{.BuildID}}</td><td>{{.Version}}</td><td>{{range .Nodes}}{{.}} {{end}}</td></tr>{{end}}</table>{{end}}
<h2>GPUs</h2><table><tr><th>node</th><th>GPU</th><th>utilisation</th><th>power</th><th>SM clock</th></tr>
{{range .T.Nodes}}{{$h := .Host}}{{if .Error}}<tr><td>{{$h}}</td><td colspan="4">not sampled: {{.Error}}</td></tr>{{end}}{{range .GPUs}}<tr><td>{{$h}}</td><td>{{.Index}}</td><td>{{pair .Util "%"}}</td><td>{{pair .Power "W"}}</td><td>{{pair .SMClock "MHz"}}</td></tr>{{end}}{{end}}</table>
{{range .T.Nodes}}{{if .Log}}<h3>log on {{.Host}}</h3><pre>{{range .Log}}{{.}}
{{end}}</pre>{{end}}{{end}}
{{end}}`))
})

// TriageHTML writes the triage as a page; html/template escapes every
// string from the nodes.
func TriageHTML(w io.Writer, t *report.Triage, findings []report.Finding) error {
	return triagePage().Execute(w, struct {
		T *report.Triage
		F []report.Finding
	}{t, findings})
}

// TriagePrometheus writes the verdict, the first failing rank and each
// rank's operation counts as metrics.
func TriagePrometheus(w io.Writer, t *report.Triage) error {
	p := &promWriter{}
	promTriage(p, t)
	return p.flush(w)
}

// promTriage adds a triage's metrics to p.
func promTriage(p *promWriter, t *report.Triage) {
	p.add("sparkrig_triage_verdict", "Triage verdict of a running NCCL job (1 for the verdict given).", 1, "verdict", t.Verdict)
	p.add("sparkrig_triage_first_failing_rank", "The first failing rank triage names (-1: none).", float64(t.FirstRank), "node", t.FirstNode)
	for _, r := range t.Ranks {
		for i, v := range r.Ops {
			if v >= 0 {
				p.add("sparkrig_triage_rank_operations", "Operations a rank had launched at each triage sample.", float64(v),
					"rank", strconv.Itoa(r.Rank), "node", r.Node, "sample", strconv.Itoa(i+1))
			}
		}
		missing := 0.0
		if r.Missing {
			missing = 1
		}
		p.add("sparkrig_triage_rank_missing", "1 when a rank is missing from NCCL RAS's answer.", missing, "rank", strconv.Itoa(r.Rank), "node", r.Node)
	}
	p.add("sparkrig_triage_libnccl_builds", "Distinct libnccl builds the job's processes map.", float64(len(t.Libraries)))
}

// FindingsText writes findings one after the other, each with what was
// seen, why it matters, the fix and the source, within opt.Width.
func FindingsText(w io.Writer, findings []report.Finding, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	var b strings.Builder
	findingsText(&b, findings, opt)
	_, err := io.WriteString(w, b.String())
	return err
}

func findingsText(b *strings.Builder, findings []report.Finding, opt Options) {
	if len(findings) == 0 {
		return
	}
	b.WriteString("\n")
	for _, f := range findings {
		subject := f.Subject
		if f.Host != "" {
			subject = f.Host + " " + subject
		}
		hang(b, "  "+sevBadge(f.Severity, opt.Color)+"  ", "        ", sanitize.Line(f.ID+" — "+subject), opt.Width)
		writeField(b, "        ", "seen", sanitize.Line(f.Observed), opt.Width, false)
		writeField(b, "        ", "expected", sanitize.Line(f.Expected), opt.Width, false)
		writeField(b, "        ", "why", sanitize.Line(f.Why), opt.Width, false)
		writeField(b, "        ", "fix", remedyText(f.Remedy), opt.Width, false)
		writeField(b, "        ", "source", sanitize.Line(f.Source), opt.Width, false)
	}
}
