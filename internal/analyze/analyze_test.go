package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/results"

	"github.com/sparkrig/sparkrig/internal/report"
)

// verbatim returns a fixture's program output (the text between the
// BEGIN/END VERBATIM lines), or the whole file for byte-exact JSON fixtures.
func verbatim(t testing.TB, name string) []byte {
	b := fixture.Read(t, filepath.Join("testdata", name))
	if v := fixture.Verbatim(b); v != nil {
		return v
	}
	return b
}

func analyseFixture(t *testing.T, name string, opt Options) report.AnalysisResult {
	t.Helper()
	return Reader(name, bytes.NewReader(verbatim(t, name)), opt)
}

func causeIDs(cs []report.Cause) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID+":"+c.Likelihood)
	}
	return ids
}

func TestSparkAllGather16GMTU1500(t *testing.T) {
	a := analyseFixture(t, "nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt", Options{})
	if a.Format != FormatNCCLTests || a.Platform != "dgx-spark" || !a.PlatformInferred || a.Topology != "two-nodes-one-cable" || !a.TopologyInferred {
		t.Fatalf("%+v", a)
	}
	if a.Status != report.VerdictWarning || len(a.Items) != 1 {
		t.Fatalf("status %s items %d", a.Status, len(a.Items))
	}
	it := a.Items[0]
	if it.Value != 20.95 || it.AtSize != 17179869184 || it.Expectation.ID != "spark-2n1c-all-gather-large" || *it.Ratio != 0.954 || it.Verdict != report.VerdictWarning {
		t.Errorf("item %+v", it)
	}
	if it.Wire == nil || it.Wire.Fraction != 0.838 || it.Wire.Value != 25 {
		t.Errorf("wire %+v", it.Wire)
	}
	if got := causeIDs(it.Causes); len(got) == 0 || got[0] != "mtu-1500:possible" {
		t.Errorf("causes %v", got)
	}
	tb := a.Data.NCCLTables[0]
	if *tb.Rows[0].OOP.BusBWGBs != 18.94 || *tb.Rows[0].IP.BusBWGBs != 20.95 || tb.Ranks != 2 || tb.Nodes != 2 {
		t.Errorf("table %+v", tb)
	}
}

func TestSparkLogBothTwinsOK(t *testing.T) {
	a := analyseFixture(t, "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt", Options{})
	it := a.Items[0]
	if it.Verdict != report.VerdictOK || it.Value != 21.99 || *it.Ratio != 1.001 || len(it.Causes) != 0 {
		t.Errorf("item %+v", it)
	}
	var flags []string
	for _, f := range a.Flags {
		flags = append(flags, string(f.Severity)+":"+f.ID)
	}
	if strings.Join(flags, ",") != "info:nccl.gdr-unavailable-gb10,warn:spark.roce-gid" {
		t.Errorf("flags %v", flags)
	}
	// the GID 0 on the second twin is a warning even though the number is fine
	if a.Status != report.VerdictWarning || a.TopologyEvidence != "2 hosts in the device lines; NCCL uses RoCE devices of one port" {
		t.Errorf("status %s topo %q", a.Status, a.TopologyEvidence)
	}
}

func TestSocketFallbackLog(t *testing.T) {
	a := analyseFixture(t, "nccl-logs/03_net-socket_fallback_hpcx-ibext_p2p-ipc-read.txt", Options{})
	if a.Format != FormatNCCLLog || a.Status != report.VerdictCritical || len(a.Flags) != 1 || a.Flags[0].ID != "nccl.net-socket" {
		t.Fatalf("%+v", a)
	}
	if a.Flags[0].Evidence != "2 channel connections via NET/Socket" {
		t.Errorf("evidence %q", a.Flags[0].Evidence)
	}
}

