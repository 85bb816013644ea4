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

// runText is hostile text from the nodes of an all-pairs run and a triage:
// a node name, evidence and a log line.
var runText = [][3]string{
	{"node-3", "re-test node-3→node-7: failed again", "NCCL WARN timeout"},
	{`</script><script>alert(1)</script>`, "<b>bold</b>\n# heading", "\x1b[2J`rm -rf /`"},
	{"\u202espark-01", "\x9b31m", "\r\x07"},
	{"", "", ""},
}

// withRunText puts node, evidence and log into the all-pairs and triage
// parts of r.
func withRunText(r *report.Report, node, evidence, log string) {
	r.AllPairs.Nodes[0], r.AllPairs.Scores[0].Node = node, node
	r.AllPairs.Suspects[0].Name, r.AllPairs.Suspects[0].Evidence[0] = node, evidence
	r.Triage.FirstNode, r.Triage.Evidence[0] = node, evidence
	r.Triage.Nodes[0].Host, r.Triage.Nodes[0].Log = node, []string{log}
}

// The page of a report that merges the recorded audit, all-pairs run and
// triage keeps exactly its own script whatever the nodes wrote, and its
// metrics still parse.
func TestRunTextPage(t *testing.T) {
	for _, in := range runText {
		r := merged(t)
		withRunText(r, in[0], in[1], in[2])
		pageAndMetricsHold(t, r)
	}
}

// FuzzRunText feeds arbitrary text from the nodes of an all-pairs run and
// a triage (node names, evidence, log lines) through the text, markdown and
// metrics of a small report that holds them beside a two-node audit: the
// text and markdown carry no terminal control from the input, the metrics
// still parse. The page is TestRunTextPage's and FuzzHostText's subject:
// with the page of the whole merged report each execution took 15-28 ms and
// the fuzzer ran a few dozen inputs in 10 s.
func FuzzRunText(f *testing.F) {
	for _, in := range runText {
		f.Add(in[0], in[1], in[2])
	}
	ap, tr := readReport(f, "testdata/allpairs-rig.json"), readReport(f, "testdata/triage-rig.json")
	f.Fuzz(func(t *testing.T, node, evidence, log string) {
		r := twoSparks()
		r.Command = "report"
		r.AllPairs, r.Triage = ap.AllPairs, tr.Triage
		withRunText(r, node, evidence, log)
		metricsParse(t, r)
		for _, format := range []string{"text", "markdown"} {
			var b bytes.Buffer
			if err := Write(&b, r, format, Options{}); err != nil {
				t.Fatal(err)
			}
			if i := strings.IndexAny(b.String(), "\x1b\x07\r\u009b\u202e"); i >= 0 {
				t.Fatalf("%s holds a control character of the input at %d: %q", format, i, b.String()[max(0, i-40):min(b.Len(), i+40)])
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
	metricsParse(t, r)
}

// metricsParse renders r as metrics, which must parse.
func metricsParse(t *testing.T, r *report.Report) {
	t.Helper()
	var prom bytes.Buffer
	if err := Prometheus(&prom, r); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(prom.String())); err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
}
