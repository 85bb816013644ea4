package render

import (
	"embed"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/report"
)

//go:embed assets/report.html.tmpl assets/report.css assets/report.js
var assets embed.FS

var pageTmpl = template.Must(template.New("report.html.tmpl").ParseFS(assets, "assets/report.html.tmpl"))

var (
	pageCSS = template.CSS(mustAsset("assets/report.css"))
	pageJS  = template.JS(mustAsset("assets/report.js"))
)

func mustAsset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	return string(b)
}

// HTMLOptions add what the report model does not carry.
type HTMLOptions struct {
	// Title heads the page; "sparkrig report" when empty.
	Title string
	// Inputs lists the files the report was made from, shown under the title.
	Inputs []string
}

// HTML writes r as one self-contained HTML page: inline CSS, JS and SVG, and
// a Content-Security-Policy that forbids every network request.
func HTML(w io.Writer, r *report.Report, opt HTMLOptions) error {
	runs, rails, failed := benchData(r)
	return pageTmpl.Execute(w, newPage(r, opt, runs, rails, failed))
}

// severities in display order, worst first.
var severities = []check.Severity{check.Fail, check.Warn, check.NotEvaluated, check.Info, check.OK}

// page is the view model of the HTML template.
type page struct {
	Title, Tool, ToolVersion, Command, Generated, Status string
	Schema                                               int
	Inputs                                               []string
	CSS                                                  template.CSS
	JS                                                   template.JS

	HostCount, Unaudited int
	Counts               []sevCount
	Filters              []sevFilter
	Hosts                []hostView
	Topo                 *topoView

	RunCount   int
	Plots      []plotView
	Rails      template.HTML
	RailsSub   string
	Traffic    template.HTML
	Comparison *comparison
	Results    []resultRow
	Flags      []flagRow
	Failed     []report.AnalysisResult
	Plans      []planFigure
}

type sevCount struct {
	Sev   check.Severity
	Label string
	N     int
}

type sevFilter struct {
	Sev check.Severity
	N   int
	On  bool
}

type hostView struct {
	Name, Profile, Status, Source, Error string
	Badges                               []sevCount
	Findings                             []findingView
	// Open unfolds the host: always in small reports; in large ones only
	// when it could not be audited (the badges summarise the rest).
	Open bool
}

// openHostsUpTo is the largest report whose hosts all start unfolded.
const openHostsUpTo = 8

type findingView struct {
	check.Finding
	Open bool
}

func newPage(r *report.Report, opt HTMLOptions, runs []ncclRun, rails []railResult, failed []report.AnalysisResult) *page {
	p := &page{
		Title: opt.Title, Tool: r.Tool, ToolVersion: r.ToolVersion, Command: r.Command,
		Status: statusWord(r), Schema: r.Schema, Inputs: opt.Inputs, CSS: pageCSS, JS: pageJS,
		HostCount: len(r.Hosts),
	}
	if p.Title == "" {
		p.Title = "sparkrig report"
	}
	if p.Tool == "" {
		p.Tool = "sparkrig"
	}
	if !r.GeneratedAt.IsZero() {
		p.Generated = r.GeneratedAt.UTC().Format(time.RFC3339)
	}
	counts := map[check.Severity]int{}
	for _, h := range r.Hosts {
		if h.Status != "" && h.Status != report.HostAudited {
			p.Unaudited++
		}
		p.Hosts = append(p.Hosts, newHostView(h, counts))
	}
	if r.Cluster != nil && len(r.Cluster.Findings) > 0 {
		p.Hosts = append(p.Hosts, newHostView(report.Host{Host: "cluster", Status: "cross-node checks", Findings: r.Cluster.Findings}, counts))
	}
	if len(r.Hosts) <= openHostsUpTo {
		for i := range p.Hosts {
			p.Hosts[i].Open = true
		}
	}
	for _, s := range severities {
		p.Filters = append(p.Filters, sevFilter{Sev: s, N: counts[s], On: s != check.OK})
		if s != check.OK || counts[s] > 0 {
			p.Counts = append(p.Counts, sevCount{Sev: s, Label: sevLabel(s), N: counts[s]})
		}
	}
	p.Topo = newTopoView(r.Cluster)
	addBenchmarks(p, runs, rails)
	p.Traffic = trafficSVG(r)
	p.Results, p.Flags = resultRows(r)
	p.Failed = failed
	p.Plans = newPlanFigures(r.Plans)
	return p
}

func newHostView(h report.Host, counts map[check.Severity]int) hostView {
	v := hostView{Name: h.Host, Profile: h.Profile, Status: h.Status, Source: h.Source, Error: h.Error}
	fs := append([]check.Finding(nil), h.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
	per := map[check.Severity]int{}
	for _, f := range fs {
		counts[f.Severity]++
		per[f.Severity]++
		v.Findings = append(v.Findings, findingView{Finding: f, Open: f.Severity == check.Fail})
	}
	for _, s := range severities {
		if per[s] > 0 && s != check.OK {
			v.Badges = append(v.Badges, sevCount{Sev: s, N: per[s]})
		}
	}
	v.Open = v.Error != ""
	return v
}

func sevLabel(s check.Severity) string {
	switch s {
	case check.Fail:
		return "failed"
	case check.Warn:
		return "warnings"
	case check.NotEvaluated:
		return "not evaluated"
	case check.Info:
		return "info"
	}
	return "passed"
}

// statusWord is the report's overall status, derived from the findings when
// the report does not say.
func statusWord(r *report.Report) string {
	switch r.Status {
	case "ok", "warning", "critical", "unknown":
		return r.Status
	}
	switch r.Worst() {
	case check.Fail:
		return "critical"
	case check.Warn:
		return "warning"
	}
	return "ok"
}
