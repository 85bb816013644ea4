package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// merged is what sparkrig report makes of three recorded documents
// (testdata, each with its SOURCE): the doctor's audit of a Spark pair with
// an MTU mismatch, an all-pairs run over eight rig hosts and a triage of a
// hung job; the runs' findings follow the doctor's among the cluster's.
func merged(t *testing.T) *report.Report {
	r := rigDoctor(t)
	ap := readReport(t, "testdata/allpairs-rig.json")
	tr := readReport(t, "testdata/triage-rig.json")
	r.Command = "report"
	r.AllPairs, r.Triage = ap.AllPairs, tr.Triage
	r.Cluster.Findings = append(append(r.Cluster.Findings, ap.Cluster.Findings...), tr.Cluster.Findings...)
	return r
}

func render(t *testing.T, r *report.Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, format, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMergedReportTextShowsEveryPart(t *testing.T) {
	out := render(t, merged(t), "text")
	for _, want := range []string{
		"spark-01 · no-gpu · ssh\n",
		"cluster · two-nodes-one-cable · 2 link(s)\n",
		"FAIL  cluster.mtu-mismatch — both ends of a link have the same MTU\n",
		"FAIL  allpairs.cable — each direction of the node's cable moves traffic at the segment's rate\n",
		"FAIL  triage.out-of-sync — every rank launches the same collectives\n",
		"all-pairs · 8 nodes · 7 rounds of 2.0 s · sparkrig TCP probe · 10.77.0.0/24 · 37.1 s\n",
		"   3 node-3  0.02! 0.02!     · 0.02! 0.02! 0.02! 0.02! 0.02!\n",
		"    FAIL  node-6's cable, sending (node-6 → switch) — confirmed\n",
		"triage · 3 node(s) · NCCL 2.28.9 · samples 20 s apart · 20.6 s\n",
		"  verdict: out-of-sync — first failing rank 2 on gpu-2\n",
		"     2  gpu-2            663      100 → 100\n",
		// 2 + 2 + 1 fail: the doctor's, the run's and the triage's
		"summary 2 of 2 host(s) audited and the cluster: 5 fail · 9 warn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// each finding once
	if n := strings.Count(out, "allpairs.node — "); n != 1 {
		t.Errorf("allpairs.node shown %d times", n)
	}
	// the summary, which agrees with the exit status, is the last line
	if !strings.HasPrefix(out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:], "summary ") {
		t.Errorf("the summary is not the last line:\n%s", out)
	}
}

// Without a doctor's audit there are no links to speak of: the runs'
// findings are shown without an empty links section.
func TestRunsWithoutAuditHaveNoEmptyLinks(t *testing.T) {
	r := merged(t)
	r.Hosts = nil
	r.Cluster.Links, r.Cluster.Topology = nil, ""
	r.Cluster.Findings = r.Cluster.Findings[len(r.Cluster.Findings)-3:]
	for _, format := range []string{"text", "markdown"} {
		out := render(t, r, format)
		for _, bad := range []string{"topology unknown", "no data links found", "0 link(s)"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %q in:\n%s", format, bad, out)
			}
		}
		for _, want := range []string{"allpairs.node", "triage.out-of-sync", "node-6's cable, sending", "out-of-sync — first failing rank 2 on gpu-2"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in:\n%s", format, want, out)
			}
		}
	}
}

// qualify's and triage's own documents render as those commands show them.
func TestRunDocumentsRenderAsTheirCommand(t *testing.T) {
	ap := readReport(t, "testdata/allpairs-rig.json")
	var want bytes.Buffer
	if err := AllPairsText(&want, ap.AllPairs, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	if err := FindingsText(&want, ap.Cluster.Findings, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	if got := render(t, ap, "text"); got != want.String() {
		t.Errorf("qualify's text:\n%s\nwant:\n%s", got, want.String())
	}
	want.Reset()
	if err := AllPairsHTML(&want, ap.AllPairs); err != nil {
		t.Fatal(err)
	}
	if got := render(t, ap, "html"); got != want.String() {
		t.Error("qualify's HTML is not its all-pairs page")
	}
	tr := readReport(t, "testdata/triage-rig.json")
	want.Reset()
	if err := TriagePrometheus(&want, tr.Triage); err != nil {
		t.Fatal(err)
	}
	if got := render(t, tr, "prometheus"); got != want.String() {
		t.Errorf("triage's metrics:\n%s\nwant:\n%s", got, want.String())
	}
}

func TestMergedReportMarkdown(t *testing.T) {
	out := render(t, merged(t), "markdown")
	for _, want := range []string{
		"### cluster (two-nodes-one-cable)\n",
		"| ❌ fail | `allpairs.node` | node-3 port |",
		"### all-pairs qualification\n",
		"| 3 node-3 | **0.02!** | **0.02!** | · | **0.02!** |",
		"- ❌ fail **node-6's cable, sending (node-6 → switch)** — confirmed (cable)\n",
		"| node-6 | 0/7 | 0.02 Gb/s | 6/7 | 0.16 Gb/s |\n",
		"### triage: out-of-sync — first failing rank 2 on gpu-2\n",
		"| 2 | gpu-2 | 663 | 100 → 100 |  |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestMergedReportHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, merged(t), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`<details class="host" data-host="spark-01" open>`,
		`<h2 id="topology">Topology`,
		`<span class="id">allpairs.cable</span>`,
		`<h2 id="all-pairs">All-pairs qualification</h2>`,
		`<th>3 node-3</th>`,
		`title="node-6 → node-1">0.02</td>`,
		`<span class="FAIL">confirmed</span> node-6&#39;s cable, sending (node-6 → switch)`,
		`<h2 id="triage">Triage</h2>`,
		`<b>first failing rank 2 on gpu-2</b>`,
		`<span class="status critical" id="status">critical</span>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	if strings.Count(out, "<html") != 1 || strings.Count(out, "</body>") != 1 {
		t.Error("the embedded pages left their own document structure")
	}
}

func TestMergedReportPrometheus(t *testing.T) {
	out := render(t, merged(t), "prometheus")
	for _, want := range []string{
		"sparkrig_status 2\n",
		`sparkrig_host_audited{host="spark-01",status="audited"} 1` + "\n",
		`sparkrig_check_status{host="cluster",check="cluster.mtu-mismatch",subject="spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1"} 4` + "\n",
		`sparkrig_check_status{host="node-6",check="allpairs.cable",subject="cable tx"} 4` + "\n",
		`sparkrig_allpairs_gbps{from="node-3",to="node-1"} 0.`,
		`sparkrig_allpairs_suspect{kind="cable",node="node-6",side="tx",peer=""} 2` + "\n",
		`sparkrig_triage_verdict{verdict="out-of-sync"} 1` + "\n",
		`sparkrig_triage_rank_operations{rank="2",node="gpu-2",sample="2"} 100` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
