package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// iperf3ErrorCases are iperf3's own errors (esnet/iperf 3.21,
// src/iperf_error.c): iperf_strerror's text, with ": " and strerror(errno)
// where the error adds it (perr), as the -J document's "error" holds them.
var iperf3ErrorCases = []struct {
	id   string
	msgs []string
}{
	{"error.iperf3-listen-port-in-use", []string{"unable to start listener for connections: Address already in use"}},
	// 3.14 and later, and 3.13 and before
	{"error.iperf3-unknown-control-message", []string{"received an unknown control message (ensure other side is iperf3 and not iperf)", "received an unknown control message"}},
	{"error.iperf3-udp-stream-no-reply", []string{"unable to read from stream socket: Resource temporarily unavailable"}},
	{"error.iperf3-peer-terminated", []string{"the server has terminated", "the client has terminated"}},
	{"error.iperf3-socket-buffer-capped", []string{"socket buffer size not set correctly"}},
	{"error.iperf3-congestion-unsupported", []string{"unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host"}},
	{"error.iperf3-idle-timeout", []string{"idle timeout for receiving data"}},
	{"error.iperf3-server-limit-refused", []string{"total required bandwidth is larger than server limit", "client's requested duration exceeds the server's maximum permitted limit"}},
	{"error.iperf3-no-cookie", []string{"unable to receive cookie at server: Connection reset by peer", "unable to receive cookie at server: Resource temporarily unavailable"}},
}

// toolCases are the tools' failure lines, each built from the tool's
// format string, with the lines that follow it in the same output.
// toolCase is a tool's failure as it prints it and the cause it names.
type toolCase struct {
	id    string
	lines func(r *rand.Rand) []string
}