func TestHalfBandwidthOneTwin(t *testing.T) {
	// The real Spark run with its second RoCE device removed from the
	// NET/IB line and the channels, and busbw halved, as a one-twin run shows.
	in := string(verbatim(t, "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt"))
	in = strings.ReplaceAll(in, " [1]roceP2p1s0f1:1/RoCE", "")
	in = strings.ReplaceAll(in, "via NET/IB/1", "via NET/IB/0")
	in = strings.ReplaceAll(in, "43.98   21.99", "21.99   11.00")
	in = strings.ReplaceAll(in, "43.88   21.94", "21.94   10.97")
	a := Reader("one-twin", strings.NewReader(in), Options{})
	it := a.Items[0]
	if it.Verdict != report.VerdictCritical || *it.Ratio != 0.501 || it.Value != 11 {
		t.Fatalf("%+v", it)
	}
	got := causeIDs(it.Causes)
	want := "one-twin-unused:likely mtu-1500:possible net-socket:ruled-out link-100g:ruled-out nccl-build:ruled-out"
	if strings.Join(got, " ") != want {
		t.Errorf("causes %v", got)
	}
}

func TestPerftestTwins(t *testing.T) {
	a := analyseFixture(t, "perftest/01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt", Options{})
	if a.Platform != "dgx-spark" || len(a.Items) != 3 || a.Status != report.VerdictOK {
		t.Fatalf("%+v", a)
	}
	sum := a.Items[2]
	if sum.Value != 189.85 || sum.Expectation.ID != "spark-rdma-write-bw-both-twins" || *sum.Ratio != 1 || sum.Verdict != report.VerdictOK {
		t.Errorf("aggregate %+v", sum)
	}
	if a.Items[0].Value != 92.57 || *a.Items[0].Ratio != 0.964 || a.Items[1].Value != 97.28 {
		t.Errorf("per twin %+v / %+v", a.Items[0], a.Items[1])
	}
}

func TestPerftestLatency(t *testing.T) {
	a := analyseFixture(t, "perftest/03_ib_write_lat_dgx-spark_rdma_cm.txt", Options{})
	it := a.Items[0]
	if it.Value != 1.47 || it.Unit != "us" || it.Verdict != report.VerdictOK || it.Expectation.Better != "lower" {
		t.Errorf("%+v", it)
	}
	// the same run over a kernel TCP path
	in := strings.Replace(string(verbatim(t, "perftest/03_ib_write_lat_dgx-spark_rdma_cm.txt")), "1.47                1.47", "120.5               121.3", 1)
	a = Reader("tcp", strings.NewReader(in), Options{})
	it = a.Items[0]
	if it.Verdict != report.VerdictCritical || len(it.Causes) == 0 || it.Causes[0].ID != "tcp-path" || it.Causes[0].Likelihood != "likely" {
		t.Errorf("%+v", it)
	}
}

func TestLegacyPerftestNoExpectation(t *testing.T) {
	a := analyseFixture(t, "perftest/06_ib_send_bw_UD_-a_legacy-format_MBsec.txt", Options{})
	it := a.Items[0]
	if a.Platform != "" || it.Verdict != report.VerdictNone || !strings.HasPrefix(it.NoExpectation, "no expectation: the platform is not in the file") || it.Value != 24.49 {
		t.Errorf("%+v", it)
	}
}

func TestIperf3(t *testing.T) {
	a := analyseFixture(t, "iperf3/01_iperf3-3.9_tcp_client_omit3.json", Options{Platform: "dgx-spark"})
	it := a.Items[0]
	if a.Format != FormatIperf3 || it.Value != 0.054 || it.Verdict != report.VerdictCritical || a.Status != report.VerdictCritical {
		t.Errorf("%+v", it)
	}
	if a.Data.Iperf3.OmittedIntervals != 3 {
		t.Errorf("%+v", a.Data.Iperf3)
	}
}

func TestNVBandwidthWire(t *testing.T) {
	a := analyseFixture(t, "nvbandwidth/02_h2d_memcpy_sm_a100_full-run.txt", Options{})
	it := a.Items[0]
	if a.Platform != "a100" || a.Topology != "single-node" || it.Value != 25.13 || it.Wire == nil || it.Wire.Fraction != 0.798 || it.Verdict != report.VerdictNone {
		t.Errorf("%+v %+v", a, it.Wire)
	}
}

