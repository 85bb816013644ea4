package render

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// pageFacts is what the browser test reads back from the rendered DOM.
type pageFacts struct {
	Findings        int            `json:"findings"`
	VisibleFindings int            `json:"visible"`
	Plots           map[string]int `json:"plots"` // collective → points drawn
	PlotCount       int            `json:"plotCount"`
	Nodes           int            `json:"nodes"`
	Links           int            `json:"links"`
	BadLinks        int            `json:"badLinks"`
	Status          string         `json:"status"`
	AfterFilter     int            `json:"afterFilter"`
	Rails           int            `json:"rails"`
	CompareRows     int            `json:"compareRows"`
	CompareColls    int            `json:"compareColls"`
	Results         int            `json:"results"`
	Expected        string         `json:"expected"`
	Wire            string         `json:"wire"`
	HeatCells       int            `json:"heatCells"`
	Suspects        int            `json:"suspects"`
	TriageRanks     int            `json:"triageRanks"`
}

const pageFactsJS = `(() => {
  const plots = {};
  document.querySelectorAll(".plot").forEach(p => { plots[p.dataset.collective] = p.querySelectorAll("circle.pt").length; });
  const visible = () => [...document.querySelectorAll(".finding")].filter(f => f.offsetParent !== null).length;
  const out = {
    findings: document.querySelectorAll(".finding").length,
    visible: visible(),
    plots: plots,
    plotCount: document.querySelectorAll(".plot").length,
    nodes: document.querySelectorAll("svg.topology g.node").length,
    links: document.querySelectorAll("svg.topology path.link").length,
    badLinks: document.querySelectorAll("svg.topology path.link.bad").length,
    status: document.getElementById("status").textContent,
    rails: document.querySelectorAll("svg.rails rect.bar").length,
    compareRows: document.querySelectorAll("table.compare tbody tr").length,
    results: document.querySelectorAll("table.results tr.result").length,
    compareColls: document.querySelectorAll("table.compare thead th").length - 1,
    expected: (document.querySelector('.plot[data-collective="all_gather"] line.expected') || {dataset: {}}).dataset.value || "",
    wire: (document.querySelector('.plot[data-collective="all_gather"] line.wire') || {dataset: {}}).dataset.value || "",
    heatCells: document.querySelectorAll("#all-pairs-figure table.m td").length,
    suspects: document.querySelectorAll("#all-pairs-figure .s").length,
    triageRanks: document.querySelectorAll("#triage-figure table")[0] ? document.querySelectorAll("#triage-figure table")[0].querySelectorAll("tr").length - 1 : 0,
  };
  // Untick "fail": the filter must hide exactly the fail rows.
  const box = document.querySelector('.filters input[data-sev="fail"]');
  box.click();
  out.afterFilter = visible();
  box.click();
  return out;
})()`

// loadInChromium renders r to a file, opens it in headless Chromium, checks
// that it made no request and logged no error, and returns its DOM facts and
// a full-page screenshot.
func loadInChromium(t *testing.T, r *report.Report, dark bool) (pageFacts, []byte) {
	t.Helper()
	runs, rails, failed := benchData(r)
	p := newPage(r, HTMLOptions{Inputs: inputNames(r)}, runs, rails, failed)
	if err := addSections(p, r); err != nil {
		t.Fatal(err)
	}
	return loadPageInChromium(t, p, dark)
}

func loadPageInChromium(t *testing.T, p *page, dark bool) (pageFacts, []byte) {
	t.Helper()
	b := startBrowser(t)
	var buf bytes.Buffer
	if err := pageTmpl().Execute(&buf, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	b.open(url, dark)
	var f pageFacts
	b.eval(pageFactsJS, &f)
	png := b.screenshot()
	for _, p := range b.problems(url) {
		t.Errorf("page problem: %s", p)
	}
	return f, png
}

func saveShot(t *testing.T, name string, png []byte) {
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if *screenshotPath != "" {
		p = *screenshotPath
		if name != "report.png" {
			p = filepath.Join(filepath.Dir(p), name)
		}
	}
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", p, len(png))
}

func inputNames(r *report.Report) []string {
	names := []string{"doctor.json"}
	for _, a := range r.Analyses {
		names = append(names, a.File)
	}
	return names
}