var toolCases = []toolCase{
	// iperf3 src/main.c: iperf_errexit(test, "error - %s", ...), printed
	// by iperf_err as "iperf3: %s"; a signal: "interrupt - %s by signal
	// %s(%d)" (src/iperf_api.c iperf_got_sigend)
	{"error.iperf3-peer-terminated", func(r *rand.Rand) []string {
		if r.Intn(2) == 0 {
			return []string{"iperf3: interrupt - the client has terminated by signal Interrupt(2)"}
		}
		return []string{fmt.Sprintf("[  5]   %d.00-%d.00   sec  1.09 GBytes  9.37 Gbits/sec    0   3.04 MBytes", 3, 4), "iperf3: error - the server has terminated"}
	}},
	// iperf3 src/iperf_server_api.c: the server's warning, then the error
	{"error.iperf3-congestion-unsupported", func(r *rand.Rand) []string {
		return []string{"warning: TCP congestion control algorithm not supported", "iperf3: error - unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host"}
	}},
	// nccl-tests v2.19.6 src/util.cu writeDeviceReport, then the
	// TESTCHECK trail (src/common.h " .. %s pid %d: Test failure %s:%d")
	{"error.nccl-tests-too-few-gpus", func(r *rand.Rand) []string {
		g := 2 << r.Intn(3)
		host := fmt.Sprintf("node%02d", r.Intn(64))
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("Invalid number of GPUs: %d requested but only %d were found.", 2*g, g), "Please check the number of processes and GPUs per process.",
				fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 1000+r.Intn(60000), 1000+r.Intn(400))}
		}
		// before v2.17.2: CUDACHECK(cudaGetDeviceProperties) fails
		return []string{fmt.Sprintf("%s: Test CUDA failure common.cu:%d 'invalid device ordinal'", host, 800+r.Intn(400)),
			fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 1000+r.Intn(60000), 800+r.Intn(400))}
	}},
	// nccl-tests v2.19.6 src/common.h NCCLCHECK (NCCL 2.13 and later:
	// "'%s / %s'" with ncclGetLastError), NCCL's ncclGetErrorString
	// (src/init.cc v2.30.7-1)
	{"error.nccl-tests-nccl-call-failed", func(r *rand.Rand) []string {
		res := []string{"invalid argument (run with NCCL_DEBUG=WARN for details)", "invalid usage (run with NCCL_DEBUG=WARN for details)",
			"internal error - please report this issue to the NCCL developers", "timeout"}[r.Intn(4)]
		host := fmt.Sprintf("gpu-%d", r.Intn(100))
		line := fmt.Sprintf("%s: Test NCCL failure common.cu:%d '%s / '", host, 900+r.Intn(400), res)
		if r.Intn(3) == 0 { // before NCCL 2.13
			line = fmt.Sprintf("%s: Test NCCL failure common.cu:%d '%s'", host, 900+r.Intn(400), res)
		}
		return []string{line, fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 1000+r.Intn(60000), 1000+r.Intn(400))}
	}},
	// rdma-core v64.0 providers/mlx5/cq.c: PFX "%s: got completion with
	// error:", and a paste cut inside dump_cqe's four lines
	{"error.mlx5-error-cqe", func(r *rand.Rand) []string {
		return mlx5DumpLines(r, 0x13)[:1+r.Intn(4)]
	}},
	// nvbandwidth v0.8 nvbandwidth.cpp runTestcase and output.cpp
	// (Output::addTestcase: status ": " msg; a waived test's message is
	// empty), after the version and device lines it prints first
	{"error.nvbandwidth-waived-status", func(r *rand.Rand) []string {
		out := []string{"nvbandwidth Version: v0.8", "Built from Git version: v0.8", "", "CUDA Runtime Version: 13000", "CUDA Driver Version: 13000",
			"Driver Version: 580.95.05", "", "Device 0: NVIDIA GB10 (0000000f:01:00)", ""}
		for range 1 + r.Intn(6) {
			out = append(out, "Waived: ")
		}
		return append(out, "", "NOTE: The reported results may not reflect the full capabilities of the platform.")
	}},
	{"error.nvbandwidth-testcase-not-found", func(r *rand.Rand) []string {
		if r.Intn(2) == 0 {
			return []string{"nvbandwidth Version: v0.8", "ERROR: Testcase " + []string{"device_to_device_memcpy_ce", "h2d_ce", "host_to_device_memcpy"}[r.Intn(3)] + " not found!"}
		}
		return []string{"nvbandwidth Version: v0.8", fmt.Sprintf("ERROR: Testcase index %d out of bound!", 44+r.Intn(100))}
	}},
	// nvbandwidth v0.8 error_handling.h: CUDA_ASSERT and CU_ASSERT ("[" name
	// "] " string " in expression " call HOST_INFO " in " function "() : "
	// file ":" line; HOST_INFO " on host, rank = N" in the multinode
	// build), NVML_ASSERT ("NVML_ERROR: [" string "] in expression ...")
	{"error.nvbandwidth-call-failed", func(r *rand.Rand) []string {
		on := ""
		if r.Intn(2) == 0 {
			on = fmt.Sprintf(" on node%02d, rank = %d", r.Intn(32), r.Intn(64))
		}
		switch r.Intn(3) {
		case 0:
			return []string{"nvbandwidth Version: v0.8", fmt.Sprintf("[CUDA_ERROR_NOT_SUPPORTED] operation not supported in expression cuMulticastCreate(&handle, &prop)%s in void MultinodeMemoryAllocationMulticast::allocate() : /build/nvbandwidth/multinode_memcpy.cpp:%d", on, 100+r.Intn(200))}
		case 1:
			return []string{fmt.Sprintf("[cudaErrorPeerAccessUnsupported] peer access is not supported between these two devices in expression cudaDeviceEnablePeerAccess(peer, 0)%s in void enablePeerAccess(int, int) : /build/nvbandwidth/memcpy.cpp:%d", on, 200+r.Intn(200))}
		default:
			return []string{fmt.Sprintf("NVML_ERROR: [Not Supported] in expression nvmlDeviceGetFieldValues(device, 1, &value)%s in void getNvlinkState() : /build/nvbandwidth/common.cpp:%d", on, 50+r.Intn(200))}
		}
	}},
	// rdma-core v64.0 libibverbs/init.c check_memlock_limit (PFX
	// "libibverbs: "), then a registration failing (perftest's line)
	{"error.ibverbs-memlock-tiny", func(r *rand.Rand) []string {
		return []string{fmt.Sprintf("libibverbs: Warning: RLIMIT_MEMLOCK is %d bytes.", []int{0, 8192, 16384, 32768}[r.Intn(4)]),
			"    This will severely limit memory registrations.", "Couldn't allocate MR", "Failed to create MR"}
	}},
	// libibverbs/dynamic_driver.c load_driver, VERBS_PROVIDER_SUFFIX
	// "-rdmav<PABI>.so", dlerror's text
	{"error.ibverbs-provider-load-failed", func(r *rand.Rand) []string {
		so := fmt.Sprintf("libmlx5-rdmav%d.so", []int{25, 34, 50, 64}[r.Intn(4)])
		return []string{fmt.Sprintf("libibverbs: Warning: couldn't load driver '%s': %s: cannot open shared object file: No such file or directory", so, so)}
	}},
	// libibverbs/init.c check_abi_version and match_device
	{"error.ibverbs-kernel-abi-mismatch", func(r *rand.Rand) []string {
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("libibverbs: Fatal: kernel ABI version %d doesn't match library version %d.", 7+r.Intn(2), 6)}
		}
		return []string{fmt.Sprintf("libibverbs: Warning: Driver mlx5 does not support the kernel ABI of %d (supports 1 to 1) for device /sys/class/infiniband/mlx5_%d", 2+r.Intn(3), r.Intn(8))}
	}},
	// the loader's message for a program linked with NCCL (the DGX Spark
	// playbooks' troubleshooting table), then mpirun's
	{"error.libnccl-not-found-on-node", func(r *rand.Rand) []string {
		prog := []string{"all_reduce_perf", "all_gather_perf", "sendrecv_perf", "./build/all_reduce_perf"}[r.Intn(4)]
		lib := []string{"libnccl.so.2", "libnccl.so"}[r.Intn(2)]
		return []string{prog + ": error while loading shared libraries: " + lib + ": cannot open shared object file: No such file or directory",
			"Primary job  terminated normally, but 1 process returned", "a non-zero exit code. Per user-direction, the job has been aborted."}
	}},
	// NCCL src/include/checks.h SYSCHECK's WARN, and PyTorch's "Last
	// error:" line that repeats it
	{"error.nccl-socket-not-a-socket", func(r *rand.Rand) []string {
		call := []string{"shutdown", "getsockname", "setsockopt", "bind"}[r.Intn(4)]
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("spark-%d:%d:%d [0] misc/socket.cc:%d NCCL WARN Call to %s failed: Socket operation on non-socket", r.Intn(9), 1000+r.Intn(9000), 1000+r.Intn(9000), 80+r.Intn(100), call)}
		}
		return []string{"Last error:", fmt.Sprintf("Call to %s failed: Socket operation on non-socket", call)}
	}},
	// NCCL's completion warnings: v2.30.7-1 src/transport/net_ib/p2p.cc
	// ("status=%s(%d)", ibvWcStatusStr's name) and v2.18.3-1
	// src/transport/net_ib.cc ("with error %d, opcode %d, ..."); rdma-core's
	// ibv_wc_status_str (libibverbs/enum_strs.c) as other tools print it
	{"error.ib-wc-remote-access", func(r *rand.Rand) []string {
		return wcLine(r, 10, "IBV_WC_REM_ACCESS_ERR", "remote access error")
	}},
	{"error.ib-wc-remote-op", func(r *rand.Rand) []string {
		return wcLine(r, 11, "IBV_WC_REM_OP_ERR", "remote operation error")
	}},
	{"error.ib-wc-rnr-retry", func(r *rand.Rand) []string {
		return wcLine(r, 13, "IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded")
	}},
}

