package analyze

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// pasted is the corpus of outputs as people pasted them in public threads
// (testdata/pasted, each with its SOURCE and the cause its thread
// established): the format told, what was measured, the verdict, and the
// error signature ranked first ("" where the text holds no error line).
var pasted = []struct {
	file, format  string
	status        report.Verdict
	top, measured string
}{
	{"01_qp110_timestamped_fenced.txt", FormatNCCLLog, report.VerdictCritical, "ib-qp-timeout", "NCCL_DEBUG=INFO log"},
	{"02_qp_timeout_gid_index_markdown.txt", FormatNCCLLog, report.VerdictCritical, "ib-qp-timeout", "NCCL_DEBUG=INFO log"},
	{"03_qp_rtr_timeout_errno_lines.txt", FormatErrors, report.VerdictCritical, "ib-qp-timeout", "error lines"},
	{"04_wc_status12_retry_exceeded.txt", FormatNCCLLog, report.VerdictCritical, "ib-wc-retry-exceeded", "NCCL_DEBUG=INFO log"},
	{"05_torch_remote_error_wc12.txt", FormatErrors, report.VerdictCritical, "ib-wc-retry-exceeded", "error lines"},
	{"06_quoted_async_event_markdown_links.txt", FormatNCCLLog, report.VerdictCritical, "ib-async-access-violation", "NCCL_DEBUG=INFO log"},
	{"07_socket_connect_abort_proxy.txt", FormatNCCLLog, report.VerdictCritical, "socket-connect-abort", "NCCL_DEBUG=INFO log"},
	{"08_shm_segment_failed.txt", FormatNCCLLog, report.VerdictCritical, "shm-create-failed", "NCCL_DEBUG=INFO log"},
	{"09_sglang_socket_abort_traceback.txt", FormatNCCLLog, report.VerdictCritical, "socket-connect-abort", "NCCL_DEBUG=INFO log"},
	{"10_system_error_ipv6_link_local.txt", FormatNCCLLog, report.VerdictCritical, "socket-connect-abort", "NCCL_DEBUG=INFO log"},
	{"11_peer_closed_no_host_prefix.txt", FormatNCCLLog, report.VerdictCritical, "socket-peer-closed", "NCCL_DEBUG=INFO log"},
	{"12_cuda_oom_after_shm_channels.txt", FormatNCCLLog, report.VerdictCritical, "cuda-oom", "NCCL_DEBUG=INFO log"},
	{"13_oom_then_peer_closed.txt", FormatNCCLLog, report.VerdictCritical, "cuda-oom", "NCCL_DEBUG=INFO log"},
	{"14_oom_invalid_handle_repeated.txt", FormatNCCLLog, report.VerdictCritical, "cuda-oom", "NCCL_DEBUG=INFO log"},
	{"15_ray_timestamp_cuda_invalid_argument.txt", FormatNCCLLog, report.VerdictCritical, "cuda-failure", "NCCL_DEBUG=INFO log"},
	{"16_torch_unhandled_cuda_frames.txt", FormatErrors, report.VerdictCritical, "cuda-failure", "error lines"},
	{"17_glog_gid_query_enodata.txt", FormatErrors, report.VerdictCritical, "ib-gid-missing", "error lines"},
	{"18_broken_pipe_remote_crashed.txt", FormatNCCLLog, report.VerdictCritical, "socket-peer-closed", "NCCL_DEBUG=INFO log"},
	{"19_torch_remote_error_reset.txt", FormatErrors, report.VerdictCritical, "nccl-remote-error", "error lines"},
	{"20_wc_error4_local_protection.txt", FormatNCCLLog, report.VerdictCritical, "ib-wc-local-protection", "NCCL_DEBUG=INFO log"},
	{"21_rows_header_no_title_ring.txt", FormatNCCLTests, report.VerdictNone, "", "nccl-tests all_reduce, 8 ranks, 512M–8G"},
	// -np 40 in the pasted command; busbw/algbw at two decimals cannot tell 40 from 41-45: unknown, not a guess
	{"22_timestamp_output_launcher_rows.txt", FormatNCCLTests, report.VerdictNone, "", "nccl-tests all_reduce, unknown ranks, 1M"},
	{"23_spark_all_gather_no_footer.txt", FormatNCCLTests, report.VerdictWarning, "", "nccl-tests all_gather, 2 ranks on 2 nodes, 16G"},
	{"24_spark_all_reduce_small_sizes.txt", FormatNCCLTests, report.VerdictNone, "", "nccl-tests all_reduce, 2 ranks on 2 nodes, 8K–64K"},
	{"25_ras_status_mismatch.txt", FormatNCCLRAS, report.VerdictWarning, "ras-mismatch", "NCCL RAS status, NCCL 2.26.2, 4 nodes, 32 GPUs"},
	{"26_ras_status_incomplete_outlier.txt", FormatNCCLRAS, report.VerdictCritical, "ras-missing-rank", "NCCL RAS status, NCCL 2.27.3, 2 nodes, 10 GPUs"},
	{"27_ras_ok_then_watchdog_timeout.txt", FormatNCCLRAS, report.VerdictCritical, "torch-watchdog-timeout", "NCCL RAS status, NCCL 2.26.2, 32 nodes, 256 GPUs"},
	{"28_ras_doc_incomplete_timeout.txt", FormatNCCLRAS, report.VerdictCritical, "ras-missing-rank", "NCCL RAS status"},
	{"29_ras_doc_dead_process.txt", FormatNCCLRAS, report.VerdictCritical, "ras-dead", "NCCL RAS status"},
	{"30_ras_doc_json_missing_rank.txt", FormatNCCLRAS, report.VerdictCritical, "", "NCCL RAS status, NCCL 2.29.1, 1 node"},
	{"31_ray_vllm_spark_gdr_lines.txt", FormatNCCLLog, report.VerdictNone, "", "NCCL_DEBUG=INFO log"},
	{"32_k8s_pod_socket_no_ibverbs.txt", FormatNCCLLog, report.VerdictCritical, "ibverbs-missing", "NCCL_DEBUG=INFO log, NCCL 2.21.5+cuda12.4, network Socket"},
	{"33_two_hosts_irdma_device_line.txt", FormatNCCLLog, report.VerdictNone, "", "NCCL_DEBUG=INFO log, NCCL 2.21.5+cuda12.4, network IBext_v8, 2 ranks"},
	{"34_create_cq_enomem.txt", FormatNCCLLog, report.VerdictCritical, "ib-resource-enomem", "NCCL_DEBUG=INFO log"},
	{"35_perftest_completion_status4.txt", FormatErrors, report.VerdictCritical, "ib-wc-local-protection", "error lines"},
	{"36_perftest_completion_status12.txt", FormatErrors, report.VerdictCritical, "ib-wc-retry-exceeded", "error lines"},
	{"37_perftest_rdma_cm_rows.txt", FormatPerftest, report.VerdictNone, "", "perftest ib_write_bw on mlx5_0"},
	{"38_quoted_perftest_sweep.txt", FormatPerftest, report.VerdictNone, "", "perftest ib_write_bw on mlx5_0"},
	{"39_nvbandwidth_preamble_elided.txt", FormatNVBandwidth, report.VerdictNone, "", "nvbandwidth device_to_device_memcpy_read_ce"},
	{"40_nvbandwidth_quoted_running_lines.txt", FormatNVBandwidth, report.VerdictNone, "", "nvbandwidth host_to_device_memcpy_sm, device_to_host_memcpy_sm"},
	{"41_async_port_error_flapping.txt", FormatNCCLLog, report.VerdictCritical, "ib-port-error", "NCCL_DEBUG=INFO log"},
	{"42_torch_rank_prefix_ofi_undeliverable.txt", FormatNCCLLog, report.VerdictCritical, "ofi-undeliverable", "NCCL_DEBUG=INFO log"}, // the plugin's NET/OFI lines are NCCL log lines
	{"43_no_host_channels_net_ib.txt", FormatNCCLLog, report.VerdictNone, "", "NCCL_DEBUG=INFO log"},
	{"44_mpirun_tag_libibverbs_warnings.txt", FormatNCCLLog, report.VerdictCritical, "ibverbs-missing", "NCCL_DEBUG=INFO log"},
	{"45_k8s_worker_segfault_proxy.txt", FormatNCCLLog, report.VerdictCritical, "process-segfault", "NCCL_DEBUG=INFO log"},
	{"46_wrapped_terminal_wc_error5.txt", FormatErrors, report.VerdictCritical, "nccl-remote-error", "error lines"},
	{"47_iperf3_text_parallel_sum.txt", FormatIperf3Text, report.VerdictNone, "", "iperf3 TCP client, 2 streams"},
	{"48_iperf3_text_server_side.txt", FormatIperf3Text, report.VerdictNone, "", "iperf3 TCP server, 1 stream"},
	{"49_iperf3_text_client_sender.txt", FormatIperf3Text, report.VerdictNone, "", "iperf3 TCP client, 1 stream"},
	{"50_kubectl_timestamps_socket.txt", FormatNCCLLog, report.VerdictNone, "", "NCCL_DEBUG=INFO log, network Socket, 4 ranks"},
	{"51_indented_launcher_tags_socket_2nodes.txt", FormatNCCLLog, report.VerdictCritical, "", "NCCL_DEBUG=INFO log, network Socket, 2 ranks"},
	// no line names the collective and busbw/algbw at these sizes cannot tell it: unknown, not guessed
	{"52_indented_tagged_rows_no_header.txt", FormatNCCLTests, report.VerdictNone, "", "nccl-tests unknown collective, unknown ranks, 2K–512K"},
	{"53_info_lines_then_rows_na.txt", FormatNCCLTests, report.VerdictNone, "", "nccl-tests unknown collective, unknown ranks, 8 B–2K"},
	{"54_xla_comm_init_last_warning.txt", FormatNCCLLog, report.VerdictCritical, "nccl-system-error", "NCCL_DEBUG=INFO log"},
}

