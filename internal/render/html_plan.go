package render

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// planFigure is one plan drawn: TPOT and TTFT against the parallel layout.
type planFigure struct {
	Title, Sub string
	SVG        template.HTML
	Rows       []report.PlanRow
	Recommend  string
}

func newPlanFigures(plans []report.Plan) []planFigure {
	var out []planFigure
	for _, p := range plans {
		out = append(out, planFigure{
			Title: fmt.Sprintf("%s · %s", p.Model, p.Weights),
			Sub:   fmt.Sprintf("%d × %s · %s", p.Nodes, p.Platform, p.Workload),
			SVG:   planSVG(p), Rows: p.Layouts, Recommend: p.Recommended,
		})
	}
	return out
}

// planSVG draws time per output token (left axis, ms) and time to first
// token (right axis, s) for each layout that fits, one point per layout.
func planSVG(p report.Plan) template.HTML {
	var rows []report.PlanRow
	for _, r := range p.Layouts {
		if r.Fits {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return template.HTML(`<div class="none">no layout fits</div>`)
	}
	const w, h, left, right, top, bottom = 560.0, 220.0, 56.0, 56.0, 16.0, 34.0
	var tpotMax, ttftMax float64
	for _, r := range rows {
		tpotMax, ttftMax = max(tpotMax, r.TPOTms), max(ttftMax, r.TTFTms/1e3)
	}
	tpotTop, tpotStep := niceAxis(tpotMax)
	// The right axis shares the left one's grid lines.
	ttftTop, _ := niceAxis(ttftMax)
	x := func(i int) float64 {
		if len(rows) == 1 {
			return left + (w-left-right)/2
		}
		return left + float64(i)*(w-left-right)/float64(len(rows)-1)
	}
	y := func(v, topV float64) float64 { return top + (h-top-bottom)*(1-v/topV) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plan" viewBox="0 0 %.0f %.0f" role="img" aria-label="time per output token and time to first token by layout">`, w, h)
	for v := 0.0; v <= tpotTop+tpotStep/2; v += tpotStep {
		yy := y(v, tpotTop)
		fmt.Fprintf(&s, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, left, w-right, yy, yy)
		fmt.Fprintf(&s, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-6, yy+4, trimFloat(v))
		fmt.Fprintf(&s, `<text class="tick" x="%.1f" y="%.1f">%.3g</text>`, w-right+6, yy+4, v*ttftTop/tpotTop)
	}
	fmt.Fprintf(&s, `<text class="axislabel" x="%.1f" y="%.1f">TPOT ms</text>`, 4.0, top-4)
	fmt.Fprintf(&s, `<text class="axislabel" x="%.1f" y="%.1f" text-anchor="end">TTFT s</text>`, w-4, top-4)
	series := []struct {
		cls string
		v   func(report.PlanRow) float64
		top float64
		fmt string
		dy  float64 // TPOT labels above their point, TTFT below
	}{
		{"s0", func(r report.PlanRow) float64 { return r.TPOTms }, tpotTop, "%.0f ms", -8},
		{"s1", func(r report.PlanRow) float64 { return r.TTFTms / 1e3 }, ttftTop, "%.3g s", 17},
	}
	for _, se := range series {
		var pts []string
		for i, r := range rows {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(se.v(r), se.top)))
		}
		fmt.Fprintf(&s, `<polyline class="oop %s" points="%s"/>`, se.cls, strings.Join(pts, " "))
		for i, r := range rows {
			fmt.Fprintf(&s, `<circle class="pt %s" cx="%.1f" cy="%.1f" r="3.5"/>`, se.cls, x(i), y(se.v(r), se.top))
			fmt.Fprintf(&s, `<text class="ptval" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x(i), y(se.v(r), se.top)+se.dy,
				template.HTMLEscapeString(fmt.Sprintf(se.fmt, se.v(r))))
		}
	}
	for i, r := range rows {
		fmt.Fprintf(&s, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x(i), h-bottom+18, template.HTMLEscapeString(r.Layout))
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}