// wcLine is a completion error of status n as NCCL (two releases) or a
// program printing ibv_wc_status_str reports it.
func wcLine(r *rand.Rand, n int, name, str string) []string {
	peer := fmt.Sprintf("10.%d.%d.%d<%d>", r.Intn(256), r.Intn(256), 1+r.Intn(254), 1024+r.Intn(60000))
	switch r.Intn(3) {
	case 0:
		return []string{fmt.Sprintf("node1:%d:%d [0] NCCL WARN NET/IB: Got completion from peer %s with status=%s(%d) opcode=IBV_WC_RDMA_WRITE(1) vendor_err=%d  localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca rocep1s0f1", 4000+r.Intn(1000), 4100+r.Intn(1000), peer, name, n, 128+r.Intn(32))}
	case 1:
		return []string{fmt.Sprintf("node1:%d:%d [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d (Recv)", 4000+r.Intn(1000), 4100+r.Intn(1000), peer, n, r.Intn(4), r.Intn(1<<20), 128+r.Intn(32))}
	default:
		return []string{fmt.Sprintf("work completion failed: %s (status %d)", str, n)}
	}
}

// iperf3's errors, as the line iperf3 prints ("iperf3: error - %s"), name
// their cause first behind any prefix.
func TestIperf3ErrorsAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(321))
	for _, c := range iperf3ErrorCases {
		for _, msg := range c.msgs {
			for _, pre := range causePrefixes(r) {
				lines := []string{"iperf3: error - " + msg}
				if a := analyseText(prefixed(pre, lines)); topCause(a) != c.id {
					t.Errorf("%s behind %q: first %q (%s)", c.id, pre, topCause(a), flagIDs(a))
				}
			}
		}
	}
}

