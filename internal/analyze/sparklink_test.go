package analyze

import (
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// sparkAllGather is field case 300's nccl-tests output (two DGX Spark,
// NCCL 2.28.9, the QSFP cable re-plugged without a reboot) with its busbw
// and algbw set from busbw: all_gather on two ranks moves algbw = 2 busbw.
func sparkAllGather(busbw float64) []string {
	lines := []string{
		"# nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809",
		"# Collective test starting: all_gather_perf",
		"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 10 iters: 50 agg iters: 1 validation: 1 graph: 0 unalign: 0",
		"#",
		"# Using devices",
		"#  Rank  0 Group  0 Pid 548805 on spark-fb97 device  0 [000f:01:00] NVIDIA GB10",
		"#  Rank  1 Group  0 Pid 547459 on spark-4440 device  0 [000f:01:00] NVIDIA GB10",
		"#",
		"#                                                              out-of-place                       in-place          ",
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
	}
	for _, size := range []int64{1 << 30, 2 << 30, 4 << 30} {
		us := float64(size) / (2 * busbw * 1e3)
		lines = append(lines, fmt.Sprintf("%12d  %12d     float    none      -1  %7.0f  %6.2f  %6.2f       0  %7.0f  %6.2f  %6.2f       0",
			size, size/8, us, 2*busbw, busbw, us, 2*busbw, busbw))
	}
	return append(lines, "# Out of bounds values : 0 OK", fmt.Sprintf("# Avg bus bandwidth    : %.5f ", busbw), "#", "# Collective test concluded: all_gather_perf", "#")
}

// sparkWriteBW is an ib_write_bw client's output on one of DGX Spark's
// ConnectX-7 twins (testdata/perftest/02's banner) with one 1 MiB row.
func sparkWriteBW(dev string, gbps float64) []string {
	return []string{
		"---------------------------------------------------------------------------------------",
		"                    RDMA_Write BW Test",
		" Dual-port       : OFF          Device         : " + dev,
		" Number of qps   : 4            Transport type : IB",
		" Connection type : RC           Using SRQ      : OFF",
		" PCIe relax order: ON",
		" ibv_wr* API     : ON",
		" TX depth        : 128",
		" CQ Moderation   : 1",
		" Mtu             : 4096[B]",
		" Link type       : Ethernet",
		" GID index       : 3",
		" Max inline data : 0[B]",
		" rdma_cm QPs     : OFF",
		" Data ex. method : Ethernet",
		"---------------------------------------------------------------------------------------",
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
		fmt.Sprintf(" 1048576    9534             %.2f               %.2f  \t\t   %.6f", gbps, gbps, gbps/8/1.048576/1e3),
		"---------------------------------------------------------------------------------------",
	}
}

var sparkTwinDevs = []string{"rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"}

func sparkFlag(a report.AnalysisResult) *report.AnalysisFlag {
	for i := range a.Flags {
		if a.Flags[i].ID == "spark.cx7-degraded" {
			return &a.Flags[i]
		}
	}
	return nil
}

// Field case 300 exactly: all_gather at 2.83 GB/s between two GB10 after a
// re-plugged cable names the degraded ConnectX-7 first, with what it
// measured and what the platform gives.
func TestSparkLinkDegradedFieldCase300(t *testing.T) {
	a := analyseText(readTrain(t, "300_dgx_spark_qsfp_recabled_without_reboot_all_gather_2_8gbs.txt"))
	if got := topCause(a); got != "spark.cx7-degraded" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := sparkFlag(a)
	for _, want := range []string{"busbw 2.83 GB/s", "22.6 Gb/s per GPU", "13 % of the expected 21.97 GB/s", "the number alone also fits: NCCL fell back to NET/Socket"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence lacks %q: %s", want, f.Evidence)
		}
	}
	if !strings.Contains(f.Message, "2.83 of 21.97 GB/s") || !strings.Contains(f.Fix, "reboot both nodes") || !strings.Contains(f.Fix, "ib_write_bw") {
		t.Errorf("message %q fix %q", f.Message, f.Fix)
	}
}

// Any busbw in the degraded band (one GPU per node over two twins of 8-25
// Gb/s, at most 30 % of the expectation), behind any prefix, is named; a
// busbw above the band, or one the expectation passes, is not.
func TestSparkLinkDegradedNCCLAnyBusBW(t *testing.T) {
	r := rand.New(rand.NewSource(300))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			bw := 1 + r.Float64()*5.25 // 8 to 50 Gb/s per GPU, 4.6 % to 28 % of 21.97
			a := analyseText(prefixed(pre, sparkAllGather(bw)))
			if got := topCause(a); got != "spark.cx7-degraded" {
				t.Errorf("busbw %.2f behind %q: first %q (%s)", bw, pre, got, flagIDs(a))
			}
		}
		for _, bw := range []float64{0.5, 6.8, 12, 17, 22.5} {
			if a := analyseText(prefixed(pre, sparkAllGather(bw))); sparkFlag(a) != nil {
				t.Errorf("busbw %.2f behind %q raised it", bw, pre)
			}
		}
	}
}

