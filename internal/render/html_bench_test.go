package render

import (
	"fmt"
	"io"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// bigReport is 64 hosts with 24 findings each, a ring of 64 nodes with two
// links each, and 10 runs of the four analysed samples (8 NCCL tables and 2
// rails per run).
func bigReport(b testing.TB) *report.Report {
	base := twoSparks()
	r := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "doctor", Status: "critical", GeneratedAt: base.GeneratedAt,
		Cluster: &report.Cluster{Topology: "switch", Findings: base.Cluster.Findings}}
	for i := 0; i < 64; i++ {
		h := report.Host{Host: fmt.Sprintf("spark-%02d", i), Profile: "dgx-spark", Status: report.HostAudited}
		for j := 0; j < 4; j++ { // 4 × 6 findings
			for _, f := range append(base.Hosts[0].Findings, base.Hosts[1].Findings...) {
				f.Host, f.Subject = h.Host, fmt.Sprintf("%s-%d", f.Subject, j)
				h.Findings = append(h.Findings, f)
			}
		}
		r.Hosts = append(r.Hosts, h)
		for _, l := range base.Cluster.Links {
			l.A.Host, l.B.Host = h.Host, fmt.Sprintf("spark-%02d", (i+1)%64)
			r.Cluster.Links = append(r.Cluster.Links, l)
		}
	}
	samples := analysedSamples(b)
	for i := 0; i < 10; i++ {
		for _, a := range samples {
			a.File = fmt.Sprintf("run-%02d/%s", i+1, a.File)
			r.Analyses = append(r.Analyses, a)
		}
	}
	return r
}

// BenchmarkHTMLLarge renders the page of 64 hosts (1,536 findings), 128
// links and 10 runs (80 NCCL tables, 20 rails). Target: under a second.
func BenchmarkHTMLLarge(b *testing.B) {
	r := bigReport(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := HTML(io.Discard, r, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrometheusLarge writes the metrics of the same report.
func BenchmarkPrometheusLarge(b *testing.B) {
	r := bigReport(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Prometheus(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
