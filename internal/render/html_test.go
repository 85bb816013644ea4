package render

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
)

func count(s, sub string) int { return strings.Count(s, sub) }

func TestHTMLDoctor(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, twoSparks(), HTMLOptions{Inputs: []string{"doctor.json"}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checks := []struct {
		what string
		got  int
		want int
	}{
		{"finding rows", count(page, `<details class="finding"`), 7},
		{"fail rows", count(page, `class="finding" data-sev="fail"`), 2},
		{"host sections", count(page, `<details class="host"`), 4}, // 3 hosts + cluster
		{"fix copy buttons", count(page, `<div class="fix">`), 4},
		{"links in the table", count(page, `class="link-row`), 2},
		{"faulty links in the table", count(page, `class="link-row faulty"`), 1},
		{"links drawn", count(page, `<path class="link`), 2},
		{"faulty links drawn", count(page, `<path class="link bad"`), 1},
		{"nodes drawn", count(page, `<g class="node"`), 2},
		{"ports drawn", count(page, `class="portdot"`), 4},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	for _, want := range []string{
		`<span class="status critical" id="status">critical</span>`,
		`MTU 1500/9000 · 200G/100G`,                            // the faulty link's label
		`MTU differs (1500/9000); speed 100G`,                  // its problems
		`sudo ip addr add 192.168.201.12/24 dev enP2p1s0f0np0`, // a fix, verbatim
		`ssh: connect to host spark-3 port 22: connection refused`,
		`<input type="checkbox" data-sev="ok">`, // ok is hidden by default
		`<input type="checkbox" data-sev="fail" checked>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLSelfContained: nothing in the page may point outside it.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, twoSparks(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|url\(|@import|https?://`).FindString(page); m != "" {
		t.Errorf("page references something outside itself: %q", m)
	}
	if !strings.Contains(page, `content="default-src 'none';`) {
		t.Error("page has no Content-Security-Policy forbidding requests")
	}
}

// TestHTMLEscapes: finding text comes from hosts and must not become markup.
func TestHTMLEscapes(t *testing.T) {
	r := twoSparks()
	r.Hosts[0].Findings[0].Observed = `<script>alert(1)</script>`
	r.Cluster.Links[0].A.NetDev = `<b>x</b>`
	var buf bytes.Buffer
	if err := HTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script>alert(1)") || strings.Contains(buf.String(), "<b>x</b>") {
		t.Error("host-provided text rendered as markup")
	}
}

func TestHumanSize(t *testing.T) {
	for in, want := range map[int64]string{1: "1", 8: "8", 1024: "1K", 65536: "64K", 33554432: "32M", 17179869184: "16G", 1536: "1.5K"} {
		if got := humanSize(in); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct{ in, top, step float64 }{
		{26.25, 30, 5}, {105.08, 120, 20}, {246.5, 250, 50}, {0.5, 0.5, 0.1}, {0, 1, 0.2},
	} {
		top, step := niceAxis(c.in)
		if math.Abs(top-c.top) > 1e-9 || math.Abs(step-c.step) > 1e-9 {
			t.Errorf("niceAxis(%v) = %v, %v; want %v, %v", c.in, top, step, c.top, c.step)
		}
	}
}