func TestNCCLJSONNeverEchoesEnv(t *testing.T) {
	a := analyseFixture(t, "nccl-tests-json/01_all_gather_2.17.6-keys_spark-values.json", Options{})
	if a.Format != FormatNCCLTestsJSON || a.Items[0].Value != 20.95 || a.Status != report.VerdictWarning {
		t.Fatalf("%+v", a)
	}
	b, _ := json.Marshal(a)
	if bytes.Contains(b, []byte("do-not-echo")) || bytes.Contains(b, []byte("HOME=")) {
		t.Errorf("environment leaked: %s", b)
	}
}

func TestH100Override(t *testing.T) {
	a := analyseFixture(t, "nccl-tests/02_all_reduce_2x_p5_16gpu_srun-label-prefix.txt", Options{Platform: "h100", Topology: "switch"})
	it := a.Items[0]
	if a.PlatformInferred || it.Verdict != report.VerdictNone || !strings.Contains(it.NoExpectation, "no expectation for all_reduce busbw with 16 ranks on h100, switch") {
		t.Errorf("%+v", it)
	}
}

func TestCollapseAtOneSize(t *testing.T) {
	a := analyseFixture(t, "nccl-tests/03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt", Options{})
	it := a.Items[3] // the DGX A100 NVSwitch table with its 4 GiB in-place outlier
	if len(it.Causes) != 1 || it.Causes[0].ID != "size-collapse" || it.Causes[0].Evidence[0] != "in-place busbw drops to 164.13 GB/s at 4G between 230.13 and 234.74" {
		t.Errorf("%+v", it.Causes)
	}
}

// endless yields n bytes of b repeated, without holding them.
type endless struct {
	prefix []byte
	b      byte
	n, pos int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.pos >= e.n {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && e.pos < e.n; i++ {
		if e.pos < int64(len(e.prefix)) {
			p[i] = e.prefix[e.pos]
		} else {
			p[i] = e.b
		}
		e.pos++
	}
	return i, nil
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		in   io.Reader
		want string
	}{
		{"empty", strings.NewReader(""), "empty input"},
		{"blank", strings.NewReader("\n\n  \n"), "empty input"},
		{"binary", bytes.NewReader([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0}), "binary data"},
		{"unknown", strings.NewReader("hello world\n"), "no line of a benchmark output"},
		// a line over the bound is skipped (and said), never the whole log:
		// that takes reading it, in constant memory
		{"2GB no newline", &endless{b: 'x', n: 2 << 30}, "only 1 line over 64 KiB without a newline"},
		{"2GB log line", &endless{prefix: []byte("host:1:1 [0] NCCL INFO "), b: 'x', n: 2 << 30}, "only 1 line over 64 KiB without a newline"},
		{"truncated", strings.NewReader("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n  1073741824     268435456     float     sum      -1  1121937    0.96\n"), "1 table rows could not be read"},
		{"perftest header only", strings.NewReader("                    RDMA_Write BW Test\n Dual-port       : OFF          Device         : rocep1s0f1\n"), "perftest: no result rows"},
		{"bad json", strings.NewReader(`{"intervals": [`), "iperf3 JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Reader(c.name, c.in, Options{})
			if a.Status != report.VerdictUnknown || !strings.Contains(a.Error, c.want) || strings.Contains(a.Error, "\n") {
				t.Errorf("status %s error %q, want %q", a.Status, a.Error, c.want)
			}
			if e, ok := c.in.(*endless); ok && e.pos > 2<<20 && !strings.HasPrefix(c.name, "2GB") {
				t.Errorf("read %d bytes of a file it could not use", e.pos)
			}
		})
	}
}

func TestForcedFormat(t *testing.T) {
	a := Reader("x", bytes.NewReader(verbatim(t, "nvbandwidth/01_d2d_memcpy_write_ce_8gpu_README.txt")), Options{InputFormat: FormatPerftest})
	if a.Status != report.VerdictUnknown || a.Error != "perftest: no result rows found (truncated?)" {
		t.Errorf("%+v", a)
	}
}