// Each tool line names its cause first behind any prefix, with the lines
// that follow it.
func TestToolMessagesAnyPrefix(t *testing.T) {
	toolLinesFirstAnyPrefix(t, rand.New(rand.NewSource(64)), toolCases)
}

// toolLinesFirstAnyPrefix checks that each case's lines, read alone behind
// any prefix, name its cause first.
func toolLinesFirstAnyPrefix(t *testing.T, r *rand.Rand, cases []toolCase) {
	t.Helper()
	for _, c := range cases {
		for _, pre := range causePrefixes(r) {
			for range 3 {
				lines := c.lines(r)
				if a := analyseText(prefixed(pre, lines)); topCause(a) != c.id {
					t.Errorf("%s behind %q: first %q (%s)\n%s", c.id, pre, topCause(a), flagIDs(a), prefixed(pre, lines))
				}
			}
		}
	}
}

// Lines that share words with the new signatures but say something else
// raise none of them.
func TestToolSignaturesDoNotFire(t *testing.T) {
	for _, line := range []string{
		// iperf3's own healthy lines
		"Server listening on 5201 (test #1)",
		"Accepted connection from 10.0.0.1, port 50000",
		// perftest's flushed completions and NCCL's retry-exceeded line keep their own signatures
		" Failed status 5: wr_id 0 syndrom 0xf9",
		"NET/IB: Got completion from peer 10.0.0.2<1234> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca rocep1s0f1",
		// a status of two digits is not one of one digit, nor the reverse
		"NET/IB : Got completion from peer 10.0.0.2<1234> with error 1, opcode 0, len 0, vendor err 0 (Recv)",
		"NET/IB : Got completion from peer 10.0.0.2<1234> with error 110, opcode 0, len 0, vendor err 0 (Recv)",
		// prose about a server, not iperf3's message
		"the server has terminated the session after 300 s of inactivity",
		// nvbandwidth's own healthy lines, and a "Waived" that is not its status line
		"Running device_to_device_memcpy_read_ce.",
		"Waived: 2 of 20 tests",
		"CUDA Runtime Version: 13000",
		"NOTE: The reported results may not reflect the full capabilities of the platform.",
		"an error in expression parsing: see [cudaErrorInvalidValue]",
		// nccl-tests healthy header
		"#  Rank  0 Group  0 Pid  12345 on   spark-1 device  0 [000f:01:00] NVIDIA GB10",
	} {
		a := analyseText(line + "\n")
		for _, c := range toolCases {
			if hasFlag(a, c.id) {
				t.Errorf("%q raised %s", line, c.id)
			}
		}
		for _, c := range iperf3ErrorCases {
			if hasFlag(a, c.id) {
				t.Errorf("%q raised %s", line, c.id)
			}
		}
	}
}

// No fixture raises the new signatures but those that print the messages.
func TestToolSignaturesNothingNewOnFixtures(t *testing.T) {
	ids := map[string]bool{"mlx5.cqe-syndrome": true}
	for _, c := range iperf3ErrorCases {
		ids[c.id] = true
	}
	for _, c := range toolCases {
		ids[c.id] = true
	}
	var list []string
	for id := range ids {
		list = append(list, id)
	}
	noneRaisedOnFixtures(t, list, toolCarriers)
}

// toolCarriers are the fixtures that print one of the messages.
var toolCarriers = map[string]bool{
	// an iperf3 3.0 server behind Azure's TCP probes: "unable to receive cookie at server"
	"field/train/176_iperf3_server_exits_stray_tcp_probes_azure.txt": true,
	"field-cases/176_iperf3_server_exits_stray_tcp_probes_azure.txt": true,
	// mpirun slots times -g above the GPUs: "Test CUDA failure common.cu:1030 invalid device ordinal"
	"field/train/212_mpirun_slots_times_g_exceeds_gpus_invalid_device_ordinal.txt": true,
	// "Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers / '"
	"field/train/88_a6000_two_hosts_ifname_differs_per_node.txt": true,
	// the -J document of a refused connection: iperf-server-unreachable only
}