// Any ib_write_bw rate of the degraded state on any twin is named; a rate
// outside the band is not.
func TestSparkLinkDegradedPerftestAnyRate(t *testing.T) {
	r := rand.New(rand.NewSource(267))
	for _, pre := range causePrefixes(r) {
		dev := sparkTwinDevs[r.Intn(len(sparkTwinDevs))]
		for range 4 {
			gbps := 8 + r.Float64()*17
			a := analyseText(prefixed(pre, sparkWriteBW(dev, gbps)))
			if got := topCause(a); got != "spark.cx7-degraded" {
				t.Errorf("%.2f Gb/s on %s behind %q: first %q (%s)", gbps, dev, pre, got, flagIDs(a))
			}
		}
		for _, gbps := range []float64{3, 7.5, 26, 50, 75, 96} {
			if a := analyseText(prefixed(pre, sparkWriteBW(dev, gbps))); sparkFlag(a) != nil {
				t.Errorf("%.2f Gb/s on %s behind %q raised it", gbps, dev, pre)
			}
		}
	}
}

// The kernel's slot-power line of a run-time attach in the same paste is
// named as the cause; a failure line of another cause keeps it quiet.
func TestSparkLinkDegradedHotplugAndOtherCauses(t *testing.T) {
	kernel := "mlx5_core 0000:01:00.0: mlx5_pcie_event:322: PCIe slot power capability was not advertised."
	a := analyseText(prefixed("", append(sparkWriteBW("rocep1s0f1", 13.42), kernel)))
	f := sparkFlag(a)
	if f == nil || !strings.HasPrefix(f.Message, "the ConnectX-7 was attached while the node ran") || !strings.Contains(f.Evidence, "kernel, line 20: "+kernel) {
		t.Fatalf("with the kernel line: %+v (%s)", f, flagIDs(a))
	}
	if !hasFlag(a, "error.mlx5-slot-power-not-advertised") {
		t.Errorf("the kernel line's own signature: %s", flagIDs(a))
	}
	// perftest's own failure line names another cause
	a = analyseText(prefixed("", append(sparkAllGather(2.83), "Couldn't allocate MR with error=12")))
	if sparkFlag(a) != nil {
		t.Errorf("raised beside a failure: %s", flagIDs(a))
	}
	// one node: no link carries the test
	a = Reader("paste.txt", strings.NewReader(prefixed("", sparkWriteBW("rocep1s0f0", 13))), Options{Topology: "single-node"})
	if sparkFlag(a) != nil {
		t.Errorf("raised on one node: %s", flagIDs(a))
	}
	// another platform's slow link is not a ConnectX-7 of a DGX Spark
	a = Reader("paste.txt", strings.NewReader(prefixed("", sparkWriteBW("mlx5_0", 13))), Options{Platform: "h100"})
	if sparkFlag(a) != nil {
		t.Errorf("raised on h100: %s", flagIDs(a))
	}
}

// iperf3 over a DGX Spark link held like RDMA (field case 147's format,
// the rate of the degraded state) with the platform given.
func TestSparkLinkDegradedIperf3(t *testing.T) {
	run := func(gbps float64) report.AnalysisResult {
		lines := []string{"Connecting to host 192.168.100.11, port 5201",
			"[  5] local 192.168.100.10 port 46158 connected to 192.168.100.11 port 5201",
			"[ ID] Interval           Transfer     Bitrate         Retr  Cwnd"}
		for i := range 10 {
			lines = append(lines, fmt.Sprintf("[  5] %5.2f-%-5.2f  sec  %.2f GBytes  %.1f Gbits/sec    0   3.12 MBytes", float64(i), float64(i+1), gbps/8, gbps))
		}
		lines = append(lines, "- - - - - - - - - - - - - - - - - - - - - - - - -",
			"[ ID] Interval           Transfer     Bitrate         Retr",
			fmt.Sprintf("[  5]   0.00-10.00  sec  %.1f GBytes  %.1f Gbits/sec    0             sender", gbps*10/8, gbps),
			fmt.Sprintf("[  5]   0.00-10.00  sec  %.1f GBytes  %.1f Gbits/sec                  receiver", gbps*10/8, gbps), "", "iperf Done.")
		return Reader("paste.txt", strings.NewReader(prefixed("", lines)), Options{Platform: "dgx-spark"})
	}
	if a := run(13.3); topCause(a) != "spark.cx7-degraded" {
		t.Errorf("13.3 Gb/s: first %q (%s)", topCause(a), flagIDs(a))
	}
	for _, gbps := range []float64{5, 20, 30, 36.7} { // below the band; a tuned run's share; near or at the expectation
		if a := run(gbps); sparkFlag(a) != nil {
			t.Errorf("%.1f Gb/s raised it", gbps)
		}
	}
}

