package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// AllPairsText writes an all-pairs qualification for a terminal: the N×N
// matrix within opt.Width (columns headed by node number; when even that
// does not fit, the per-node scores alone), the suspects with their
// evidence, and each node's pass ratios.
func AllPairsText(w io.Writer, ap *report.AllPairs, opt Options) error {
	w = safe(w)
	opt = textDefaults(opt)
	var b strings.Builder
	head := fmt.Sprintf("%s · %d nodes · %d round%s of %.1f s · %s", ap.Schedule, len(ap.Nodes), ap.Rounds, plural(ap.Rounds), ap.TestSeconds, sanitize.Line(ap.Tool))
	if ap.Segment != "" {
		head += " · " + sanitize.Line(ap.Segment)
	}
	hang(&b, "", "  ", head+fmt.Sprintf(" · %.1f s", ap.WallSeconds), opt.Width)
	if len(ap.Tools) == 0 && ap.Reference > 0 {
		hang(&b, "  ", "  ", fmt.Sprintf("reference: %s %s; a direction passes at %s or more", ap.RefName, gbps(ap.Reference), gbps(ap.Floor)), opt.Width)
	}
	for _, t := range ap.Tools {
		hang(&b, "  ", "  ", fmt.Sprintf("reference for %s: %s; a direction passes at %s or more", sanitize.Line(t.Tool), gbps(t.Reference), gbps(t.Floor)), opt.Width)
	}
	b.WriteString("\n")
	matrixText(&b, ap, opt)
	pairsText(&b, ap, opt)
	b.WriteString("\n")
	for _, u := range ap.Unjudged {
		hang(&b, "  not judged: ", "    ", sanitize.Line(u), opt.Width)
	}
	if len(ap.Suspects) == 0 && len(ap.Unjudged) == 0 {
		b.WriteString("  no suspect: every node, cable and pair passed\n")
	} else if len(ap.Suspects) > 0 {
		b.WriteString("  suspects\n")
		for _, s := range ap.Suspects {
			word := sevBadge(map[string]report.Severity{"confirmed": report.Fail, "suspect": report.Warn, "cleared": report.OK}[s.Status], opt.Color)
			hang(&b, "    "+padRight(word, 4)+"  ", "          ", fmt.Sprintf("%s — %s", sanitize.Line(s.Name), s.Status), opt.Width)
			for _, e := range s.Evidence {
				hang(&b, "          ", "            ", sanitize.Line(e), opt.Width)
			}
		}
	}
	ncclText(&b, ap.NCCL, opt)
	nameW := 4
	for _, s := range ap.Scores {
		nameW = max(nameW, min(vlen(sanitize.Line(s.Node)), 24))
	}
	hdr, _ := cut(fmt.Sprintf("  %s  %s  %s", padRight("   node", nameW+4), padRight("sent: passed, median", 24), "received: passed, median"), opt.Width)
	b.WriteString("\n" + strings.TrimRight(hdr, " ") + "\n")
	for i, s := range ap.Scores {
		name := sanitize.Line(s.Node)
		if vlen(name) > nameW {
			name, _ = cut(name, nameW)
		}
		tx := fmt.Sprintf("%d/%d  %s", s.TxPass, s.TxTests, gbps(s.TxMedian))
		rx := fmt.Sprintf("%d/%d  %s", s.RxPass, s.RxTests, gbps(s.RxMedian))
		line := fmt.Sprintf("  %2d %s  %s  %s", i+1, padRight(name, nameW+1), padRight(tx, 24), rx)
		l, _ := cut(line, opt.Width)
		b.WriteString(strings.TrimRight(l, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pairsText names each pair's tool where the pairs were not all measured
// with the one the heading names, and every pair whose error counters
// moved.
func pairsText(b *strings.Builder, ap *report.AllPairs, opt Options) {
	for _, p := range ap.Pairs {
		if p.Tool == ap.Tool && len(p.Moved) == 0 {
			continue
		}
		line := fmt.Sprintf("%s ↔ %s: %s", sanitize.Line(p.A), sanitize.Line(p.B), sanitize.Line(p.Tool))
		if len(p.Moved) > 0 {
			line += "; error counters moved: " + sanitize.Line(strings.Join(p.Moved, ", "))
		}
		hang(b, "  ", "    ", line, opt.Width)
	}
}

// ncclText is the pairs' 2-rank NCCL tests: the reference, each pair, the
// suspects, and which pairs were not tested and why.
func ncclText(b *strings.Builder, n *report.AllPairsNCCL, opt Options) {
	if n == nil {
		return
	}
	b.WriteString("\n")
	if len(n.Pairs) > 0 {
		hang(b, "  ", "  ", fmt.Sprintf("%s · %d pair%s · %d round%s · %.1f s", sanitize.Line(n.Tool), len(n.Pairs), plural(len(n.Pairs)), n.Rounds, plural(n.Rounds), n.WallSeconds), opt.Width)
		hang(b, "    ", "    ", fmt.Sprintf("reference: the best pairs' %s busbw; a pair passes at %s or more", gbytes(n.Reference), gbytes(n.Floor)), opt.Width)
		for _, p := range n.Pairs {
			word := sevBadge(report.OK, opt.Color)
			if !p.Pass {
				word = sevBadge(report.Warn, opt.Color)
			}
			line := fmt.Sprintf("%s ↔ %s: %s", sanitize.Line(p.A), sanitize.Line(p.B), gbytes(p.BusGBs))
			if p.Bytes > 0 {
				line += " at " + humanSize(p.Bytes)
			}
			if p.NCCLVersion != "" {
				line += ", NCCL " + sanitize.Line(p.NCCLVersion)
			}
			if p.Error != "" {
				line = fmt.Sprintf("%s ↔ %s: %s", sanitize.Line(p.A), sanitize.Line(p.B), sanitize.Line(p.Error))
			}
			hang(b, "    "+padRight(word, 4)+"  ", "          ", line, opt.Width)
		}
		for _, s := range n.Suspects {
			hang(b, "    "+padRight(sevBadge(report.Warn, opt.Color), 4)+"  ", "          ", sanitize.Line(s.Name)+" — "+s.Status, opt.Width)
			for _, e := range s.Evidence {
				hang(b, "          ", "            ", sanitize.Line(e), opt.Width)
			}
		}
	}
	for i, s := range n.Skipped {
		ind := "  "
		if i > 0 {
			ind = "    "
		}
		hang(b, ind, ind+"  ", sanitize.Line(s), opt.Width)
	}
}

// gbytes writes a bus bandwidth in NCCL's unit.
func gbytes(v float64) string {
	return rate(v) + " GB/s"
}

// gbps writes a rate with the precision that reads well at its size.
func gbps(v float64) string {
	return rate(v) + " Gb/s"
}

func rate(v float64) string {
	switch {
	case v < 0:
		return "×"
	case v == 0:
		return "0"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// matrixText lays the matrix out: rows send, columns receive, columns
// headed by the node's number; a cell below the floor is marked "!", a
// test that did not complete "×", the diagonal "·".
func matrixText(b *strings.Builder, ap *report.AllPairs, opt Options) {
	n := len(ap.Nodes)
	cell := 4
	for _, row := range ap.Matrix {
		for _, v := range row {
			cell = max(cell, vlen(rate(v))+2)
		}
	}
	label := 0
	for _, name := range ap.Nodes {
		label = max(label, vlen(sanitize.Line(name)))
	}
	label = min(label, 16)
	lead := 2 + 3 + label + 1 // "  NN name "
	if lead+n*cell > opt.Width {
		label = max(0, opt.Width-n*cell-6)
		lead = 2 + 3 + label + 1
	}
	if lead+n*cell > opt.Width {
		hang(b, "  ", "  ", fmt.Sprintf("the %d×%d matrix needs %d columns: see --format html or json", n, n, 6+n*cell), opt.Width)
		return
	}
	corner := "Gb/s from ↓ to →"
	if vlen(corner) > lead-2 {
		corner = "Gb/s"
	}
	b.WriteString("  " + padRight(corner, lead-2))
	for j := range n {
		b.WriteString(fmt.Sprintf("%*d", cell, j+1))
	}
	b.WriteString("\n")
	for i, row := range ap.Matrix {
		name := sanitize.Line(ap.Nodes[i])
		if vlen(name) > label {
			name, _ = cut(name, label)
		}
		b.WriteString(fmt.Sprintf("  %2d %s ", i+1, padRight(name, label)))
		for j, v := range row {
			var s string
			switch {
			case i == j:
				s = "·"
			case v < 0:
				s = paint(report.Fail, "×", opt.Color)
			case v == 0:
				s = "-"
			case v < ap.FloorAt(i, j):
				s = paint(report.Fail, rate(v)+"!", opt.Color)
			default:
				s = rate(v) + " "
			}
			b.WriteString(strings.Repeat(" ", max(cell-vlen(s), 0)) + s)
		}
		b.WriteString("\n")
	}
	hang(b, "  ", "  ", "rows send, columns receive; ! below the floor, × did not complete", opt.Width)
}

// allPairsPage is parsed when first written (see pageTmpl).
var allPairsPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("allpairs").Funcs(template.FuncMap{
		"rate": rate,
		"size": humanSize,
		"inc":  func(i int) int { return i + 1 },
		"heat": func(v, ref, floor float64, diag bool) template.CSS {
			switch {
			case diag:
				return "background:#eee"
			case v < 0:
				return "background:#7a0000;color:#fff"
			case ref <= 0:
				return ""
			}
			// green at the reference and above, through yellow at the floor,
			// to red at nothing
			x := math.Max(0, math.Min(1, v/ref))
			hue := 120 * x * x
			if v < floor {
				hue = math.Min(hue, 30)
			}
			return template.CSS(fmt.Sprintf("background:hsl(%.0f,70%%,55%%)", hue))
		},
	}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sparkrig all-pairs · {{len .AP.Nodes}} nodes</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table.m{border-collapse:collapse;font-variant-numeric:tabular-nums}
table.m td,table.m th{border:1px solid #fff;padding:.3em .5em;text-align:right;min-width:3.5em}
table.m th{background:#f4f4f4}
.s{margin:.6em 0}.FAIL{color:#b00;font-weight:bold}.WARN{color:#a60;font-weight:bold}.ok{color:#070}
table.n td,table.n th{padding:.2em .8em;text-align:left}
small{color:#666}
</style></head><body>
<h1>All-pairs qualification</h1>
{{template "allpairs-body" .}}</body></html>
{{define "allpairs-body"}}<p>{{.AP.Schedule}} · {{len .AP.Nodes}} nodes · {{.AP.Rounds}} rounds of {{printf "%.1f" .AP.TestSeconds}} s · {{.AP.Tool}}{{if .AP.Segment}} · {{.AP.Segment}}{{end}} · {{printf "%.1f" .AP.WallSeconds}} s<br>
{{if .AP.Tools}}{{range .AP.Tools}}reference for {{.Tool}}: {{rate .Reference}} Gb/s; a direction passes at {{rate .Floor}} Gb/s or more<br>
{{end}}{{else}}reference: {{.AP.RefName}} {{rate .AP.Reference}} Gb/s; a direction passes at {{rate .AP.Floor}} Gb/s or more{{end}}</p>
<table class="m"><tr><th>Gb/s from ↓ to →</th>{{range $j, $n := .AP.Nodes}}<th title="{{$n}}">{{inc $j}}</th>{{end}}</tr>
{{range $i, $row := .AP.Matrix}}<tr><th>{{inc $i}} {{index $.AP.Nodes $i}}</th>{{range $j, $v := $row}}<td style="{{heat $v ($.AP.RefAt $i $j) ($.AP.FloorAt $i $j) (eq $i $j)}}" title="{{index $.AP.Nodes $i}} → {{index $.AP.Nodes $j}}{{with $.AP.ToolAt $i $j}} · {{.}}{{end}}">{{if eq $i $j}}·{{else}}{{rate $v}}{{end}}</td>{{end}}</tr>
{{end}}</table>
<p><small>rows send, columns receive; × did not complete{{if .AP.Tools}}; each cell is judged against its pair's tool, named in its tooltip and below{{end}}</small></p>
{{if .AP.Tools}}<table class="n"><tr><th>pair</th><th>tool</th><th>error counters that moved</th></tr>
{{range .AP.Pairs}}<tr><td>{{.A}} ↔ {{.B}}</td><td>{{.Tool}}</td><td>{{range $k, $c := .Moved}}{{if $k}}, {{end}}{{$c}}{{end}}</td></tr>
{{end}}</table>{{else}}{{range .AP.Pairs}}{{if .Moved}}<p>{{.A}} ↔ {{.B}}: error counters moved: {{range $k, $c := .Moved}}{{if $k}}, {{end}}{{$c}}{{end}}</p>{{end}}{{end}}{{end}}
<h2>Suspects</h2>
{{range .AP.Suspects}}<div class="s"><span class="{{if eq .Status "confirmed"}}FAIL{{else if eq .Status "suspect"}}WARN{{else}}ok{{end}}">{{.Status}}</span> {{.Name}} <small>({{.Kind}})</small><ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul></div>
{{else}}<p>No suspect: every node, cable and pair passed.</p>{{end}}
{{with .AP.NCCL}}<h2>NCCL, pair by pair</h2>
{{if .Pairs}}<p>{{.Tool}} · {{len .Pairs}} pairs · {{.Rounds}} rounds · {{printf "%.1f" .WallSeconds}} s<br>
reference: the best pairs' {{rate .Reference}} GB/s busbw; a pair passes at {{rate .Floor}} GB/s or more</p>
<table class="n"><tr><th>rank 0</th><th>rank 1</th><th>busbw</th><th>size</th><th>NCCL</th><th></th></tr>
{{range .Pairs}}<tr><td>{{.A}}</td><td>{{.B}}</td><td>{{if .Error}}×{{else}}{{rate .BusGBs}} GB/s{{end}}</td><td>{{size .Bytes}}</td><td>{{.NCCLVersion}}</td><td class="{{if .Pass}}ok{{else}}WARN{{end}}">{{if .Pass}}pass{{else}}{{if .Error}}{{.Error}}{{else}}below the floor{{end}}{{end}}</td></tr>
{{end}}</table>
{{range .Suspects}}<div class="s"><span class="WARN">{{.Status}}</span> {{.Name}}<ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul></div>{{end}}{{end}}
{{range .Skipped}}<p><small>{{.}}</small></p>{{end}}{{end}}
<h2>Nodes</h2>
<table class="n"><tr><th>node</th><th>sent: passed</th><th>median</th><th>received: passed</th><th>median</th></tr>
{{range .AP.Scores}}<tr><td>{{.Node}}</td><td>{{.TxPass}}/{{.TxTests}}</td><td>{{rate .TxMedian}} Gb/s</td><td>{{.RxPass}}/{{.RxTests}}</td><td>{{rate .RxMedian}} Gb/s</td></tr>
{{end}}</table>
<p><small>{{.AP.Rules}}</small></p>
{{end}}`))
})

// AllPairsHTML writes the matrix as a heatmap page, with the suspects and
// the scores; html/template escapes every name.
func AllPairsHTML(w io.Writer, ap *report.AllPairs) error {
	return allPairsPage().Execute(w, struct{ AP *report.AllPairs }{ap})
}

// AllPairsPrometheus writes the matrix, the pass ratios and the suspects
// as metrics.
func AllPairsPrometheus(w io.Writer, ap *report.AllPairs) error {
	p := &promWriter{}
	promAllPairs(p, ap)
	return p.flush(w)
}

// promAllPairs adds an all-pairs run's metrics to p.
func promAllPairs(p *promWriter, ap *report.AllPairs) {
	for i, row := range ap.Matrix {
		for j, v := range row {
			if i == j || v == 0 {
				continue
			}
			p.add("sparkrig_allpairs_gbps", "Rate of one direction of one pair in an all-pairs run (Gb/s; -1: the test did not complete).", v,
				"from", ap.Nodes[i], "to", ap.Nodes[j])
		}
	}
	for _, s := range ap.Scores {
		if s.TxTests > 0 {
			p.add("sparkrig_allpairs_pass_ratio", "Share of a node's tests that passed, by side (tx: it sent, rx: it received).", float64(s.TxPass)/float64(s.TxTests), "node", s.Node, "side", "tx")
		}
		if s.RxTests > 0 {
			p.add("sparkrig_allpairs_pass_ratio", "Share of a node's tests that passed, by side (tx: it sent, rx: it received).", float64(s.RxPass)/float64(s.RxTests), "node", s.Node, "side", "rx")
		}
	}
	for _, s := range ap.Suspects {
		v := map[string]float64{"cleared": 0, "suspect": 1, "confirmed": 2}[s.Status]
		p.add("sparkrig_allpairs_suspect", "A suspect of an all-pairs run: 0 cleared on re-test, 1 suspect, 2 confirmed.", v,
			"kind", s.Kind, "node", s.Node, "side", s.Side, "peer", s.Peer)
	}
	if n := ap.NCCL; n != nil {
		for _, pr := range n.Pairs {
			v := pr.BusGBs
			if pr.Error != "" {
				v = -1
			}
			p.add("sparkrig_allpairs_nccl_busbw_gbytes_per_second", "Bus bandwidth of a pair's 2-rank NCCL all_reduce at its largest message (GB/s; -1: no result).", v,
				"a", pr.A, "b", pr.B)
		}
		for _, s := range n.Suspects {
			p.add("sparkrig_allpairs_nccl_suspect", "A suspect of the pairs' NCCL tests (1).", 1, "kind", s.Kind, "node", s.Node, "peer", s.Peer)
		}
	}
	p.add("sparkrig_allpairs_reference_gbps", "The rate each direction was judged against (Gb/s).", ap.Reference, "reference", ap.RefName)
	p.add("sparkrig_allpairs_wall_seconds", "Wall time of the rounds and re-tests.", ap.WallSeconds)
}
