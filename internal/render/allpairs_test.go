package render

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

func readReport(t testing.TB, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestAllPairsTextFitsTheWidth(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	for _, w := range []int{60, 80, 100} {
		var b bytes.Buffer
		if err := AllPairsText(&b, r.AllPairs, Options{Width: w}); err != nil {
			t.Fatal(err)
		}
		if err := FindingsText(&b, r.Cluster.Findings, Options{Width: w}); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if vlen(l) > w {
				t.Errorf("width %d: %d columns: %q", w, vlen(l), l)
			}
		}
		out := b.String()
		if w >= 80 && !strings.Contains(out, "   3 node-3  0.02! 0.02!     · 0.02!") {
			t.Errorf("width %d: no matrix row for node-3:\n%s", w, out)
		}
		if w < 80 && !strings.Contains(out, "the 8×8 matrix needs") && !strings.Contains(out, "7     8\n") {
			t.Errorf("width %d: neither matrix nor note:\n%s", w, out)
		}
		for _, want := range []string{"FAIL  node-3", "FAIL  node-6's cable, sending (node-6 → switch) — confirmed", "re-test node-4→node-6: passed"} {
			if w >= 80 && !strings.Contains(out, want) {
				t.Errorf("width %d: no %q:\n%s", w, want, out)
			}
		}
	}
}

func TestAllPairsHTMLEscapesAndColours(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	r.AllPairs.Nodes[0] = `<script>alert(1)</script>`
	var b bytes.Buffer
	if err := AllPairsHTML(&b, r.AllPairs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>") || !strings.Contains(out, "&lt;script&gt;") {
		t.Fatal("a node name reaches the page unescaped")
	}
	// node-3→node-1 at 0.02 Gb/s is red (hue 1), node-2→node-1 at 0.19 green
	if !strings.Contains(out, `style="background:hsl(1,70%,55%)" title="node-3 → &lt;script&gt;alert(1)&lt;/script&gt;">0.02`) {
		t.Errorf("slow cell not red:\n%s", out)
	}
	if !strings.Contains(out, `style="background:hsl(120,70%,55%)" title="node-2 → &lt;script&gt;alert(1)&lt;/script&gt;">0.19`) {
		t.Errorf("fast cell not green")
	}
}

func TestAllPairsPrometheus(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	var b bytes.Buffer
	if err := AllPairsPrometheus(&b, r.AllPairs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`sparkrig_allpairs_pass_ratio{node="node-3",side="tx"} 0`,
		`sparkrig_allpairs_pass_ratio{node="node-6",side="rx"} 0.8571428571428571`,
		`sparkrig_allpairs_suspect{kind="cable",node="node-6",side="tx",peer=""} 2`,
		"# TYPE sparkrig_allpairs_gbps gauge",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestTriageOutputs(t *testing.T) {
	r := readReport(t, "testdata/triage-rig.json")
	var b bytes.Buffer
	if err := TriageText(&b, r.Triage, r.Cluster.Findings, Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if vlen(l) > 80 {
			t.Errorf("%d columns: %q", vlen(l), l)
		}
	}
	if !strings.Contains(b.String(), "verdict: out-of-sync — first failing rank 2 on gpu-2") || !strings.Contains(b.String(), "     2  gpu-2            663      100 → 100") {
		t.Errorf("%s", b.String())
	}
	b.Reset()
	if err := TriagePrometheus(&b, r.Triage); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`sparkrig_triage_verdict{verdict="out-of-sync"} 1`, `sparkrig_triage_first_failing_rank{node="gpu-2"} 2`,
		`sparkrig_triage_rank_operations{rank="2",node="gpu-2",sample="2"} 100`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	r.Triage.Nodes[0].Log = []string{"<img src=x onerror=alert(1)>"}
	if err := TriageHTML(&b, r.Triage, r.Cluster.Findings); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<img") {
		t.Error("a log line reaches the page unescaped")
	}
}

// A pair measured with another tool than the heading names, or whose
// error counters moved, gets a line of its own; the others none. Counter
// names come from the nodes: sanitized.
func TestAllPairsTextNamesEachPairsTool(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	ap := r.AllPairs
	ap.Tool = "ib_write_bw where both ends have RDMA, else sparkrig TCP probe"
	ap.Pairs = []report.AllPairsPair{
		{A: "node-1", B: "node-2", Tool: "ib_write_bw", Moved: []string{"node-2 rocep1s0f1/1 symbol_error +21"}},
		{A: "node-3", B: "node-4", Tool: "sparkrig TCP probe"},
		{A: "node-5", B: "node-6", Tool: ap.Tool},
		{A: "node-7", B: "node-8", Tool: "ib_write_bw", Moved: []string{"node-8 eth0 rx_crc_errors\x1b[31m +3"}},
	}
	var b bytes.Buffer
	if err := AllPairsText(&b, ap, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"  node-1 ↔ node-2: ib_write_bw; error counters moved: node-2 rocep1s0f1/1 symbol_error +21\n",
		"  node-3 ↔ node-4: sparkrig TCP probe\n",
		"  node-7 ↔ node-8: ib_write_bw; error counters moved: node-8 eth0 rx_crc_errors",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s", want, out)
		}
	}
	// each direction against its pair's tool: node-1↔node-2 at 0.19 Gb/s is
	// and node-7↔node-8 are far under ib_write_bw's floor, the TCP pairs keep their own
	ap.Tools = []report.AllPairsTool{{Tool: "ib_write_bw", Reference: 92.57, Floor: 64.799}, {Tool: "sparkrig TCP probe", Reference: 0.18, Floor: 0.126}}
	b.Reset()
	if err := AllPairsText(&b, ap, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  reference for ib_write_bw: 92.6 Gb/s; a direction passes at 64.8 Gb/s or more\n",
		"   1 node-1      · 0.18! 0.01! 0.18 ",
		"   2 node-2  0.19!     · 0.02! 0.18 ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(out, "node-5 ↔ node-6") || strings.Contains(out, "\x1b") {
		t.Errorf("a pair with the heading's tool and no counter shown, or an escape kept:\n%s", out)
	}
}