func TestPerGPUNetworkShare(t *testing.T) {
	// 2 nodes x 8 H100 (16 ranks) over EFA: busbw 487.26 GB/s is 32.48 GB/s
	// per GPU on the network, and tree may exceed the NIC rate on 2 nodes
	a := analyseFixture(t, "nccl-tests/02_all_reduce_2x_p5_16gpu_srun-label-prefix.txt", Options{Topology: "two-nodes-one-cable"})
	it := a.Items[0]
	want := []string{
		"per-GPU network share = busbw·(k−1)/(n−1) = 487.26·1/15 = 32.48 GB/s (k=2 nodes, n=16 GPUs)",
		"busbw equals a wire speed only for ring; on 2 nodes NCCL may choose tree for all_reduce, whose busbw can exceed the NIC rate",
	}
	if len(it.Notes) < 2 || it.Notes[0] != want[0] || it.Notes[1] != want[1] {
		t.Errorf("notes %q", it.Notes)
	}
}

// sparkrig's own collective benchmark (recorded on 2×H200) is read like nccl-tests.
func TestSparkrigBenchGPUJSON(t *testing.T) {
	p := parseFile(t, "../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.h200x2.json")
	if p.Format != FormatSparkrigJSON || p.NCCL == nil || len(p.NCCL.Tables) != 1 {
		t.Fatalf("format %q, tables %v", p.Format, p.NCCL)
	}
	tb := p.NCCL.Tables[0]
	if tb.Tool != "sparkrig" || tb.Collective != "all_reduce" || tb.Ranks != 2 || len(tb.Rows) != 14 || fmt.Sprintf("%.2f", tb.PeakBusBWGBs) != "348.51" || tb.PeakSize != 8<<30 {
		t.Errorf("table: %s %s %d ranks, %d rows, peak %v at %d", tb.Tool, tb.Collective, tb.Ranks, len(tb.Rows), tb.PeakBusBWGBs, tb.PeakSize)
	}
	// the same document compacted (jq -c) is still recognised
	var buf bytes.Buffer
	raw, _ := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.h200x2.json")
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	if got, err := Detect(buf.Bytes()); got != FormatSparkrigJSON {
		t.Errorf("compact JSON detected as %q (%v)", got, err)
	}
}

