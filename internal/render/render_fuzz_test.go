package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sparkrig/sparkrig/internal/report"
)

// FuzzHostText feeds arbitrary host-provided text (host names, subjects,
// observed values, fixes, netdev names) through the HTML and Prometheus
// renderers: the page must keep exactly its own script and no markup from
// the input, and the metrics must still parse.
func FuzzHostText(f *testing.F) {
	f.Add("spark-bd26", "enp1s0f0np0", "mtu 1500", "sudo ip link set enp1s0f0np0 mtu 9000")
	f.Add(`</script><script>alert(1)</script>`, `"quoted" \back`, "line\nbreak", "`ip a`")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, host, subject, observed, fix string) {
		r := twoSparks()
		r.Hosts[0].Host, r.Cluster.Links[0].A.Host = host, host
		r.Hosts[0].Findings[0].Subject, r.Cluster.Links[0].A.NetDev = subject, subject
		r.Hosts[0].Findings[0].Observed, r.Hosts[0].Findings[0].Remedy = observed, report.Manual(report.ActionRun, fix)
		var page bytes.Buffer
		if err := HTML(&page, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(strings.ToLower(page.String()), "<script"); n != 1 {
			t.Fatalf("%d script elements", n)
		}
		var prom bytes.Buffer
		if err := Prometheus(&prom, r); err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(strings.NewReader(prom.String())); err != nil {
			t.Fatalf("metrics do not parse: %v", err)
		}
	})
}
