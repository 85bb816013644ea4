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
		pageAndMetricsHold(t, r)
	})
}

// FuzzRunText feeds arbitrary text from the nodes of an all-pairs run and
// a triage (node names, evidence, log lines) through the page and the
// metrics of a report that merges them with the doctor's audit (the
// recorded documents of testdata): the page keeps exactly its own script,
// the metrics still parse.
func FuzzRunText(f *testing.F) {
	f.Add("node-3", "re-test node-3→node-7: failed again", "NCCL WARN timeout")
	f.Add(`</script><script>alert(1)</script>`, "<b>bold</b>\n# heading", "\x1b[2J`rm -rf /`")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, node, evidence, log string) {
		r := merged(t)
		r.AllPairs.Nodes[0], r.AllPairs.Scores[0].Node = node, node
		r.AllPairs.Suspects[0].Name, r.AllPairs.Suspects[0].Evidence[0] = node, evidence
		r.Triage.FirstNode, r.Triage.Evidence[0] = node, evidence
		r.Triage.Nodes[0].Host, r.Triage.Nodes[0].Log = node, []string{log}
		pageAndMetricsHold(t, r)
		for _, format := range []string{"text", "markdown"} {
			if err := Write(&bytes.Buffer{}, r, format, Options{}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// pageAndMetricsHold renders r as the HTML page, which must keep exactly
// its own script, and as metrics, which must still parse.
func pageAndMetricsHold(t *testing.T, r *report.Report) {
	t.Helper()
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
}