// mlx5DumpLines is libmlx5's dump of an error completion of syndrome
// synd (rdma-core v64.0 providers/mlx5/cq.c: PFX "%s: got completion with
// error:" and dump_cqe's four lines of "%08x %08x %08x %08x"; the vendor
// syndrome and syndrome are bytes 54 and 55, struct mlx5_err_cqe), the
// opcode nibble of the last byte 0xd (requester) or 0xe (responder).
func mlx5DumpLines(r *rand.Rand, synd int) []string {
	return []string{fmt.Sprintf("mlx5: spark-%04x: got completion with error:", r.Intn(1<<16)), "00000000 00000000 00000000 00000000", "00000000 00000000 00000000 00000000",
		fmt.Sprintf("%08x 00000000 00000000 00000000", r.Intn(8)),
		fmt.Sprintf("00000000 0000%02x%02x %08x %04x%02x%x2", 0x80+r.Intn(0x40), synd, 0x08000000|r.Intn(1<<24), r.Intn(1<<16), r.Intn(256), 0xd+r.Intn(2))}
}

// A whole dump names the status its syndrome maps to, first, behind any
// prefix; with the status's signature's meaning where there is one.
func TestMlx5DumpSyndromeAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(64))
	for synd, s := range mlx5Syndromes {
		for _, pre := range causePrefixes(r) {
			a := analyseText(prefixed(pre, mlx5DumpLines(r, synd)))
			if topCause(a) != "mlx5.cqe-syndrome" {
				t.Fatalf("0x%02x behind %q: first %q (%s)", synd, pre, topCause(a), flagIDs(a))
			}
			msg := a.Flags[0].Message
			if !strings.Contains(msg, fmt.Sprintf("syndrome 0x%02x", synd)) || !strings.Contains(msg, fmt.Sprintf("%s, %s (completion status %d)", s.text, s.status, s.num)) {
				t.Errorf("0x%02x: %s", synd, msg)
			}
			if sig := signatureByID(s.sig); sig != nil && a.Flags[0].Fix != sig.Fix {
				t.Errorf("0x%02x: fix %q, not %s's", synd, a.Flags[0].Fix, s.sig)
			}
		}
	}
	// a syndrome mlx5_handle_error_cqe does not name is a general error
	a := analyseText(prefixed("", mlx5DumpLines(r, 0x30)))
	if topCause(a) != "mlx5.cqe-syndrome" || !strings.Contains(a.Flags[0].Message, "general error, IBV_WC_GENERAL_ERR (completion status 21)") {
		t.Errorf("0x30: %s", a.Flags[0].Message)
	}
}

// Hex words that are not a dump after its header decode nothing: the
// header's signature stands alone.
func TestMlx5DumpCutOrAbsent(t *testing.T) {
	r := rand.New(rand.NewSource(65))
	full := mlx5DumpLines(r, 0x13)
	for name, lines := range map[string][]string{
		"cut after three rows": full[:4],
		"a line inside":        append(append(append([]string{}, full[:3]...), "Failed to create MR"), full[3:]...),
		"words without header": full[1:],
	} {
		a := analyseText(prefixed("", lines))
		if hasFlag(a, "mlx5.cqe-syndrome") {
			t.Errorf("%s: decoded (%s)", name, flagIDs(a))
		}
	}
}

// An iperf3 --json-stream error event ({"event":"error","data":...},
// esnet/iperf 3.21 src/iperf_api.c: the -J document's "error") names its
// cause as the line iperf3 prints without it does, behind any prefix, the
// event line itself the evidence.
func TestIperf3StreamErrorEventsAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(3210))
	cases := append([]struct {
		id   string
		msgs []string
	}{{"error.iperf-server-unreachable", []string{
		"unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection refused",
		"unable to connect to server: No route to host"}}}, iperf3ErrorCases...)
	for _, c := range cases {
		for i, msg := range c.msgs {
			if i%2 == 1 {
				msg = "error - " + msg // iperf_err's text
			}
			ev := `{"event":"error","data":"` + strings.ReplaceAll(msg, `"`, `\"`) + `"}`
			for _, pre := range causePrefixes(r) {
				a := analyseText(prefixed(pre, []string{ev, `{"event":"end","data":{}}`}))
				if topCause(a) != c.id {
					t.Errorf("%s behind %q: first %q (%s)", c.id, pre, topCause(a), flagIDs(a))
					continue
				}
				if want := "line 1: " + strings.TrimSpace(pre+ev); a.Flags[0].Evidence != want && a.Flags[0].Evidence != "line 1: "+ev {
					t.Errorf("%s behind %q: evidence %q, want %q", c.id, pre, a.Flags[0].Evidence, want)
				}
			}
		}
	}
	// other events are not errors
	if a := analyseText(`{"event":"interval","data":{"sum":{"bits_per_second":9.4e9}}}` + "\n"); len(a.Flags) > 0 {
		t.Errorf("interval event: %s", flagIDs(a))
	}
}
