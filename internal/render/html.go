package render

import (
	"embed"
	"html/template"
	"io"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

//go:embed assets/report.html.tmpl assets/report.css assets/report.js
var assets embed.FS

// pageTmpl is parsed when a page is first written: a run that writes none
// does not pay for it.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report.html.tmpl").ParseFS(assets, "assets/report.html.tmpl"))
})

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
	// The page is cleaned a line at a time as the template writes it (in
	// pieces): control, bidi and private-use characters from outside show
	// as escapes, and a report of thousands of hosts is never held as a
	// page.
	pv := newPage(r, opt, runs, rails, failed)
	if err := addSections(pv, r); err != nil {
		return err
	}
	lw := &lineWriter{w: safe(w)}
	if err := pageTmpl().Execute(lw, pv); err != nil {
		return err
	}
	return lw.Flush()
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
	// Hosts are made one at a time as the page is written, so a report
	// of thousands of hosts never holds a view of each beside itself.
	Hosts    iter.Seq[hostView]
	HasHosts bool
	Topo     *topoView

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

// findingView holds the finding's fields the page shows as its own: a
// template reaching a field through an embedded struct looks it up by name
// with an allocation each time, gigabytes over thousands of hosts.
type findingView struct {
	Severity                                            report.Severity
	ID, Subject, Title, Observed, Expected, Why, Source string
	Open                                                bool
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
	hosts := r.Hosts
	if r.Cluster != nil && len(r.Cluster.Findings) > 0 {
		hosts = append(hosts[:len(hosts):len(hosts)], report.Host{Host: "cluster", Status: "cross-node checks", Findings: r.Cluster.Findings})
	}
	for i, h := range hosts {
		if i < len(r.Hosts) && h.Status != "" && h.Status != report.HostAudited {
			p.Unaudited++
		}
		for _, f := range h.Findings {
			counts[f.Severity]++
		}
	}
	p.HasHosts = len(hosts) > 0
	allOpen := len(r.Hosts) <= openHostsUpTo
	p.Hosts = func(yield func(hostView) bool) {
		for _, h := range hosts {
			v := newHostView(h)
			v.Open = v.Open || allOpen
			if !yield(v) {
				return
			}
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

func newHostView(h report.Host) hostView {
	v := hostView{Name: h.Host, Profile: h.Profile, Status: h.Status, Source: h.Source, Error: h.Error}
	fs := append([]report.Finding(nil), h.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
	per := map[report.Severity]int{}
	for _, f := range fs {
		per[f.Severity]++
		subject := f.Subject
		if f.Host != "" && f.Host != h.Host {
			subject = f.Host + " " + subject // a cluster finding about one node names it, as the text does
		}
		v.Findings = append(v.Findings, findingView{Severity: f.Severity, ID: f.ID, Subject: subject, Title: f.Title,
			Observed: f.Observed, Expected: f.Expected, Why: f.Why, Source: f.Source,
			Open: f.Severity == report.Fail, Fix: remedyText(f.Remedy)})
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
