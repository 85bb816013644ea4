package render

import (
	"bytes"
	"embed"
	"html/template"
	"io"
	"sort"
	"time"

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
	// The page is cleaned whole (the template writes in pieces): control,
	// bidi and private-use characters from outside show as escapes.
	var page bytes.Buffer
	pv := newPage(r, opt, runs, rails, failed)
	if err := addSections(pv, r); err != nil {
		return err
	}
	if err := pageTmpl.Execute(&page, pv); err != nil {
		return err
	}
	_, err := safe(w).Write(page.Bytes())
	return err
}

// severities in display order, worst first.
var severities = []report.Severity{report.Fail, report.Warn, report.NotEvaluated, report.Info, report.OK}

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

	// AllPairs and Triage are those commands' pages, embedded; Parts the
	// other commands' results as they print them.
	AllPairs, Triage template.HTML
	Parts            []partText
}

type sevCount struct {
	Sev   report.Severity
	Label string
	N     int
}

type sevFilter struct {
	Sev report.Severity
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
	report.Finding
	Open bool
	// Fix is the remedy as text.
	Fix string
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
	counts := map[report.Severity]int{}
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
		p.Filters = append(p.Filters, sevFilter{Sev: s, N: counts[s], On: s != report.OK})
		if s != report.OK || counts[s] > 0 {
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

func newHostView(h report.Host, counts map[report.Severity]int) hostView {
	v := hostView{Name: h.Host, Profile: h.Profile, Status: h.Status, Source: h.Source, Error: h.Error}
	fs := append([]report.Finding(nil), h.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
	per := map[report.Severity]int{}
	for _, f := range fs {
		counts[f.Severity]++
		per[f.Severity]++
		v.Findings = append(v.Findings, findingView{Finding: f, Open: f.Severity == report.Fail, Fix: remedyText(f.Remedy)})
	}
	for _, s := range severities {
		if per[s] > 0 && s != report.OK {
			v.Badges = append(v.Badges, sevCount{Sev: s, N: per[s]})
		}
	}
	v.Open = v.Error != ""
	return v
}

func sevLabel(s report.Severity) string {
	switch s {
	case report.Fail:
		return "failed"
	case report.Warn:
		return "warnings"
	case report.NotEvaluated:
		return "not evaluated"
	case report.Info:
		return "info"
	}
	return "passed"
}

// statusWord is the report's overall status, derived from the findings when
// the report does not say.
func statusWord(r *report.Report) string {
	if r.Status != "" {
		return string(r.Status)
	}
	return string(r.Overall())
}
