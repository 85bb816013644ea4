package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/report"
)

func clusterReport() *report.Report {
	ep := func(h, d, a string, mtu int) report.Endpoint {
		return report.Endpoint{Host: h, NetDev: d, Addr: a, MTU: mtu, SpeedMbps: 200000}
	}
	return &report.Report{Cluster: &report.Cluster{
		Topology: "two-nodes-one-cable",
		Links: []report.Link{
			{A: ep("spark-01", "enp1s0f1np1", "192.168.100.10/24", 9000), B: ep("spark-02", "enp1s0f1np1", "192.168.100.11/24", 1500), Subnet: "192.168.100.0/24",
				Status: report.LinkFaulty, Reasons: []string{"MTU 9000 ≠ 1500"}},
			{A: ep("spark-01", "enP2p1s0f1np1", "192.168.101.10/24", 9000), B: ep("spark-02", "enP2p1s0f1np1", "192.168.101.11/24", 9000), Subnet: "192.168.101.0/24", Status: report.LinkOK},
		},
		Findings: []report.Finding{
			{ID: "cluster.mtu-mismatch", Severity: report.Fail, Subject: "spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1", Title: "both ends of a link have the same MTU",
				Observed: "spark-01 enp1s0f1np1 MTU 9000, spark-02 enp1s0f1np1 MTU 1500", Remedy: report.Manual(report.ActionRun, "on spark-02: sudo ip link set enp1s0f1np1 mtu 9000")},
			{ID: "cluster.df-ping", Severity: report.OK, Host: "spark-01", Subject: "enP2p1s0f1np1 → spark-02 192.168.101.11", Title: "don't-fragment ping at the rail's MTU",
				Observed: "3/3 replies, avg RTT 0.047 ms"},
		},
	}}
}

func TestTextClusterDrawsLinks(t *testing.T) {
	var b bytes.Buffer
	if err := textCluster(&b, clusterReport(), Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"cluster · two-nodes-one-cable · 2 link(s)",
		"  spark-01 enp1s0f1np1    MTU 9000 · 200G  ───✗────  spark-02 enp1s0f1np1    MTU 1500 · 200G",
		"      192.168.100.0/24  faulty: MTU 9000 ≠ 1500",
		"  spark-01 enP2p1s0f1np1  MTU 9000 · 200G  ────────  spark-02 enP2p1s0f1np1  MTU 9000 · 200G",
		"      192.168.101.0/24  ok",
		"  spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1",
		"    FAIL  cluster.mtu-mismatch — both ends of a link have the same MTU",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("line %d:\n got %q\nwant %q\nall:\n%s", i, lines[i], w, b.String())
		}
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	b.Reset()
	textCluster(&b, clusterReport(), Options{Width: 160})
	if want := "  spark-01 enP2p1s0f1np1  MTU 9000 · 200G  ────────  spark-02 enP2p1s0f1np1  MTU 9000 · 200G  192.168.101.0/24   ok\n"; !strings.Contains(b.String(), want) {
		t.Errorf("a wide terminal gets one line per link; got:\n%s", b.String())
	}
	b.Reset()
	textCluster(&b, clusterReport(), Options{Width: 100})
	if strings.Contains(b.String(), "cluster.df-ping") {
		t.Error("a passing probe shown without --verbose")
	}
	b.Reset()
	textCluster(&b, clusterReport(), Options{Width: 100, Verbose: true})
	if !strings.Contains(b.String(), "spark-01 enP2p1s0f1np1 → spark-02 192.168.101.11\n    ok    cluster.df-ping") {
		t.Errorf("verbose output lacks the probe under its host:\n%s", b.String())
	}
}

func TestMarkdownClusterTable(t *testing.T) {
	var b bytes.Buffer
	if err := mdCluster(&b, clusterReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"### cluster (two-nodes-one-cable)",
		"| spark-01 enp1s0f1np1 (MTU 9000 · 200G) | spark-02 enp1s0f1np1 (MTU 1500 · 200G) | 192.168.100.0/24 | **faulty: MTU 9000 ≠ 1500** |",
		"| spark-01 enP2p1s0f1np1 (MTU 9000 · 200G) | spark-02 enP2p1s0f1np1 (MTU 9000 · 200G) | 192.168.101.0/24 | ok |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("missing %q in:\n%s", w, b.String())
		}
	}
	if err := mdCluster(&b, &report.Report{}, Options{}); err != nil {
		t.Error(err)
	}
}

func TestTextClusterSwitchEnd(t *testing.T) {
	r := &report.Report{Cluster: &report.Cluster{Topology: "switch", Links: []report.Link{{
		A:      report.Endpoint{Host: "spark-03", NetDev: "enp1s0f1np1", MTU: 1500, SpeedMbps: 200000},
		B:      report.Endpoint{Host: cluster.SwitchHost, NetDev: "192.168.100.0/24", MTU: 9000, SpeedMbps: 200000},
		Subnet: "192.168.100.0/24", Status: report.LinkFaulty, Reasons: []string{"MTU 1500, the segment's others 9000"}}}}}
	var b bytes.Buffer
	textCluster(&b, r, Options{Width: 160})
	want := "  spark-03 enp1s0f1np1  MTU 1500 · 200G  ───✗────  switch 192.168.100.0/24  MTU 9000 · 200G  192.168.100.0/24   faulty: MTU 1500, the segment's others 9000\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("switch link:\n got %q\nwant %q", b.String(), want)
	}
}