// bench gpu collective --format json is a report document with the tables
// under gpu.collectives: the recorded tables, in that envelope, read the same.
func TestSparkrigBenchGPUDocument(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.h200x2.json")
	if err != nil {
		t.Fatal(err)
	}
	var tables []results.NCCLTable
	if err := json.Unmarshal(raw, &tables); err != nil {
		t.Fatal(err)
	}
	doc, err := json.MarshalIndent(report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "bench gpu collective",
		Status: report.VerdictOK, Hosts: []report.Host{}, GPU: &report.GPU{Collectives: tables}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(bytes.NewReader(doc), "")
	if err != nil || p.Format != FormatSparkrigJSON || p.NCCL == nil || len(p.NCCL.Tables) != 1 {
		t.Fatalf("format %q, tables %v, %v", p.Format, p.NCCL, err)
	}
	if tb := p.NCCL.Tables[0]; tb.Collective != "all_reduce" || len(tb.Rows) != 14 || fmt.Sprintf("%.2f", tb.PeakBusBWGBs) != "348.51" || tb.PeakSize != 8<<30 {
		t.Errorf("table: %s, %d rows, peak %v at %d", tb.Collective, len(tb.Rows), tb.PeakBusBWGBs, tb.PeakSize)
	}
}

// The error an iperf3 -J document reports is read as the line iperf3
// prints for it: a signature that names its cause makes the file CRITICAL
// (nothing was measured, and why is known), the error kept as a note.
func TestIperf3ReportedError(t *testing.T) {
	a := analyseFixture(t, "iperf3/02_iperf3-3.12_client_connection-refused.json", Options{Platform: "dgx-spark"})
	if a.Format != FormatIperf3 || a.Status != report.VerdictCritical || len(a.Items) != 0 || a.Error != "" {
		t.Fatalf("format %s status %s items %d error %q", a.Format, a.Status, len(a.Items), a.Error)
	}
	if len(a.Flags) == 0 || a.Flags[0].ID != "error.iperf-server-unreachable" || a.Flags[0].Evidence != "line 10: \"error\":\t\"unable to connect to server: Connection refused\"" {
		t.Errorf("flags %s", flagIDs(a))
	}
	if !slices.Contains(a.Notes, "iperf3 reported an error: unable to connect to server: Connection refused") || a.Measured != "iperf3 client" {
		t.Errorf("notes %q measured %q", a.Notes, a.Measured)
	}
}

// An iperf3 -J error no signature names leaves the file unknown, the error
// said.
func TestIperf3ReportedErrorUnknown(t *testing.T) {
	raw, err := os.ReadFile("testdata/iperf3/02_iperf3-3.12_client_connection-refused.json")
	if err != nil {
		t.Fatal(err)
	}
	// IEAFFINITY's text and strerror(EINVAL) (esnet/iperf 3.21 src/iperf_error.c)
	doc := bytes.Replace(raw, []byte("unable to connect to server: Connection refused"), []byte("unable to set CPU affinity: Invalid argument"), 1)
	a := Reader("affinity.json", bytes.NewReader(doc), Options{Platform: "dgx-spark"})
	if a.Status != report.VerdictUnknown || len(a.Flags) != 0 || a.Error != "iperf3 reported an error: unable to set CPU affinity: Invalid argument" {
		t.Errorf("status %s flags %s error %q", a.Status, flagIDs(a), a.Error)
	}
}

// Each of iperf3's own errors in an -J document names its cause, the
// message built from the tool's format (iperf_strerror's text, ": " and
// strerror where it adds one).
func TestIperf3JSONErrorsNamed(t *testing.T) {
	raw, err := os.ReadFile("testdata/iperf3/02_iperf3-3.12_client_connection-refused.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range iperf3ErrorCases {
		for i, msg := range c.msgs {
			if i%2 == 1 { // iperf_err's own text: "error - %s" (src/iperf_error.c, src/main.c)
				msg = "error - " + msg
			}
			doc := bytes.Replace(raw, []byte("unable to connect to server: Connection refused"), []byte(msg), 1)
			a := Reader("err.json", bytes.NewReader(doc), Options{})
			if got := topCause(a); got != c.id || a.Status != report.VerdictCritical && a.Status != report.VerdictWarning {
				t.Errorf("%q: first %q, status %s (%s)", msg, got, a.Status, flagIDs(a))
			}
		}
	}
	// the refused connection with iperf_err's "error - " kept
	doc := bytes.Replace(raw, []byte(`"unable to connect`), []byte(`"error - unable to connect`), 1)
	if a := Reader("err.json", bytes.NewReader(doc), Options{}); topCause(a) != "error.iperf-server-unreachable" {
		t.Errorf("error - unable to connect: first %q (%s)", topCause(a), flagIDs(a))
	}
}

func TestIperf3NearExpectationCauses(t *testing.T) {
	// the real client document with its received rate set to 30 Gb/s: 86 %
	// of the ~35 Gb/s two DGX Spark give, the signature diagnose knows for MTU 1500
	in := strings.Replace(string(verbatim(t, "iperf3/01_iperf3-3.9_tcp_client_omit3.json")),
		`"bytes":	68637184,
			"bits_per_second":	53751930.614562325,`, `"bytes":	68637184,
			"bits_per_second":	30e9,`, 1)
	a := Reader("near", strings.NewReader(in), Options{Platform: "dgx-spark"})
	it := a.Items[0]
	if it.Value != 30 || it.Verdict != report.VerdictWarning || *it.Ratio != 0.857 {
		t.Fatalf("%+v", it)
	}
	if got := causeIDs(it.Causes); strings.Join(got, " ") != "mtu-1500:possible" || it.Causes[0].Evidence[0] != "result is 86 % of expected, the ~5 % MTU signature" {
		t.Errorf("causes %v %q", got, it.Causes)
	}
}

func TestOldNCCLFlag(t *testing.T) {
	// the real Spark log as an NCCL 2.25.1 run would print it: older than the
	// 2.28.3 the DGX Spark expectations name
	in := strings.ReplaceAll(string(verbatim(t, "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt")),
		"NCCL version 2.28.9+cuda13.0", "NCCL version 2.25.1+cuda12.8")
	a := Reader("old", strings.NewReader(in), Options{})
	var msgs []string
	for _, f := range a.Flags {
		if f.ID == "nccl.too-old" {
			msgs = append(msgs, f.Message+" | "+f.Evidence)
		}
	}
	if len(msgs) != 1 || msgs[0] != "NCCL 2.25.1+cuda12.8 is older than 2.28.3, the minimum for dgx-spark | NCCL version 2.25.1+cuda12.8" {
		t.Errorf("flags %q", msgs)
	}
}

// sparkrig's own TCP probe is judged like iperf3: throughput against the TCP
// expectation (seed 001: ~35 Gb/s between two DGX Spark), round trips reported.
func TestTCPProbeJudgedLikeIperf3(t *testing.T) {
	p := Parsed{Format: "sparkrig-probe", TCPProbe: []results.TCPProbeResult{{Streams: 4, DurationS: 10, Gbps: 35.0, RTTSamples: 200, RTTMinUS: 20, RTTAvgUS: 31.25, RTTP99US: 60}}}
	a := Judge("tcp/rail0", p, Options{Platform: "dgx-spark", Topology: "two-nodes-one-cable"})
	if len(a.Items) != 2 {
		t.Fatalf("items: %+v", a.Items)
	}
	bw, rtt := a.Items[0], a.Items[1]
	if bw.Metric != "received" || bw.Value != 35 || bw.Expectation == nil || bw.Verdict != report.VerdictOK {
		t.Errorf("throughput item: %+v (expectation %+v)", bw, bw.Expectation)
	}
	if rtt.Metric != "round trip" || rtt.Value != 31.25 || rtt.Verdict != report.VerdictNone {
		t.Errorf("round-trip item: %+v", rtt)
	}
	if a.Status != report.VerdictOK {
		t.Errorf("status %q, want ok", a.Status)
	}
	slow := Judge("tcp/rail0", Parsed{TCPProbe: []results.TCPProbeResult{{Streams: 4, DurationS: 10, Gbps: 3.5}}}, Options{Platform: "dgx-spark", Topology: "two-nodes-one-cable"})
	if slow.Status != report.VerdictCritical {
		t.Errorf("a tenth of the expected TCP rate: status %q, want critical", slow.Status)
	}
}

// A perftest run at an RDMA path MTU of 1024 B (the reference runs of
// NVIDIA's guide are) is said as a note, not judged: the verdict stays the
// rate's, and the note says what 4096 needs.
func TestPerftestPathMTUIsANote(t *testing.T) {
	a := analyseFixture(t, "perftest/02_ib_write_bw_dgx-spark_q4_rdma_cm.txt", Options{})
	if a.Status != report.VerdictOK || len(a.Flags) != 1 {
		t.Fatalf("status %s, flags %+v", a.Status, a.Flags)
	}
	f := a.Flags[0]
	if f.ID != "rdma.path-mtu" || f.Severity != "info" || f.Evidence != "Mtu : 1024[B]" ||
		f.Message != "ib_write_bw on rocep1s0f1 ran at an RDMA path MTU of 1024 B, not 4096: fine when the rate is as expected, a suspect when it is short" {
		t.Errorf("flag %+v", f)
	}
}

// One rank on one H100 (recorded): busbw is 0 at every size by definition,
// which the result says instead of "peak 0.00 GB/s at 0 B", and nothing is
// set against a wire, since nothing crosses one.
func TestOneRankBusBWIsZeroByDefinition(t *testing.T) {
	a := Judge("one-rank.txt", parseFile(t, "../../testdata/gpu/sparkrig.bench-gpu-collective.one-rank.h100.txt"), Options{})
	if a.Measured != "sparkrig all_reduce, 1 rank on 1 node, 8M–64M" || len(a.Items) != 1 {
		t.Fatalf("measured %q, %d items", a.Measured, len(a.Items))
	}
	it := a.Items[0]
	if it.Value != 0 || it.Wire != nil || it.Verdict != report.VerdictNone {
		t.Errorf("item %+v, wire %+v", it, it.Wire)
	}
	want := "at 64M busbw 0.00 out-of-place, 0.00 in-place; busbw is 0 with one rank (nothing moves between ranks): algbw is the figure; footer average 0.00 GB/s (over every size, not judged); 4 sizes 8M–64M; NCCL 2.28.3"
	if it.Summary != want {
		t.Errorf("summary %q", it.Summary)
	}
}