// withNCCL adds a NCCL part to the rig's report, with rates rank 0
// printed on the H100 machine (NVLink 298.25 GB/s, one socket thread
// 4.81 GB/s) and a rank's real start-up error.
func withNCCL(r *report.Report) *report.Report {
	const noGPU = "sparkrig: bench gpu collective: no CUDA driver found: cuInit: CUresult 100 (is the NVIDIA kernel module loaded and a GPU visible?)"
	r.AllPairs.NCCL = &report.AllPairsNCCL{Tool: "NCCL all_reduce, 2 ranks", Rounds: 1, WallSeconds: 13.4, Reference: 298.25, Floor: 208.775,
		Pairs: []report.AllPairsNCCLPair{
			{A: "node-1", B: "node-2", BusGBs: 298.25, Bytes: 256 << 20, NCCLVersion: "2.28.3", Pass: true},
			{A: "node-3", B: "node-4", BusGBs: 4.81, Bytes: 256 << 20, NCCLVersion: "2.28.3"},
			{A: "node-5", B: "<b>node-6</b>", Error: noGPU},
		},
		Suspects: []report.AllPairsSuspect{{Kind: "pair", Node: "node-3", Peer: "node-4", Status: "suspect", Name: "the NCCL pair node-3 ↔ node-4",
			Evidence: []string{"node-3 ↔ node-4: 4.8 GB/s busbw at 256M, under 208.8 GB/s (70 % of the pairs' median 298.2 GB/s)"}}},
		Skipped: []string{"the pairs of these nodes were not NCCL-tested", "node-7 has no GPU"},
	}
	return r
}

func TestAllPairsNCCLOutputs(t *testing.T) {
	r := withNCCL(readReport(t, "testdata/allpairs-rig.json"))
	var text bytes.Buffer
	if err := AllPairsText(&text, r.AllPairs, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  NCCL all_reduce, 2 ranks · 3 pairs · 1 round · 13.4 s\n",
		"    reference: the best pairs' 298 GB/s busbw; a pair passes at 209 GB/s or more\n",
		"    ok    node-1 ↔ node-2: 298 GB/s at 256M, NCCL 2.28.3\n",
		"    WARN  node-3 ↔ node-4: 4.81 GB/s at 256M, NCCL 2.28.3\n",
		"    WARN  node-5 ↔ <b>node-6</b>: sparkrig: bench gpu collective: no CUDA driver found: cuInit:\n",
		"    WARN  the NCCL pair node-3 ↔ node-4 — suspect\n",
		"  the pairs of these nodes were not NCCL-tested\n    node-7 has no GPU\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in\n%s", want, text.String())
		}
	}
	var page bytes.Buffer
	if err := AllPairsHTML(&page, r.AllPairs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>NCCL, pair by pair</h2>", "<td>node-3</td><td>node-4</td><td>4.81 GB/s</td><td>256M</td><td>2.28.3</td><td class=\"WARN\">below the floor</td>",
		"&lt;b&gt;node-6&lt;/b&gt;", "node-7 has no GPU"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("html: no %q", want)
		}
	}
	if strings.Contains(page.String(), "<b>node-6") {
		t.Error("html: a node name was not escaped")
	}
	var prom bytes.Buffer
	if err := AllPairsPrometheus(&prom, r.AllPairs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`sparkrig_allpairs_nccl_busbw_gbytes_per_second{a="node-1",b="node-2"} 298.25`,
		`sparkrig_allpairs_nccl_busbw_gbytes_per_second{a="node-5",b="<b>node-6</b>"} -1`,
		`sparkrig_allpairs_nccl_suspect{kind="pair",node="node-3",peer="node-4"} 1`} {
		if !strings.Contains(prom.String(), want) {
			t.Errorf("prometheus: no %q in\n%s", want, prom.String())
		}
	}
}

// The HTML page names the node of each all-pairs finding, as the text does
// ("node-3 port"): the cluster's findings are about one node each.
func TestAllPairsHTMLFindingsNameTheirNode(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	var b bytes.Buffer
	if err := HTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="id">allpairs.node</span><span class="subj">node-3 port</span>`, `<span class="id">allpairs.cable</span><span class="subj">node-6 cable tx</span>`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
