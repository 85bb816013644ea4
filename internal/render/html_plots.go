package render

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// ncclRun is one collective table of one run, with what it is judged against.
type ncclRun struct {
	Run   string // the run's label: a file name or a bench run id, numbered where it has several tables
	Input string // the input it came from: Run without the number
	Table *results.NCCLTable
	// ExpectedGBs is the busbw the platform should reach at large sizes, and
	// WireGBs the most the links can carry expressed as busbw; 0 = unknown.
	ExpectedGBs, WireGBs float64
	Verdicts             []string
}

// railResult is one RDMA bandwidth measurement on one rail (device).
type railResult struct {
	Run, Rail          string
	Gbps, ExpectedGbps float64
}

type plotView struct {
	Collective string
	Sub        string
	SVG        template.HTML
	Points     int
	Legend     []legendItem
	Verdicts   []string
}

type legendItem struct{ Class, Line, Label string }

// comparison has one row per run and one column per collective.
type comparison struct {
	Colls []string
	Rows  []compareRow
}

type compareRow struct {
	Run   string
	Cells []compareCell
}

type compareCell struct{ Value, Delta, Class string }

// addBenchmarks fills the benchmark section from the analysed results.
func addBenchmarks(p *page, runs []ncclRun, rails []railResult) {
	byColl := map[string][]ncclRun{}
	var colls []string
	labels := map[string]bool{}
	for _, r := range runs {
		if r.Table == nil {
			continue
		}
		c := r.Table.Collective
		if byColl[c] == nil {
			colls = append(colls, c)
		}
		byColl[c] = append(byColl[c], r)
		labels[r.Run] = true
	}
	for _, r := range rails {
		labels[r.Run] = true
	}
	p.RunCount = len(labels)
	sort.Strings(colls)
	for _, c := range colls {
		p.Plots = append(p.Plots, newPlot(c, byColl[c]))
	}
	if len(rails) > 0 {
		p.Rails = railsSVG(rails)
		p.RailsSub = "ib_write_bw average per device, Gb/s; the mark is the expectation"
	}
	p.Comparison = newComparison(runs, colls)
}

func newPlot(coll string, runs []ncclRun) plotView {
	v := plotView{Collective: coll}
	t := runs[0].Table
	if len(runs) > 1 {
		best := runs[0]
		for _, r := range runs[1:] {
			if r.Table.PeakBusBWGBs > best.Table.PeakBusBWGBs {
				best = r
			}
		}
		v.Sub = fmt.Sprintf("%d runs · best peak %.2f GB/s at %s (%s)", len(runs), best.Table.PeakBusBWGBs, humanSize(best.Table.PeakSize), best.Run)
		v.SVG, v.Points = busbwSVG(runs)
		v.Legend, v.Verdicts = plotLegend(runs)
		return v
	}
	var sub []string
	if t.Ranks > 0 {
		s := fmt.Sprintf("%d ranks", t.Ranks)
		switch {
		case t.Nodes == 1:
			s += " on 1 node"
		case t.Nodes > 1:
			s += fmt.Sprintf(" on %d nodes", t.Nodes)
		}
		sub = append(sub, s)
	}
	if t.NCCLVersion != "" {
		sub = append(sub, "NCCL "+t.NCCLVersion)
	}
	if t.Tool != "" {
		sub = append(sub, strings.TrimSpace(t.Tool+" "+t.ToolVersion))
	}
	if t.PeakBusBWGBs > 0 {
		if t.PeakBusBWGBs > 0 {
			sub = append(sub, fmt.Sprintf("peak %.2f GB/s at %s", t.PeakBusBWGBs, humanSize(t.PeakSize)))
		}
	}
	v.Sub = strings.Join(sub, " · ")
	v.SVG, v.Points = busbwSVG(runs)
	v.Legend, v.Verdicts = plotLegend(runs)
	return v
}

func plotLegend(runs []ncclRun) (legend []legendItem, verdicts []string) {
	v := plotView{}
	for i, r := range runs {
		v.Legend = append(v.Legend, legendItem{Class: fmt.Sprintf("c%d", i%6), Label: r.Run})
		for _, s := range r.Verdicts {
			if len(runs) > 1 {
				s = r.Run + ": " + s
			}
			v.Verdicts = append(v.Verdicts, s)
		}
	}
	v.Legend = append(v.Legend, legendItem{Class: "muted", Line: "dash", Label: "in-place"})
	exp, wire := refLines(runs)
	if exp > 0 {
		v.Legend = append(v.Legend, legendItem{Class: "ce", Line: "dash", Label: fmt.Sprintf("expected %.4g GB/s", exp)})
	}
	if wire > 0 {
		v.Legend = append(v.Legend, legendItem{Class: "cw", Line: "dot", Label: fmt.Sprintf("wire limit %.4g GB/s", wire)})
	}
	return v.Legend, v.Verdicts
}