// No fixture raises it but field case 300.
func TestSparkLinkDegradedNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"spark.cx7-degraded"}, map[string]bool{
		"field/train/300_dgx_spark_qsfp_recabled_without_reboot_all_gather_2_8gbs.txt": true,
	})
}

// sparkLog09 is testdata/nccl-logs/09 (two DGX Spark, NCCL 2.28.9 on both
// twins over NET/IB, all_gather 1G at 21.99 GB/s) without its GID lines,
// with the row set to the degraded state's 2.83 GB/s (field case 300's
// all_gather of the same cluster after the cable was re-plugged).
func sparkLog09(t *testing.T) string {
	b, err := os.ReadFile("testdata/nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?s)=== BEGIN VERBATIM ===\n(.*?)=== END VERBATIM ===`).FindAllStringSubmatch(string(b), -1)
	if len(blocks) != 3 {
		t.Fatalf("%d blocks", len(blocks))
	}
	row := "  1073741824     134217728     float    none      -1  24414.9   43.98   21.99       0  24472.5   43.88   21.94       0"
	if !strings.Contains(blocks[2][1], row) {
		t.Fatal("row not found")
	}
	return blocks[0][1] + strings.Replace(blocks[2][1], row, "  1073741824     134217728     float    none      -1  189520.1    5.67    2.83       0  190310.0    5.64    2.82       0", 1)
}

// NCCL over NET/IB on both twins at 2.83 GB/s: the socket fallback is
// ruled out and the degraded ConnectX-7 is named, with a development-branch
// build (the same number over NET/IB) said as the look-alike; the same run
// over NET/Socket names the socket fallback instead.
func TestSparkLinkDegradedNCCLLogNETIB(t *testing.T) {
	text := sparkLog09(t)
	a := analyseText(text)
	f := sparkFlag(a)
	if f == nil || topCause(a) != "spark.cx7-degraded" {
		t.Fatalf("first %q (%s)", topCause(a), flagIDs(a))
	}
	if !strings.Contains(f.Evidence, "the number alone also fits: the NCCL build is too old or not a release build") || strings.Contains(f.Evidence, "NET/Socket") {
		t.Errorf("evidence: %s", f.Evidence)
	}
	// the same run with its GID lines: a twin on a link-local GID is
	// another cause the log names
	gid := "spark-4440:24302:24310 [0] NCCL INFO NET/IB: NCCL Dev 1 IbDev 1 Port 1 qpn 704 mtu 3 GID 0 (80FE/46442FFEFF47BB4E) fifoRkey=0x1ddcd6 fifoLkey=0x1ddcd6\n"
	if a := analyseText(text + gid); sparkFlag(a) != nil || !hasFlag(a, "spark.roce-gid") {
		t.Errorf("beside a link-local GID: %s", flagIDs(a))
	}
	sock := strings.NewReplacer("Using network IB", "Using network Socket", "via NET/IB/", "via NET/Socket/").Replace(text)
	if a := analyseText(sock); sparkFlag(a) != nil {
		t.Errorf("raised over NET/Socket: %s", flagIDs(a))
	}
}

// Field case 267's rows (13.33 and 13.23 Gb/s, no header: the verb is not
// known) are named once the platform is given, set against one twin's
// write bandwidth; without a platform nothing says the link is a Spark's.
func TestSparkLinkDegradedHeaderlessRows(t *testing.T) {
	text := readTrain(t, "267_spark_pair_cx7_hotplugged_cable_13gbps_per_rail.txt")
	a := Reader("267.txt", strings.NewReader(text), Options{Platform: "dgx-spark"})
	f := sparkFlag(a)
	if f == nil || topCause(a) != "spark.cx7-degraded" {
		t.Fatalf("first %q (%s)", topCause(a), flagIDs(a))
	}
	for _, want := range []string{"13.33 Gb/s on one RoCE device", "its verb is not known", "14 % of the expected 96.00 Gb/s"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence lacks %q: %s", want, f.Evidence)
		}
	}
	if a := analyseText(text); sparkFlag(a) != nil {
		t.Errorf("raised without a platform: %s", flagIDs(a))
	}
	// rows of a healthy twin, without their header, raise nothing
	healthy := strings.NewReplacer("13.33", "98.03", "13.23", "97.95").Replace(text)
	if a := Reader("267.txt", strings.NewReader(healthy), Options{Platform: "dgx-spark"}); sparkFlag(a) != nil {
		t.Errorf("raised on 98 Gb/s: %s", flagIDs(a))
	}
}