func topError(a report.AnalysisResult) string {
	for _, f := range a.Flags {
		if id, ok := strings.CutPrefix(f.ID, "error."); ok {
			return id
		}
	}
	return ""
}

func TestPastedCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/pasted/*.txt")
	if err != nil || len(files) != len(pasted) {
		t.Fatalf("%d corpus files, %d expectations (%v)", len(files), len(pasted), err)
	}
	signatures := map[string]bool{}
	for _, c := range pasted {
		t.Run(c.file, func(t *testing.T) {
			a := analyseFixture(t, filepath.Join("pasted", c.file), Options{})
			if a.Error != "" || a.Format != c.format || a.Status != c.status || topError(a) != c.top || a.Measured != c.measured {
				t.Errorf("got format %s status %s top %q measured %q error %q\nwant format %s status %s top %q measured %q",
					a.Format, a.Status, topError(a), a.Measured, a.Error, c.format, c.status, c.top, c.measured)
			}
		})
		if c.top != "" {
			signatures[c.top] = true
		}
	}
	if len(signatures) < 15 {
		t.Errorf("the corpus ranks %d distinct signatures first, want at least 15", len(signatures))
	}
}

// TestPastedFacts checks facts read from pasted fragments: hosts from the
// prefixes, platform from device names, the inferred collective.
func TestPastedFacts(t *testing.T) {
	a := analyseFixture(t, "pasted/33_two_hosts_irdma_device_line.txt", Options{})
	l := a.Data.NCCLLog
	if l == nil || strings.Join(l.Hosts, ",") != "ai-worker01,ai-worker03" || l.NRanks != 2 || len(l.IBDevices) != 2 || l.IBDevices[0].Name != "irdma0" {
		t.Errorf("log %+v", l)
	}
	a = analyseFixture(t, "pasted/31_ray_vllm_spark_gdr_lines.txt", Options{})
	if a.Platform != "dgx-spark" || !a.PlatformInferred || !strings.Contains(a.PlatformEvidence, "rocep1s0f1") {
		t.Errorf("platform %q inferred %v from %q", a.Platform, a.PlatformInferred, a.PlatformEvidence)
	}
	if l := a.Data.NCCLLog; l == nil || strings.Join(l.Hosts, ",") != "spark-3995" || l.Transports["NET/IBext_v10/0"] != 1 {
		t.Errorf("log %+v", l)
	}
	a = analyseFixture(t, "pasted/51_indented_launcher_tags_socket_2nodes.txt", Options{})
	if l := a.Data.NCCLLog; l == nil || strings.Join(l.Hosts, ",") != "multi-node-nccl-test-worker-0,multi-node-nccl-test-worker-1" || flagIDs(a) != "fail:nccl.net-socket" {
		t.Errorf("hosts %v flags %s", l.Hosts, flagIDs(a))
	}
	a = analyseFixture(t, "pasted/52_indented_tagged_rows_no_header.txt", Options{})
	if tb := a.Data.NCCLTables[0]; len(tb.Rows) != 9 || tb.Rows[8].SizeBytes != 524288 || *tb.Rows[8].OOP.BusBWGBs != 2.31 || tb.Rows[8].IP.WrongErrs != nil || tb.Rows[8].RedOp != "none" {
		t.Errorf("table %+v", tb)
	}
	a = analyseFixture(t, "pasted/22_timestamp_output_launcher_rows.txt", Options{})
	tb := a.Data.NCCLTables[0]
	if len(tb.Rows) != 1 || tb.Rows[0].SizeBytes != 1048576 || *tb.Rows[0].IP.BusBWGBs != 5.92 || tb.Ranks != 0 || tb.RanksInferred {
		t.Errorf("table %+v", tb)
	}
	a = analyseFixture(t, "pasted/23_spark_all_gather_no_footer.txt", Options{})
	if a.Platform != "dgx-spark" || a.Topology != "two-nodes-one-cable" || a.Items[0].Value != 20.95 {
		t.Errorf("%s %s %+v", a.Platform, a.Topology, a.Items)
	}
	// the thread's cause, MTU 1500 on the CX-7 interfaces, ranked first
	if got := causeIDs(a.Items[0].Causes); len(got) == 0 || got[0] != "mtu-1500:possible" {
		t.Errorf("causes %v", got)
	}
	a = analyseFixture(t, "pasted/26_ras_status_incomplete_outlier.txt", Options{})
	r := a.Data.RAS
	if r == nil || len(r.Groups) != 3 || r.Groups[2].Errors != "INCOMPLETE,MISMATCH" || len(r.Findings) != 2 || r.Findings[0].Kind != "INCOMPLETE" ||
		r.Findings[1].Comm != "#0-0 (b3398875b8b2a063)" || r.Findings[1].Details[1] != "Rank 1 -- GPU 0 managed by process 60004 on node 10.4.109.13" {
		t.Errorf("ras %+v", r)
	}
	a = analyseFixture(t, "pasted/30_ras_doc_json_missing_rank.txt", Options{})
	if r := a.Data.RAS; r == nil || r.Version != "2.29.1" || len(r.Findings) != 1 || r.Findings[0].Details[0] != "Rank 1 (missing, unresponsive) -- GPU 1 managed by process 1524345 on node 172.16.64.245" {
		t.Errorf("ras %+v", a.Data.RAS)
	}
}

// TestIperf3Text: the rate judged is the receiver's where the text has
// it, else the sender's, else the mean of the intervals, and says which.
func TestIperf3Text(t *testing.T) {
	for _, c := range []struct {
		file  string
		value float64
		from  string
		ivals int
	}{
		{"47_iperf3_text_parallel_sum.txt", 3.673, "intervals", 4}, // the [SUM] lines: (3.69+3.71+3.67+3.62)/4
		{"48_iperf3_text_server_side.txt", 3.307, "intervals", 11},
		{"49_iperf3_text_client_sender.txt", 7.86, "sender", 10},
	} {
		a := analyseFixture(t, filepath.Join("pasted", c.file), Options{})
		it := a.Items[0]
		if it.Value != c.value || a.Data.Iperf3.Intervals != c.ivals || !strings.Contains(strings.Join(it.Notes, "\n"), map[string]string{"intervals": "the mean of the interval rates", "sender": "the sender's rate is judged"}[c.from]) {
			t.Errorf("%s: value %v intervals %d notes %q", c.file, it.Value, a.Data.Iperf3.Intervals, it.Notes)
		}
	}
	a := analyseFixture(t, "pasted/48_iperf3_text_server_side.txt", Options{})
	if r := a.Data.Iperf3; r.Role != "server" || r.Remote != "192.168.110.95" || r.MinIntervalGbps != 3.14 || r.MaxIntervalGbps != 3.35 {
		t.Errorf("%+v", r)
	}
}

// TestRefused: text without any line of a known shape is refused, the
// project's own documents and sources included.
func TestRefused(t *testing.T) {
	for _, name := range []string{"../../README.md", "../../DEVELOPERS.md", "analyze.go", "detect.go", "../results/nccllog.go", "../expect/signatures.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		a := Reader(name, strings.NewReader(string(b)), Options{})
		if a.Status != report.VerdictUnknown || a.Error == "" {
			t.Errorf("%s: format %s status %s accepted", name, a.Format, a.Status)
		}
	}
}