// refLines returns the expected busbw and the wire limit of a plot: the
// latest run's that has them.
func refLines(runs []ncclRun) (exp, wire float64) {
	for _, r := range runs {
		if r.ExpectedGBs > 0 {
			exp = r.ExpectedGBs
		}
		if r.WireGBs > 0 {
			wire = r.WireGBs
		}
	}
	return exp, wire
}

// plot geometry
const (
	plotW, plotH                     = 960.0, 340.0
	padL, padR, padT, padB           = 56.0, 18.0, 14.0, 42.0
	innerW, innerH                   = plotW - padL - padR, plotH - padT - padB
	maxXTicks                        = 9
	sizeAxisLabel, busbwAxisLabelTxt = "message size (bytes)", "busbw (GB/s)"
)

type axis struct{ lo, hi float64 }

func (a axis) frac(v float64) float64 {
	if a.hi == a.lo {
		return 0.5
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// busbwSVG draws busbw against message size on a log₂ axis, one line per
// run (out of place solid with points, in place dashed), and the expected
// and wire-limit lines. It returns the SVG and the number of points drawn.
func busbwSVG(runs []ncclRun) (template.HTML, int) {
	xa, ya := plotAxes(runs)
	px := func(size int64) float64 { return padL + innerW*xa.frac(math.Log2(float64(size))) }
	py := func(gbs float64) float64 { return padT + innerH*(1-ya.frac(gbs)) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="busbw" viewBox="0 0 %.0f %.0f" role="img" aria-label="bus bandwidth against message size">`, plotW, plotH)
	drawPlotGrid(&s, xa, ya, px, py)
	exp, wire := refLines(runs)
	// Each label sits above its line; when the two lines are closer than a
	// label's height, the lower line's label goes under it instead.
	wireDy, expDy := -4.0, -4.0
	if exp > 0 && wire > 0 && math.Abs(py(exp)-py(wire)) < refLabelGap {
		if exp < wire {
			expDy = refLabelGap
		} else {
			wireDy = refLabelGap
		}
	}
	drawRef(&s, "wire", wire, "wire limit", py, wireDy)
	drawRef(&s, "expected", exp, "expected", py, expDy)
	points, total := 0, 0
	for _, r := range runs {
		total += len(r.Table.Rows)
	}
	for i, r := range runs {
		cls := fmt.Sprintf("s%d", i%6)
		var oop, ip []string
		var dots strings.Builder
		for _, row := range r.Table.Rows {
			if row.SizeBytes <= 0 {
				continue
			}
			x := px(row.SizeBytes)
			if b := row.IP.BusBWGBs; b != nil {
				ip = append(ip, fmt.Sprintf("%.1f,%.1f", x, py(*b)))
			}
			b := row.OOP.BusBWGBs
			if b == nil {
				continue
			}
			oop = append(oop, fmt.Sprintf("%.1f,%.1f", x, py(*b)))
			tip := fmt.Sprintf("%s · %s: %.2f GB/s out of place", r.Run, humanSize(row.SizeBytes), *b)
			if row.IP.BusBWGBs != nil {
				tip += fmt.Sprintf(", %.2f in place", *row.IP.BusBWGBs)
			}
			fmt.Fprintf(&dots, `<circle class="pt %s" cx="%.1f" cy="%.1f" r="4" data-size="%d" data-busbw="%g"><title>%s</title></circle>`,
				cls, x, py(*b), row.SizeBytes, *b, template.HTMLEscapeString(tip))
			if total <= 6 { // a few points: write their values
				fmt.Fprintf(&dots, `<text class="ptval" x="%.1f" y="%.1f">%.2f</text>`, x+8, py(*b)+4, *b)
			}
			points++
		}
		if len(ip) > 1 {
			fmt.Fprintf(&s, `<polyline class="ip %s" points="%s"/>`, cls, strings.Join(ip, " "))
		}
		if len(oop) > 1 {
			fmt.Fprintf(&s, `<polyline class="oop %s" points="%s"/>`, cls, strings.Join(oop, " "))
		}
		s.WriteString(dots.String())
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String()), points
}

// plotAxes picks the log₂ size range (whole powers of two) and the busbw range.
func plotAxes(runs []ncclRun) (axis, axis) {
	lo, hi, top := math.Inf(1), math.Inf(-1), 0.0
	for _, r := range runs {
		for _, row := range r.Table.Rows {
			if row.SizeBytes <= 0 {
				continue
			}
			l := math.Log2(float64(row.SizeBytes))
			lo, hi = math.Min(lo, math.Floor(l)), math.Max(hi, math.Ceil(l))
			for _, b := range []*float64{row.OOP.BusBWGBs, row.IP.BusBWGBs} {
				if b != nil {
					top = math.Max(top, *b)
				}
			}
		}
	}
	exp, wire := refLines(runs)
	top = math.Max(top, math.Max(exp, wire))
	if math.IsInf(lo, 1) {
		lo, hi = 10, 34
	}
	if hi-lo < 4 { // a single size still gets an axis around it
		lo, hi = lo-2, hi+2
	}
	yTop, _ := niceAxis(top * 1.05)
	return axis{lo, hi}, axis{0, yTop}
}

func drawPlotGrid(s *strings.Builder, xa, ya axis, px func(int64) float64, py func(float64) float64) {
	step := 1.0
	for (xa.hi-xa.lo)/step > maxXTicks {
		step++
	}
	for step > 1 && int(step)%2 == 1 && (xa.hi-xa.lo)/(step+1) > 3 { // prefer even steps: 1K, 4K, 16K …
		step++
	}
	for k := math.Ceil(xa.lo); k <= xa.hi; k += step {
		x := padL + innerW*xa.frac(k)
		fmt.Fprintf(s, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, padT, x, padT+innerH)
		fmt.Fprintf(s, `<text class="tick xtick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, padT+innerH+16, humanSize(int64(math.Exp2(k))))
	}
	_, yStep := niceAxis(ya.hi)
	for v := 0.0; v <= ya.hi+1e-9; v += yStep {
		y := py(v)
		fmt.Fprintf(s, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, padL, y, padL+innerW, y)
		fmt.Fprintf(s, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, y+4, trimFloat(v))
	}
	fmt.Fprintf(s, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, padL, padT+innerH, padL+innerW, padT+innerH)
	fmt.Fprintf(s, `<text class="alabel" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, padL+innerW/2, plotH-6, sizeAxisLabel)
	fmt.Fprintf(s, `<text class="alabel" transform="translate(13 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, padT+innerH/2, busbwAxisLabelTxt)
}

// refLabelGap is the least vertical distance between the baselines of the
// reference lines' labels (their font is 10.5 px).
const refLabelGap = 14.0

// drawRef draws a horizontal reference line at v and its label, dy from
// the line (negative: above).
func drawRef(s *strings.Builder, cls string, v float64, label string, py func(float64) float64, dy float64) {
	if v <= 0 {
		return
	}
	y := py(v)
	fmt.Fprintf(s, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" data-value="%g"/>`, cls, padL, y, padL+innerW, y, v)
	fmt.Fprintf(s, `<text class="reflabel %s" x="%.1f" y="%.1f" text-anchor="end">%s %.4g</text>`, cls, padL+innerW-4, y+dy, label, v)
}

// trafficSVG draws, per bench step that moved data, one bar per rail of
// each host: its share of the bytes its host's rails sent, with the fair
// share marked, so an idle twin shows at a glance.
func trafficSVG(r *report.Report) template.HTML {
	type bar struct {
		label       string
		share, fair float64
	}
	var bars []bar
	for _, a := range r.Analyses {
		perHost := map[string]int{}
		for _, t := range a.Data.RailTraffic {
			perHost[t.Host]++
		}
		for _, t := range a.Data.RailTraffic {
			if t.TxBytes < 1<<20 && t.TxShare == 0 && perHost[t.Host] < 2 {
				continue
			}
			bars = append(bars, bar{a.File + " · " + t.Host + " " + t.NetDev, t.TxShare, 1 / float64(perHost[t.Host])})
		}
	}
	if len(bars) == 0 {
		return ""
	}
	const rowH, labelW, w = 26.0, 420.0, 960.0
	h := float64(len(bars))*rowH + 10
	bw := w - labelW - 60
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="rails" viewBox="0 0 %.0f %.0f" role="img" aria-label="traffic share per rail">`, w, h)
	for i, b := range bars {
		y := 6 + float64(i)*rowH
		cls := "bar"
		if b.share < b.fair/10 {
			cls += " low"
		}
		label := template.HTMLEscapeString(trimLabel(b.label, 60))
		fmt.Fprintf(&s, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, labelW-8, y+14, label)
		fmt.Fprintf(&s, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3"><title>%s: %.1f %%</title></rect>`, cls, labelW, y, bw*b.share, rowH-8, label, 100*b.share)
		fmt.Fprintf(&s, `<text class="barval" x="%.1f" y="%.1f">%.1f %%</text>`, labelW+bw*b.share+6, y+14, 100*b.share)
		x := labelW + bw*b.fair
		fmt.Fprintf(&s, `<line class="expected" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"><title>fair share %.0f %%</title></line>`, x, y-2, x, y+rowH-6, 100*b.fair)
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// railsSVG draws one horizontal bar per rail with its expectation marked.
func railsSVG(rails []railResult) template.HTML {
	const rowH, labelW, w = 30.0, 260.0, 960.0
	top := 0.0
	for _, r := range rails {
		top = math.Max(top, math.Max(r.Gbps, r.ExpectedGbps))
	}
	top, step := niceAxis(top * 1.08)
	manyRuns := false
	for _, r := range rails {
		manyRuns = manyRuns || r.Run != rails[0].Run
	}
	h := float64(len(rails))*rowH + 34
	bw := w - labelW - 20
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="rails" viewBox="0 0 %.0f %.0f" role="img" aria-label="RDMA bandwidth per rail">`, w, h)
	for v := 0.0; v <= top+1e-9; v += step {
		x := labelW + bw*v/top
		fmt.Fprintf(&s, `<line class="grid" x1="%.1f" y1="6" x2="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x, x, h-26, x, h-10, trimFloat(v))
	}
	for i, r := range rails {
		y := 8 + float64(i)*rowH
		cls := "bar"
		if r.ExpectedGbps > 0 && r.Gbps < 0.9*r.ExpectedGbps {
			cls += " low"
		}
		label := r.Rail
		if manyRuns {
			label = r.Rail + " · " + r.Run
		}
		fmt.Fprintf(&s, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, labelW-8, y+15, template.HTMLEscapeString(trimLabel(label, 36)))
		fmt.Fprintf(&s, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3"><title>%s: %.2f Gb/s</title></rect>`,
			cls, labelW, y+2, bw*r.Gbps/top, rowH-10, template.HTMLEscapeString(label), r.Gbps)
		fmt.Fprintf(&s, `<text class="barval" x="%.1f" y="%.1f">%.2f</text>`, labelW+bw*r.Gbps/top+6, y+15, r.Gbps)
		if r.ExpectedGbps > 0 {
			x := labelW + bw*r.ExpectedGbps/top
			fmt.Fprintf(&s, `<line class="expected" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"><title>expected %.0f Gb/s</title></line>`, x, y-1, x, y+rowH-5, r.ExpectedGbps)
		}
	}
	fmt.Fprintf(&s, `<text class="alabel" x="%.1f" y="%.1f" text-anchor="start">Gb/s</text></svg>`, labelW-40, h-10)
	return template.HTML(s.String())
}

// newComparison tabulates the peak busbw of every run and collective, with
// the change against the first run of the same collective on the same
// setup (ranks, nodes, GPU): runs of different setups sit side by side
// without a change, as nothing relates them.
func newComparison(runs []ncclRun, colls []string) *comparison {
	var labels []string
	peak := map[[2]string]float64{}
	setup := map[[2]string]string{}
	for _, r := range runs {
		if r.Table == nil {
			continue
		}
		if !containsString(labels, r.Run) {
			labels = append(labels, r.Run)
		}
		k := [2]string{r.Run, r.Table.Collective}
		peak[k] = math.Max(peak[k], r.Table.PeakBusBWGBs)
		gpu := ""
		if len(r.Table.Devices) > 0 {
			gpu = r.Table.Devices[0].Name
		}
		setup[k] = fmt.Sprintf("%d ranks on %d nodes, %s", r.Table.Ranks, r.Table.Nodes, gpu)
	}
	if len(labels) < 2 {
		return nil
	}
	c := &comparison{Colls: colls}
	base := map[[2]string]float64{}
	for _, run := range labels {
		row := compareRow{Run: run}
		for _, coll := range colls {
			k := [2]string{run, coll}
			v, ok := peak[k]
			if !ok {
				row.Cells = append(row.Cells, compareCell{Value: "–"})
				continue
			}
			cell := compareCell{Value: fmt.Sprintf("%.2f", v)}
			bk := [2]string{coll, setup[k]}
			if b := base[bk]; b == 0 {
				base[bk] = v
			} else {
				cell.Delta, cell.Class = deltaCell(v, b)
			}
			row.Cells = append(row.Cells, cell)
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

// deltaCell writes the change from base in percent, classed by size.
func deltaCell(v, base float64) (string, string) {
	d := (v - base) / base * 100
	switch {
	case d <= -5:
		return fmt.Sprintf("%+.1f%%", d), "bad"
	case d >= 5:
		return fmt.Sprintf("%+.1f%%", d), "good"
	}
	return fmt.Sprintf("%+.1f%%", d), "muted"
}

// humanSize writes a byte count in binary units the way nccl-tests users
// say sizes: 8, 1K, 64K, 16M, 16G.
func humanSize(b int64) string {
	units := []string{"", "K", "M", "G", "T", "P"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return trimFloat(v) + units[i]
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// niceAxis returns a round axis maximum at or above v and its tick step, so
// that the last tick is the top of the axis.
func niceAxis(v float64) (top, step float64) {
	if v <= 0 {
		return 1, 0.2
	}
	step = niceStep(v / 6)
	return math.Ceil(v/step-1e-9) * step, step
}

// niceStep rounds a tick step to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v-1e-12 {
			return m * p
		}
	}
	return 10 * p
}
