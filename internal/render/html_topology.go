package render

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// topoView is the cluster section: a drawing and a table of links.
type topoView struct {
	Kind  string
	SVG   template.HTML
	Links []linkRow
	Bad   int
}

type linkRow struct {
	A, B        report.Endpoint
	Subnet      string
	MTU, Speed  string
	OK          bool
	Status      report.LinkStatus
	Problems    string
	problemList []string
}

func newTopoView(c *report.Cluster) *topoView {
	if c == nil || len(c.Links) == 0 {
		return nil
	}
	v := &topoView{Kind: c.Topology}
	for _, l := range c.Links {
		row := linkRow{A: l.A, B: l.B, Subnet: l.Subnet, OK: l.OK(), Status: l.Status, problemList: l.Reasons,
			MTU: pairString(l.A.MTU, l.B.MTU, strconvItoa), Speed: linkSpeed(l)}
		row.Problems = strings.Join(l.Reasons, "; ")
		if !row.OK {
			v.Bad++
			row.Problems = string(cmp.Or(l.Status, report.LinkFaulty)) + ": " + cmp.Or(row.Problems, "fault")
		}
		v.Links = append(v.Links, row)
	}
	v.SVG = topologySVG(v.Links)
	return v
}

func strconvItoa(n int) string {
	if n <= 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// speedString writes a link speed the way ethtool users say it: 200G, 100G, 10G.
func speedString(mbps int) string {
	if mbps <= 0 {
		return "?"
	}
	return speedShort(mbps)
}

// linkSpeed is the speed both ends negotiated; an end that reports none
// (down, or unknown) shows as "?", so a link never looks faster than its
// evidence.
func linkSpeed(l report.Link) string {
	if l.A.SpeedMbps == l.B.SpeedMbps {
		return speedString(l.A.SpeedMbps)
	}
	return speedString(l.A.SpeedMbps) + "/" + speedString(l.B.SpeedMbps)
}

// pairString writes one value when both ends agree, else "a/b".
func pairString(a, b int, f func(int) string) string {
	if a == b || b == 0 {
		return f(a)
	}
	if a == 0 {
		return f(b)
	}
	return f(a) + "/" + f(b)
}

// topology geometry
const (
	topoW     = 960
	boxW      = 220
	boxHead   = 30
	portRow   = 30
	compactAt = 12 // more hosts than this: boxes without ports
)

type topoBox struct {
	name     string
	x, y, h  float64
	ports    []string
	portSide map[string]float64 // +1 right edge, -1 left edge
	out      [2]float64         // compact drawing: direction away from the circle's centre
}

func (b *topoBox) center() (float64, float64) { return b.x + boxW/2, b.y + b.h/2 }

func (b *topoBox) anchor(port string) (float64, float64, float64) {
	i := sort.SearchStrings(b.ports, port)
	y := b.y + boxHead + float64(i)*portRow + portRow/2
	side := b.portSide[port]
	if side > 0 {
		return b.x + boxW, y, side
	}
	return b.x, y, -1
}

// topologySVG draws hosts as boxes listing their ports and each link as a
// curve between the two ports, labelled with MTU and speed.
func topologySVG(links []linkRow) template.HTML {
	boxes, order := topoBoxes(links)
	compact := len(order) > compactAt
	h := placeBoxes(boxes, order, compact)
	for _, l := range links {
		a, b := boxes[l.A.Host], boxes[l.B.Host]
		setSide(a, l.A.NetDev, b)
		setSide(b, l.B.NetDev, a)
	}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="topology" viewBox="0 0 %d %.0f" role="img" aria-label="cluster topology">`, topoW, h)
	for _, l := range links {
		drawLink(&s, boxes, l, compact)
	}
	for _, name := range order {
		drawBox(&s, boxes[name], compact)
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// setSide puts a port on the edge of its box that faces the peer box.
func setSide(b *topoBox, port string, peer *topoBox) {
	if _, done := b.portSide[port]; done {
		return
	}
	bx, _ := b.center()
	px, _ := peer.center()
	b.portSide[port] = 1
	if px < bx || (px == bx && b.x > topoW/2) {
		b.portSide[port] = -1
	}
}

func topoBoxes(links []linkRow) (map[string]*topoBox, []string) {
	boxes := map[string]*topoBox{}
	var order []string
	get := func(host string) *topoBox {
		b := boxes[host]
		if b == nil {
			b = &topoBox{name: host, portSide: map[string]float64{}}
			boxes[host] = b
			order = append(order, host)
		}
		return b
	}
	for _, l := range links {
		for _, e := range []report.Endpoint{l.A, l.B} {
			b := get(e.Host)
			if !containsString(b.ports, e.NetDev) {
				b.ports = append(b.ports, e.NetDev)
			}
		}
	}
	sort.Strings(order)
	for _, b := range boxes {
		sort.Strings(b.ports)
	}
	return boxes, order
}

// placeBoxes sets every box's position and returns the drawing's height: two
// hosts face each other; more stand on an ellipse.
func placeBoxes(boxes map[string]*topoBox, order []string, compact bool) float64 {
	maxH := 0.0
	n := len(order)
	if compact { // hosts are dots on a circle, labelled outside it
		rx := float64(topoW)/2 - 110
		ry := rx * 0.8
		for i, name := range order {
			a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
			b := boxes[name]
			b.h = 0
			b.x, b.y = topoW/2+rx*math.Cos(a)-boxW/2, ry+40+ry*math.Sin(a)
			b.out = [2]float64{math.Cos(a), math.Sin(a)}
		}
		return 2*ry + 80
	}
	for _, name := range order {
		b := boxes[name]
		b.h = boxHead + float64(len(b.ports))*portRow + 8
		maxH = math.Max(maxH, b.h)
	}
	if n <= 2 {
		for i, name := range order {
			b := boxes[name]
			b.x, b.y = 30+float64(i)*(topoW-60-boxW), 20+(maxH-b.h)/2
		}
		return maxH + 40
	}
	rx := float64(topoW)/2 - boxW/2 - 20
	ry := math.Max(150, float64(n)*maxH/5)
	for i, name := range order {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		b := boxes[name]
		b.x = topoW/2 + rx*math.Cos(a) - boxW/2
		b.y = ry + 20 + maxH/2 + ry*math.Sin(a) - b.h/2
	}
	return 2*ry + maxH + 40
}

func drawBox(s *strings.Builder, b *topoBox, compact bool) {
	esc := template.HTMLEscapeString
	if compact {
		cx, cy := b.center()
		dx, dy := b.out[0], b.out[1]
		anchor := "start"
		if dx < -0.3 {
			anchor = "end"
		} else if dx < 0.3 {
			anchor = "middle"
		}
		fmt.Fprintf(s, `<g class="node" data-host="%s"><circle class="portdot" cx="%.1f" cy="%.1f" r="6"/>`, esc(b.name), cx, cy)
		fmt.Fprintf(s, `<text class="port" x="%.1f" y="%.1f" text-anchor="%s">%s</text></g>`, cx+dx*14, cy+dy*14+3.5, anchor, esc(trimLabel(b.name, 18)))
		return
	}
	fmt.Fprintf(s, `<g class="node" data-host="%s"><rect x="%.1f" y="%.1f" width="%d" height="%.1f" rx="8"/>`, esc(b.name), b.x, b.y, boxW, b.h)
	fmt.Fprintf(s, `<text class="hname" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, b.x+boxW/2, b.y+20, esc(trimLabel(b.name, 26)))
	if !compact {
		for _, p := range b.ports {
			ax, ay, side := b.anchor(p)
			tx, anchor := ax-10, "end"
			if side < 0 {
				tx, anchor = ax+10, "start"
			}
			fmt.Fprintf(s, `<text class="port" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, tx, ay+3.5, anchor, esc(p))
			fmt.Fprintf(s, `<circle class="portdot" cx="%.1f" cy="%.1f" r="4"/>`, ax, ay)
		}
	}
	s.WriteString(`</g>`)
}

func drawLink(s *strings.Builder, boxes map[string]*topoBox, l linkRow, compact bool) {
	a, b := boxes[l.A.Host], boxes[l.B.Host]
	cls := "link"
	if !l.OK {
		cls += " bad"
	}
	title := fmt.Sprintf("%s %s ↔ %s %s: MTU %s, %s", l.A.Host, l.A.NetDev, l.B.Host, l.B.NetDev, l.MTU, l.Speed)
	if !l.OK {
		title += ": " + l.Problems
	}
	esc := template.HTMLEscapeString
	var x1, y1, x2, y2, d1, d2 float64
	if compact {
		x1, y1 = a.center()
		x2, y2 = b.center()
		fmt.Fprintf(s, `<path class="%s" d="M%.1f %.1fL%.1f %.1f"><title>%s</title></path>`, cls, x1, y1, x2, y2, esc(title))
		return
	}
	x1, y1, d1 = a.anchor(l.A.NetDev)
	x2, y2, d2 = b.anchor(l.B.NetDev)
	c := math.Max(50, math.Abs(x2-x1)/3)
	fmt.Fprintf(s, `<path class="%s" d="M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f"><title>%s</title></path>`,
		cls, x1, y1, x1+d1*c, y1, x2+d2*c, y2, x2, y2, esc(title))
	// The label sits at the curve's midpoint, which for this symmetric Bézier
	// is the mean of its four points.
	mx := (x1 + x1 + d1*c + x2 + d2*c + x2) / 4
	my := (y1 + y1 + y2 + y2) / 4
	label := "MTU " + l.MTU + " · " + l.Speed
	lc := "linklabel"
	if !l.OK {
		label = "⚠ " + string(l.Status) + " · " + label
		lc += " bad"
	}
	fmt.Fprintf(s, `<text class="%s" x="%.1f" y="%.1f" text-anchor="middle">%s<title>%s</title></text>`, lc, mx, my-5, esc(label), esc(title))
}

func trimLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
