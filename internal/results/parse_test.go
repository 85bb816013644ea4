package results

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func parseNCCLFixture(t *testing.T, name string) NCCLOutput {
	t.Helper()
	o, err := ParseNCCLTests(bytes.NewReader(verbatim(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestNCCLTestsSparkAllGather16G(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt")
	if len(o.Tables) != 1 {
		t.Fatalf("tables = %d, want 1", len(o.Tables))
	}
	got := o.Tables[0]
	want := NCCLTable{
		Collective: "all_gather", Tool: "nccl-tests", ToolVersion: "2.17.6", NCCLVersion: "2.28.3",
		Ranks: 2, Nodes: 2, NThreads: 1, NGpus: 1, Line: 10,
		Devices: []NCCLDevice{
			{Rank: 0, Host: "spark", PID: 1935208, Device: 0, PCIBus: "000f:01:00", Name: "NVIDIA GB10"},
			{Rank: 1, Host: "spark-3995", PID: 1278829, Device: 0, PCIBus: "000f:01:00", Name: "NVIDIA GB10"},
		},
		Rows: []NCCLRow{{SizeBytes: 17179869184, Count: 2147483648, Type: "float", RedOp: "none", Root: -1,
			OOP: Timing{TimeUS: f64(453650), AlgBWGBs: f64(37.87), BusBWGBs: f64(18.94), WrongErrs: i64(0)},
			IP:  Timing{TimeUS: f64(410049), AlgBWGBs: f64(41.90), BusBWGBs: f64(20.95), WrongErrs: i64(0)}}},
		PeakBusBWGBs: 20.95, PeakSize: 17179869184, OutOfBounds: i64(0),
		// the excerpt lost its "Avg bus bandwidth" footer: the table is truncated
		Complete: false,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestNCCLTestsMpirunTaggedWithInfo(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-tests/01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt")
	if len(o.Tables) != 1 {
		t.Fatalf("tables = %d", len(o.Tables))
	}
	tb := o.Tables[0]
	if len(tb.Rows) != 31 || tb.Ranks != 2 || tb.Nodes != 2 || tb.NCCLVersion != "2.12.7+cuda11.4" {
		t.Errorf("rows %d ranks %d nodes %d nccl %q", len(tb.Rows), tb.Ranks, tb.Nodes, tb.NCCLVersion)
	}
	if tb.Rows[0].SizeBytes != 0 || tb.Rows[1].SizeBytes != 0 || *tb.Rows[0].OOP.TimeUS != 6.36 {
		t.Errorf("0-byte rows: %+v", tb.Rows[:2])
	}
	last := tb.Rows[30]
	if last.SizeBytes != 1073741824 || *last.OOP.BusBWGBs != 3.11 || *last.IP.BusBWGBs != 3.12 || *last.IP.TimeUS != 344454 {
		t.Errorf("last row %+v", last)
	}
	if tb.PeakBusBWGBs != 3.15 || tb.PeakSize != 134217728 || *tb.AvgBusBWGBs != 1.15327 || !tb.Complete {
		t.Errorf("peak %v@%d avg %v complete %v", tb.PeakBusBWGBs, tb.PeakSize, *tb.AvgBusBWGBs, tb.Complete)
	}
	if tb.Devices[1].PCIBus != "0xf5" || tb.Devices[1].Name != "Tesla T4" || tb.Devices[1].Host != "test-nccl-efa-worker-1" {
		t.Errorf("device %+v", tb.Devices[1])
	}
	l := o.Log
	if l.InfoLines != 47 || l.Network != "AWS Libfabric" || l.Bootstrap != "eth0:10.11.5.31<0>" || l.Transports["NET/AWS Libfabric/0"] != 8 {
		t.Errorf("log %+v", l)
	}
	if l.NRanks != 2 || l.Channels != 2 || l.CollChannels != 2 || l.Env["NCCL_SHM_DISABLE"] != "0" {
		t.Errorf("log counts %+v", l)
	}
}

func TestNCCLTestsSrunLabel16Ranks(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-tests/02_all_reduce_2x_p5_16gpu_srun-label-prefix.txt")
	tb := o.Tables[0]
	if len(tb.Rows) != 32 || tb.Rows[0].SizeBytes != 8 || tb.Rows[31].SizeBytes != 17179869184 {
		t.Fatalf("rows %d", len(tb.Rows))
	}
	// no device lines: 16 ranks follow from busbw/algbw = 2(n-1)/n
	if tb.Ranks != 16 || !tb.RanksInferred || tb.Nodes != 0 || tb.Collective != "all_reduce" || !tb.CollectiveGuessed {
		t.Errorf("ranks %d inferred %v nodes %d coll %q", tb.Ranks, tb.RanksInferred, tb.Nodes, tb.Collective)
	}
	if tb.PeakBusBWGBs != 487.26 || tb.PeakSize != 17179869184 || tb.AvgBusBWGBs != nil || tb.Complete {
		t.Errorf("peak %v complete %v", tb.PeakBusBWGBs, tb.Complete)
	}
	if *tb.Rows[5].OOP.BusBWGBs != 0.01 || *tb.Rows[5].OOP.AlgBWGBs != 0 {
		t.Errorf("row 256 B %+v", tb.Rows[5].OOP)
	}
}

func TestNCCLTestsFiveTables(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-tests/03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt")
	type sum struct {
		Ranks int
		Peak  float64
		Avg   float64
	}
	var got []sum
	for _, tb := range o.Tables {
		got = append(got, sum{tb.Ranks, tb.PeakBusBWGBs, *tb.AvgBusBWGBs})
	}
	want := []sum{{2, 47.49, 47.4509}, {4, 1.44, 1.40216}, {2, 4.02, 3.85845}, {4, 234.74, 222.066}, {4, 5.20, 5.19883}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// the 4 GiB in-place outlier of the NVSwitch run
	if v := *o.Tables[3].Rows[2].IP.BusBWGBs; v != 164.13 {
		t.Errorf("outlier = %v", v)
	}
}

func TestNCCLLogSpark(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt")
	l := o.Log
	want := []NCCLNetDevice{
		{Index: 0, Name: "rocep1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 200000},
		{Index: 1, Name: "roceP2p1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 200000},
	}
	if d := cmp.Diff(want, l.IBDevices); d != "" {
		t.Errorf("IB devices (-want +got)\n%s", d)
	}
	if l.Version != "2.28.9+cuda13.0" || l.CUDADriver != 13000 || l.Network != "IB" || !l.RelaxedOrdering {
		t.Errorf("log %+v", l)
	}
	if l.OOB != "enp1s0f1np1:192.168.100.15<0>" || *l.RingGDR != 0 || l.NNodes != 2 || l.NRanks != 2 || l.LocalRanks != 1 {
		t.Errorf("log %+v", l)
	}
	if d := cmp.Diff([]string{"rocep1s0f1", "roceP2p1s0f1"}, l.GDRDisabledHCAs); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff(map[string]int64{"NET/IB/0": 2, "NET/IB/1": 2}, l.Transports); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]NCCLGID{{Dev: 0, GIDIndex: 3, MTU: 1024}, {Dev: 1, GIDIndex: 0, MTU: 1024}}, l.GIDs); d != "" {
		t.Error(d)
	}
	if l.Channels != 16 || l.CollChannels != 16 || l.Env["NCCL_SOCKET_IFNAME"] != "enp1s0f1np1" {
		t.Errorf("channels %d/%d env %v", l.Channels, l.CollChannels, l.Env)
	}
	if d := cmp.Diff([]int{0, 1}, l.NetDevicesUsed()); d != "" {
		t.Error(d)
	}
	tb := o.Tables[0]
	if tb.Collective != "all_gather" || tb.ToolVersion != "2.18.3" || tb.NCCLVersion != "2.28.9" || *tb.Rows[0].OOP.BusBWGBs != 21.99 || *tb.AvgBusBWGBs != 21.9636 {
		t.Errorf("table %+v", tb)
	}
}

func TestNCCLLogSocketFallback(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-logs/03_net-socket_fallback_hpcx-ibext_p2p-ipc-read.txt")
	k, gdr := o.Log.TransportKinds()
	if d := cmp.Diff(map[string]int64{"P2P": 14, "NET/Socket": 2}, k); d != "" || gdr {
		t.Errorf("kinds (-want +got)\n%s gdr %v", d, gdr)
	}
	if o.Log.CUDADriver != 12010 || o.Log.Bootstrap != "ibp12s0:10.149.0.32<0>" || len(o.Log.Hosts) != 1 {
		t.Errorf("%+v", o.Log)
	}
	if len(o.Tables) != 0 {
		t.Errorf("tables = %d", len(o.Tables))
	}
}

func TestNCCLLogOthers(t *testing.T) {
	o := parseNCCLFixture(t, "nccl-logs/01_net-ib_roce_2node_nccl2.18.5_plugin-missing.txt")
	l := o.Log
	if l.Version != "2.18.5+cuda12.0" || l.Network != "IB" || l.Env["NCCL_IB_HCA"] != "mlx5_4" || !l.RelaxedOrdering {
		t.Errorf("01 %+v", l)
	}
	if d := cmp.Diff([]NCCLNetDevice{{Index: 0, Name: "mlx5_4", Port: 1, Link: "RoCE"}}, l.IBDevices); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"node2", "node4"}, l.Hosts); d != "" {
		t.Error(d)
	}

	l = parseNCCLFixture(t, "nccl-logs/05_p2p-not-possible_shm-direct_net-ib-shared.txt").Log
	k, _ := l.TransportKinds()
	if l.P2PRefused != 3 || k["SHM"] != 2 || k["NET/IB"] != 5 || l.Env["NCCL_MIN_NCHANNELS"] != "2" {
		t.Errorf("05 refused %d kinds %v env %v", l.P2PRefused, k, l.Env)
	}

	l = parseNCCLFixture(t, "nccl-logs/07_nccl2.25_info-prefixed-version_no-ib-device_socket.txt").Log
	if l.Version != "2.25.1+cuda12.2" || l.Network != "Socket" || l.Bootstrap != "eno1:10.201.24.89<0>" {
		t.Errorf("07 %+v", l)
	}
	if d := cmp.Diff([]string{"eno1:10.201.24.89<0>", "CloudflareWARP:172.16.0.2<0>"}, l.SocketDevices); d != "" {
		t.Error(d)
	}
	if !strings.Contains(strings.Join(l.NetNotes, "|"), "NET/IB : No device found.") || len(l.IBDevices) != 0 {
		t.Errorf("07 notes %v devs %v", l.NetNotes, l.IBDevices)
	}
}

func TestPerftest(t *testing.T) {
	runs, err := ParsePerftest(bytes.NewReader(verbatim(t, "perftest/01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt")))
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %d err %v", len(runs), err)
	}
	r := runs[1]
	if r.Device != "roceP2p1s0f0" || r.MTU != 1024 || *r.GIDIndex != 3 || r.LinkType != "Ethernet" || r.Connection != "RC" || r.Transport != "IB" || r.QPs != 1 || !r.RunInfinitely || r.Unit != "Gb/sec" {
		t.Errorf("header %+v", r)
	}
	if len(runs[0].BW) != 5 || len(r.BW) != 6 || r.BW[5].AvgGbps != 97.28 || r.BW[5].PeakGbps != 0 || *r.BW[5].MsgRateMpps != 0.185554 || r.BW[4].AvgGbps != 97.29 {
		t.Errorf("rows %+v", r.BW)
	}
	if best, size := runs[0].BestAvgGbps(); best != 92.57 || size != 65536 {
		t.Errorf("best %v %d", best, size)
	}

	runs, _ = ParsePerftest(bytes.NewReader(verbatim(t, "perftest/02_ib_write_bw_dgx-spark_q4_rdma_cm.txt")))
	r = runs[0]
	if r.QPs != 4 || !r.RDMACM || r.LinkType != "IB" || r.GIDIndex != nil || r.RunInfinitely || len(r.BW) != 1 || r.BW[0].PeakGbps != 111.72 || r.BW[0].AvgGbps != 111.71 || r.BW[0].Iterations != 20000 {
		t.Errorf("02 %+v", r)
	}

	runs, _ = ParsePerftest(bytes.NewReader(verbatim(t, "perftest/03_ib_write_lat_dgx-spark_rdma_cm.txt")))
	want := []PerftestLatRow{{Bytes: 2, Iterations: 1000, MinUS: f64(1.42), MaxUS: f64(1.93), TypicalUS: f64(1.47),
		AvgUS: f64(1.47), StdevUS: f64(0), P99US: f64(1.57), P999US: f64(1.93)}}
	if d := cmp.Diff(want, runs[0].Lat); d != "" || runs[0].Kind != "lat" || runs[0].Verb != "write" {
		t.Errorf("lat (-want +got)\n%s", d)
	}

	runs, _ = ParsePerftest(bytes.NewReader(verbatim(t, "perftest/06_ib_send_bw_UD_-a_legacy-format_MBsec.txt")))
	r = runs[0]
	if r.Unit != "MB/sec" || r.Connection != "UD" || r.MTU != 2048 || len(r.BW) != 11 || r.BW[10].Bytes != 2048 || r.BW[10].MsgRateMpps != nil {
		t.Errorf("06 %+v", r)
	}
	// 2919.91 MB/sec (2^20 B) = 24.494 Gb/s
	if g := r.BW[10].AvgGbps; g < 24.4939 || g > 24.4940 {
		t.Errorf("2048 B avg = %v Gb/s", g)
	}
}

func TestIperf3(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "iperf3", "01_iperf3-3.9_tcp_client_omit3.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseIperf3(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Iperf3Result{Version: "iperf 3.9", Role: "client", Protocol: "TCP", Streams: 1, Remote: "158.175.122.228",
		DurationS: 10, OmitS: 3, Intervals: 10, OmittedIntervals: 3,
		SentGbps: 0.0534777877789659, ReceivedGbps: 0.053751930614562325, Retransmits: i64(1012),
		MinIntervalGbps: 0, MaxIntervalGbps: 0.13629403443823525, CongestionCtl: "cubic"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if _, err := ParseIperf3([]byte(`{"a":1}`)); err != ErrNotIperf3 {
		t.Errorf("err = %v", err)
	}
}

func TestNVBandwidth(t *testing.T) {
	run, err := ParseNVBandwidth(bytes.NewReader(verbatim(t, "nvbandwidth/01_d2d_memcpy_write_ce_8gpu_README.txt")))
	if err != nil || len(run.Tests) != 1 {
		t.Fatalf("%v %d", err, len(run.Tests))
	}
	m := run.Tests[0]
	if m.Name != "device_to_device_memcpy_write_ce" || len(m.Rows) != 8 || len(m.Columns) != 8 || *m.Values[6][0] != 274.89 || m.Min != 274.89 || m.Max != 276.76 || m.Sum != nil {
		t.Errorf("%+v", m)
	}
	if m.Mean < 276.31 || m.Mean > 276.34 {
		t.Errorf("mean %v", m.Mean)
	}
	run, _ = ParseNVBandwidth(bytes.NewReader(verbatim(t, "nvbandwidth/02_h2d_memcpy_sm_a100_full-run.txt")))
	m = run.Tests[0]
	if run.Version != "v0.8" || len(run.Devices) != 1 || m.Name != "host_to_device_memcpy_sm" || *m.Sum != 25.13 || m.Max != 25.13 || m.Title != "memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)" {
		t.Errorf("%+v %+v", run, m)
	}
}

func TestAllReduceBench(t *testing.T) {
	tb, err := ParseAllReduceBench(bytes.NewReader(verbatim(t, "all_reduce_bench/01_all_reduce_bench_README_table.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 20 || tb.Rows[0].SizeBytes != 32<<10 || tb.Rows[19].SizeBytes != 16<<30 || tb.PeakBusBWGBs != 98.34 || tb.PeakSize != 32<<20 {
		t.Errorf("%+v", tb)
	}
	// 91.69/47.32 = 1.9377 = 2(n-1)/n for n = 32 (4 nodes x 8 GPUs)
	if tb.Ranks != 32 || !tb.RanksInferred {
		t.Errorf("ranks %d", tb.Ranks)
	}
}

func TestNCCLTestsJSON(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("testdata", "nccl-tests-json", "01_all_gather_2.17.6-keys_spark-values.json"))
	tb, err := ParseNCCLTestsJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Collective != "all_gather" || tb.Ranks != 2 || tb.Nodes != 2 || tb.NCCLVersion != "2.28.3" || *tb.AvgBusBWGBs != 19.945 || tb.PeakBusBWGBs != 20.95 {
		t.Errorf("%+v", tb)
	}
	if r := tb.Rows[0]; *r.OOP.BusBWGBs != 18.94 || *r.IP.BusBWGBs != 20.95 || r.Root != -1 || *r.OOP.WrongErrs != 0 {
		t.Errorf("row %+v", r)
	}
	b, _ = os.ReadFile(filepath.Join("testdata", "nccl-tests-json", "02_all_reduce_current-keys_nan.json"))
	tb, err = ParseNCCLTestsJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Collective != "all_reduce" || tb.Ranks != 4 || tb.Nodes != 1 || *tb.AvgBusBWGBs != 222.066 || tb.PeakBusBWGBs != 234.72 || tb.Rows[3].IP.BusBWGBs != nil || tb.Rows[2].IP.WrongErrs != nil {
		t.Errorf("%+v", tb)
	}
}

func TestLineReaderBounds(t *testing.T) {
	long := bytes.Repeat([]byte("x"), MaxLineBytes+10)
	lr := NewLineReader(bytes.NewReader(append([]byte("ok\n"), long...)))
	if l, err := lr.Next(); err != nil || string(l) != "ok" {
		t.Fatalf("%q %v", l, err)
	}
	if _, err := lr.Next(); err == nil || !strings.Contains(err.Error(), "line 2: line too long") {
		t.Errorf("err = %v", err)
	}
	for in, want := range map[string]string{"[1,0]<stdout>:# x": "# x", "12: abc": "abc", "  0: # y": "# y", "node2:1:2 [0] NCCL": "node2:1:2 [0] NCCL"} {
		if got := string(StripLauncherPrefix([]byte(in))); got != want {
			t.Errorf("strip(%q) = %q", in, got)
		}
	}
}

func TestSplitGlued(t *testing.T) {
	o, _ := ParseNCCLTests(strings.NewReader("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"  1073741824     268435456     float     sum      -1  1121937   1234.5612.34      0  1120530    0.96    1.44    N/A\n"))
	r := o.Tables[0].Rows[0]
	if *r.OOP.AlgBWGBs != 1234.56 || *r.OOP.BusBWGBs != 12.34 || r.IP.WrongErrs != nil || *r.IP.BusBWGBs != 1.44 {
		t.Errorf("%+v %+v", r.OOP, r.IP)
	}
}

// The fixtures hold no server-side or UDP iperf3 output; these documents
// are the real client sample's shape with the server and UDP keys iperf3
// writes instead (start.accepted_connection; end.sum with jitter_ms and
// lost_percent), values made up for the test.
func TestIperf3ServerAndUDP(t *testing.T) {
	server := `{"start":{"version":"iperf 3.16","accepted_connection":{"host":"192.168.100.10","port":40000},
	"test_start":{"protocol":"TCP","num_streams":4,"omit":0,"duration":10,"reverse":0}},
	"intervals":[{"sum":{"bits_per_second":9.0e10,"omitted":false}},{"sum":{"bits_per_second":9.4e10,"omitted":false}}],
	"end":{"streams":[{},{},{},{}],"sum_sent":{"bits_per_second":0,"retransmits":0},"sum_received":{"bits_per_second":9.2e10}}}`
	r, err := ParseIperf3([]byte(server))
	if err != nil || r.Role != "server" || r.Remote != "192.168.100.10" || r.Streams != 4 || r.ReceivedGbps != 92 || r.MinIntervalGbps != 90 || r.MaxIntervalGbps != 94 {
		t.Errorf("server %+v %v", r, err)
	}
	udp := `{"start":{"version":"iperf 3.9","connecting_to":{"host":"10.0.0.2","port":5201},
	"test_start":{"protocol":"UDP","num_streams":1,"omit":0,"duration":5,"reverse":0}},
	"intervals":[{"sum":{"bits_per_second":1e9,"omitted":false}}],
	"end":{"sum":{"bits_per_second":1e9,"jitter_ms":0.012,"lost_percent":2.5}}}`
	r, err = ParseIperf3([]byte(udp))
	if err != nil || r.Protocol != "UDP" || r.SentGbps != 1 || r.ReceivedGbps != 0.975 || *r.LostPercent != 2.5 || *r.JitterMS != 0.012 {
		t.Errorf("udp %+v %v", r, err)
	}
	if r, _ := ParseIperf3([]byte(`{"start":{},"error":"unable to connect to server: Connection refused"}`)); r.Error == "" {
		t.Errorf("error not kept: %+v", r)
	}
}

// Column layouts printed by current nccl-tests (src/util.cu writeResultHeader)
// that no fixture shows: a broadcast with a root, and -I per-iteration
// columns between the placements. Header lines follow the printf formats;
// the numbers are made up.
func TestNCCLTestsOtherLayouts(t *testing.T) {
	in := "# Collective test starting: broadcast_perf\n" +
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n" +
		"     1048576        262144     float    none       0    45.10   23.25   23.25       0    44.90   23.35   23.35       0\n" +
		"# Collective test starting: sendrecv_perf\n" +
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% \n" +
		"     1048576        262144     float     sum      -1    60.00   17.48   17.48       0    59.00    61.00    61.00     1.00    59.50   17.62   17.62     N/A    58.00    60.00    60.00     1.10\n"
	o, err := ParseNCCLTests(strings.NewReader(in))
	if err != nil || len(o.Tables) != 2 {
		t.Fatalf("%d tables, %v", len(o.Tables), err)
	}
	b, s := o.Tables[0], o.Tables[1]
	if b.Collective != "broadcast" || b.Rows[0].Root != 0 || *b.Rows[0].IP.BusBWGBs != 23.35 || b.Ranks != 0 {
		t.Errorf("broadcast %+v", b)
	}
	if s.Collective != "sendrecv" || *s.Rows[0].IP.TimeUS != 59.5 || *s.Rows[0].IP.BusBWGBs != 17.62 || s.Rows[0].IP.WrongErrs != nil || *s.Rows[0].OOP.WrongErrs != 0 {
		t.Errorf("sendrecv %+v %+v", s.Rows[0].OOP, s.Rows[0].IP)
	}
}

// A line of exactly MaxLineBytes with its newline is read; one byte more is
// an error, however the reader splits the input.
func TestLineReaderLimitExact(t *testing.T) {
	fits := append(bytes.Repeat([]byte("y"), MaxLineBytes-1), '\n')
	over := append(bytes.Repeat([]byte("z"), MaxLineBytes), '\n')
	for _, r := range []io.Reader{bytes.NewReader(append(append([]byte{}, fits...), over...)),
		iotest.HalfReader(bytes.NewReader(append(append([]byte{}, fits...), over...)))} {
		lr := NewLineReader(r)
		if l, err := lr.Next(); err != nil || len(l) != MaxLineBytes-1 {
			t.Fatalf("%d bytes, %v", len(l), err)
		}
		if _, err := lr.Next(); !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 2:") {
			t.Errorf("err = %v", err)
		}
	}
}

func TestInferRanksAtTwoRanks(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		coll     string
		alg, bus float64
		want     int
	}{
		{"all_gather", 10.49, 5.24, 2}, // printed ratio 0.4995, a hair under 1/2
		{"all_gather", 10.00, 5.00, 2},
		{"all_reduce", 12.35, 12.34, 2}, // a hair under 1
		{"all_reduce", 10.00, 15.00, 4},
		{"all_gather", 10.00, 4.00, 0}, // no rank count gives 0.4
	} {
		tb := NCCLTable{Collective: tt.coll, Rows: []NCCLRow{{SizeBytes: 1 << 30, OOP: Timing{AlgBWGBs: f(tt.alg), BusBWGBs: f(tt.bus)}}}}
		if got := InferRanks(&tb); got != tt.want {
			t.Errorf("%s algbw %v busbw %v: %d ranks, want %d", tt.coll, tt.alg, tt.bus, got, tt.want)
		}
	}
}

// TestTablesPastTheCap: an input with more tables than are kept keeps the
// first maxTables whole, each with its own devices, and counts the rest; the
// tables past the cap (here on other hosts) leave nothing in the kept ones.
func TestTablesPastTheCap(t *testing.T) {
	unit := verbatim(t, "nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt")
	other := bytes.ReplaceAll(unit, []byte("spark-3995"), []byte("other-0001"))
	var in bytes.Buffer
	for range maxTables {
		in.Write(unit)
	}
	for range 3 {
		in.Write(other)
	}
	o, err := ParseNCCLTests(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Tables) != maxTables || o.DroppedTables != 3 {
		t.Fatalf("%d tables kept, %d dropped; want %d and 3", len(o.Tables), o.DroppedTables, maxTables)
	}
	for i, tb := range o.Tables {
		if len(tb.Devices) != 2 || tb.Devices[1].Host != "spark-3995" || len(tb.Rows) != 1 || tb.Rows[0].SizeBytes != 16<<30 {
			t.Fatalf("table %d: devices %+v, %d rows", i, tb.Devices, len(tb.Rows))
		}
	}
}

// TestLineReaderSkipsLongLines: in skipping mode a line over the bound is
// dropped and counted, the lines around it read whole.
func TestLineReaderSkipsLongLines(t *testing.T) {
	long := strings.Repeat("=", MaxLineBytes+10)
	for _, in := range []string{"a\n" + long + "\nb\n", "a\n" + long + "\r\nb", long + "\nb\n"} {
		lr := NewLineReader(strings.NewReader(in))
		lr.SkipLongLines()
		var got []string
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			got = append(got, string(l))
		}
		want := "a,b"
		if strings.HasPrefix(in, "=") {
			want = "b"
		}
		if strings.Join(got, ",") != want || lr.Skipped() != 1 || lr.Bytes() != int64(len(in)) {
			t.Errorf("got %q skipped %d bytes %d of %d", got, lr.Skipped(), lr.Bytes(), len(in))
		}
	}
}

// nccl-tests' footer with NCCL_TESTS_MIN_BW set ends the average's line in
// FAILED or OK (src/util.cu writeResultFooter, v2.19.6: "# %-20s : %g %s"
// with "Avg bus bandwidth"); without it the line ends at the number.
func TestNCCLTestsMinBWFooter(t *testing.T) {
	text := string(verbatim(t, "nccl-tests/01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt"))
	const footer = "[1,0]<stdout>:# Avg bus bandwidth    : 1.15327"
	if !strings.Contains(text, footer+"\n") {
		t.Fatal("the fixture's footer moved")
	}
	for tail, want := range map[string]bool{"": false, " OK": false, " FAILED": true} {
		o, err := ParseNCCLTests(strings.NewReader(strings.Replace(text, footer, footer+tail, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Tables) != 1 || o.Tables[0].MinBWFailed != want || o.Tables[0].AvgBusBWGBs == nil || *o.Tables[0].AvgBusBWGBs != 1.15327 {
			t.Errorf("%q: %+v", tail, o.Tables)
		}
	}
}

// A table pasted without its run's banner is still a run: its rows as
// printed, its kind from the header, no verb, title or header values.
func TestPerftestTableWithoutBanner(t *testing.T) {
	runs, err := ParsePerftest(bytes.NewReader(verbatim(t, "perftest/07_table_only_no_banner_dgx-spark_hotplug.txt")))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %d err %v", len(runs), err)
	}
	r := runs[0]
	want := []PerftestBWRow{{Bytes: 1048576, Iterations: 9534, AvgGbps: 13.33, MsgRateMpps: f64(0.001589)},
		{Bytes: 1048576, Iterations: 9465, AvgGbps: 13.23, MsgRateMpps: f64(0.001578)}}
	if d := cmp.Diff(want, r.BW); d != "" || r.Kind != "bw" || r.Verb != "" || r.Test != "" || r.MTU != 0 || r.Tool() != "perftest bw" {
		t.Errorf("%+v (-want +got)\n%s", r, d)
	}
}

// Two tables pasted one under the other without their banners are two
// runs, each with its own rows: the slower one is not hidden by the other.
func TestPerftestTwoTablesWithoutBanners(t *testing.T) {
	b := verbatim(t, "perftest/07_table_only_no_banner_dgx-spark_hotplug.txt")
	two := append(append([]byte(nil), b...), bytes.ReplaceAll(b, []byte("13.33"), []byte("93.33"))...)
	runs, err := ParsePerftest(bytes.NewReader(two))
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %d err %v", len(runs), err)
	}
	if len(runs[0].BW) != 2 || runs[0].BW[0].AvgGbps != 13.33 || len(runs[1].BW) != 2 || runs[1].BW[0].AvgGbps != 93.33 {
		t.Errorf("%+v", runs)
	}
}

// Every perftest fixture cut just above its first table (banner and header
// gone) reads the same rows and kind; with its command line kept, the same
// verb too.
func TestPerftestCutAboveTable(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "perftest", "*.txt"))
	for _, n := range names {
		b := verbatim(t, filepath.Join("perftest", filepath.Base(n)))
		full, _ := ParsePerftest(bytes.NewReader(b))
		i := bytes.Index(b, []byte("#bytes"))
		if len(full) == 0 || i < 0 {
			t.Fatalf("%s: %d runs", n, len(full))
		}
		start := bytes.LastIndexByte(b[:i], '\n') + 1
		cut, _ := ParsePerftest(bytes.NewReader(b[start:]))
		if len(cut) == 0 {
			t.Fatalf("%s: cut above the table: no run", n)
		}
		if cut[0].Kind != full[0].Kind || !cmp.Equal(cut[0].BW, full[0].BW) || !cmp.Equal(cut[0].Lat, full[0].Lat) || cut[0].Unit != full[0].Unit {
			t.Errorf("%s: cut %+v\nfull %+v", n, cut[0], full[0])
		}
		withCmd, _ := ParsePerftest(bytes.NewReader(append([]byte("ib_"+full[0].Verb+"_"+full[0].Kind+" 10.0.0.2\n"), b[start:]...)))
		if full[0].Verb != "" && withCmd[0].Verb != full[0].Verb {
			t.Errorf("%s: verb %q, want %q", n, withCmd[0].Verb, full[0].Verb)
		}
	}
}
