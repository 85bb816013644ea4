package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// launcherCases are the MPI launcher's own transport failures and the CUDA
// runtime's busy-GPU error, each built from the format string that prints
// it: Open MPI's OFI MTL (ompi v5.0.x ompi/mca/mtl/ofi: opal_output's
// "[host:pid] " then "%s:%d: *** The Open MPI OFI MTL is aborting the MPI
// job (via exit(3))."; help-mtl-ofi.txt's [OFI call fail] box), UCX's log
// (ucx src/ucs/debug/log.c: "[%lu.%06lu] [%s:%-5d:%d] %16s:%-4u %-4s %-5s
// %s" with "UCX" and the level), cudaErrorDevicesUnavailable as NCCL's
// CUDACHECK, nccl-tests' CUDACHECK and PyTorch print it, and PyTorch 1.x
// c10d's tcputil::connect ("host not found: " + gai_strerror).
var launcherCases = []docSignatureCase{
	{"error.mpi-ofi-mtl-abort", func(r *rand.Rand, host string, rank, dev int) []string {
		pid := 40000 + rank
		if r.Intn(2) == 0 {
			lines := []string{fmt.Sprintf("[%s:%d] mtl_ofi_endpoint.h:%d: *** The Open MPI OFI MTL is aborting the MPI job (via exit(3)).", host, pid, 40+r.Intn(20))}
			if r.Intn(2) == 0 { // the progress path says why first
				lines = append([]string{fmt.Sprintf("[%s:%d] mtl_ofi.h:%d: Error returned by request event callback: %d.", host, pid, 100+r.Intn(100), -1-r.Intn(5))}, lines...)
			}
			return append(lines, fmt.Sprintf("[%s:%d] *** Process received signal ***", host, pid), fmt.Sprintf("[%s:%d] Signal: Aborted (6)", host, pid))
		}
		call := []string{"fi_av_insert", "fi_endpoint", "fi_enable", "fi_getinfo"}[r.Intn(4)]
		return []string{
			"--------------------------------------------------------------------------",
			fmt.Sprintf("Open MPI failed an OFI Libfabric library call (%s).  This is highly", call),
			"unusual; your job may behave unpredictably (and/or abort) after this.",
			"",
			"  Local host: " + host,
			fmt.Sprintf("  Location: mtl_ofi_component.c:%d", 600+r.Intn(400)),
			fmt.Sprintf("  Error: %s (%d)", []string{"No such device", "Invalid argument", "Function not implemented"}[r.Intn(3)], -1-r.Intn(60)),
			"--------------------------------------------------------------------------",
		}
	}},
	// Open MPI's BML (help-mca-bml-r2.txt [unreachable proc]) and TCP BTL
	// (help-mpi-btl-tcp.txt [client connect fail]; btl_tcp_endpoint.c's
	// BTL_ERROR, "[host][[jobid,vpid],rank][file:line:func] " then
	// "connect() to %s failed: %s (%d)")
	{"error.mpi-btl-unreachable", func(r *rand.Rand, host string, rank, dev int) []string {
		peer := fmt.Sprintf("10.%d.%d.%d", r.Intn(256), r.Intn(256), 1+r.Intn(254))
		switch r.Intn(3) {
		case 0:
			return []string{
				"--------------------------------------------------------------------------",
				"At least one pair of MPI processes are unable to reach each other for",
				"MPI communications.  This means that no Open MPI device has indicated",
				"that it can be used to communicate between these processes.  This is",
				"an error; Open MPI requires that all MPI processes be able to reach",
				"each other.  This error can sometimes be the result of forgetting to",
				"specify the \"self\" BTL.",
				"",
				fmt.Sprintf("  Process 1 ([[%d,1],%d]) is on host: %s", 20000+r.Intn(40000), rank, host),
				fmt.Sprintf("  Process 2 ([[%d,1],%d]) is on host: node%03d", 20000+r.Intn(40000), rank+1, r.Intn(100)),
				"  BTLs attempted: " + []string{"self tcp", "self vader", "self sm"}[r.Intn(3)],
				"",
				"Your MPI job is now going to abort; sorry.",
				"--------------------------------------------------------------------------",
			}
		case 1:
			return []string{
				"WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
				"should not happen.",
				"",
				"Your Open MPI job may now hang or fail.",
				"",
				"  Local host: " + host,
				fmt.Sprintf("  PID:        %d", 40000+rank),
				"  Message:    connect() to " + peer + ":1024 failed",
				"  Error:      No route to host (113)",
			}
		}
		why := []string{"No route to host (113)", "Connection refused (111)", "Connection timed out (110)"}[r.Intn(3)]
		return []string{fmt.Sprintf("[%s][[%d,1],%d][btl_tcp_endpoint.c:%d:mca_btl_tcp_endpoint_complete_connect] connect() to %s failed: %s", host, 20000+r.Intn(40000), rank, 600+r.Intn(300), peer, why)}
	}},
	{"error.ucx-error", func(r *rand.Rand, host string, rank, dev int) []string {
		ts := fmt.Sprintf("[%d.%06d] [%s:%-5d:%d]", 1732800000+r.Intn(1000), r.Intn(1000000), host, 40000+rank, r.Intn(4))
		msg := []string{
			fmt.Sprintf("%16s:%-4d UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0 dgid=fe80::%x:%x sgid_index=0 traffic_class=0) for RC DEVX QP connect on mlx5_%d failed: No such device", "ib_device.c", 1300+r.Intn(200), r.Intn(0xffff), r.Intn(0xffff), r.Intn(16)),
			fmt.Sprintf("%16s:%-4d UCX  ERROR ibv_create_ah(dlid=0 sl=0 port=1 src_path_bits=0 dgid=::ffff:10.20.%d.%d sgid_index=3 traffic_class=0) on mlx5_%d:1 failed: Invalid argument", "ib_iface.c", 600+r.Intn(300), r.Intn(8), 10+r.Intn(200), r.Intn(8)),
			fmt.Sprintf("%16s:%-4d UCX  ERROR   Transport retry count exceeded on mlx5_%d:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)", "ib_mlx5_log.c", 170+r.Intn(30), r.Intn(8)),
		}[r.Intn(3)]
		if r.Intn(3) == 0 { // before the log is initialised: no host field
			ts = fmt.Sprintf("[%d.%06d]", 1732800000+r.Intn(1000), r.Intn(1000000))
		}
		return []string{ts + " " + msg}
	}},
	{"error.cuda-device-busy", func(r *rand.Rand, host string, rank, dev int) []string {
		switch r.Intn(4) {
		case 0: // nccl-tests src/common.h CUDACHECK, then the TESTCHECK trail
			return []string{fmt.Sprintf("%s: Test CUDA failure common.cu:%d 'CUDA-capable device(s) is/are busy or unavailable'", host, 900+r.Intn(500)),
				fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 1000+r.Intn(60000), 900+r.Intn(400))}
		case 1: // NCCL src/include/cudawrap.h CUDACHECK
			return []string{ncclPrefix(host, rank, dev) + fmt.Sprintf(" init.cc:%d NCCL WARN Cuda failure 46 'CUDA-capable device(s) is/are busy or unavailable'", 1500+r.Intn(500))}
		case 2: // PyTorch's C10_CUDA_CHECK
			return []string{"RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
				"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."}
		default: // CUDA before 10.1's wording
			return []string{fmt.Sprintf("%s: Test CUDA failure common.cu:%d 'all CUDA-capable devices are busy or unavailable'", host, 700+r.Intn(300))}
		}
	}},
	{"error.torch-store-host-unresolvable", func(r *rand.Rand, host string, rank, dev int) []string {
		why := []string{"Name or service not known", "Temporary failure in name resolution", "No address associated with hostname"}[r.Intn(3)]
		if r.Intn(2) == 0 { // the ValueError a rank's traceback ends in
			return []string{"ValueError: host not found: " + why}
		}
		// torchelastic's coordinator reporting the rank's exception
		return []string{fmt.Sprintf("INFO 2020-01-17 00:55:01,702 Rank %d will conenct to TCPStore server at job-%x:%d", rank, r.Intn(1<<20), 29500+r.Intn(30000)),
			fmt.Sprintf("Error: Rank %d received an Exception. Detailed message: host not found: %s", rank, why)}
	}},
}

// Any rank count, any host count, any share of failing ranks, any prefix:
// the launcher's line ranks its cause first.
func TestLauncherMessagesAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(7701)), launcherCases, 3)
}

// The lines alone (a traceback's tail, mpirun's output) name the cause.
func TestLauncherMessagesAlone(t *testing.T) {
	r := rand.New(rand.NewSource(7702))
	for _, c := range launcherCases {
		for _, pre := range causePrefixes(r) {
			for range 4 {
				lines := c.line(r, "node001", r.Intn(16), 0)
				if got := topCause(analyseText(prefixed(pre, lines))); got != c.id {
					t.Errorf("%q behind %q: first %q", lines, pre, got)
				}
			}
		}
	}
}

// What they are not: UCX's warnings, Open MPI's component chatter, a
// compute mode named in nvidia-smi, an HTTP client's host lookup; and a
// UCX error a more specific signature names ranks that one first.
// (PyTorch's IPv6 lookup of the store's name is the store host's:
// framesig_test.go.)
func TestLauncherMessagesMustNotFire(t *testing.T) {
	for name, tc := range map[string]struct {
		lines []string
		first string
		also  string // a more general signature the same line also shows
	}{
		"a UCX warning": {[]string{"[1732800000.123456] [node001:4242 :0]          parser.c:1918 UCX  WARN  unused env variable: UCX_HOME (set UCX_WARN_UNUSED_ENV_VARS=n to suppress this warning)"}, "", ""},
		"UCX's device list warning": {[]string{"[1732800000.123456] [node001:4242 :0]     ucp_context.c:1023 UCX  WARN  network device 'mlx5_4:1' is not available, please use one or more of: 'eth0'(tcp), 'lo'(tcp)"},
			"error.ucx-net-device-unavailable", ""},
		"UCX's missing transport, named": {[]string{"[node001:4242:0:4242]      select.c:434  UCX  ERROR   no active messages transport to <no debug data>: Unsupported operation",
			"Error: Failed to resolve UCX endpoint for rank 1"}, "error.ucx-no-am-transport", "error.ucx-error"},
		"Open MPI's OFI component registering": {[]string{"[node001:04242] mca: base: components_register: component ofi register function successful",
			"[node001:04242] mtl_ofi_component.c:315: mtl:ofi:provider_include = \"verbs\""}, "", ""},
		"an OFI selection message":                        {[]string{"[node001:04242] select: initializing mtl component ofi", "[node001:04242] select: init returned success"}, "", ""},
		"Open MPI's TCP BTL told which interfaces to use": {[]string{"[node001:04242] btl: tcp: Using interface: eth0", "[node001:04242] btl:tcp: Attempting to bind to AF_INET port 1024"}, "", ""},
		"the compute mode":                                {[]string{"    Compute Mode                          : Exclusive_Process"}, "", ""},
		"an HTTP host lookup":                             {[]string{"requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /api/models (Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object>: Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name resolution)\"))"}, "", ""},
	} {
		a := analyseText(prefixed("", tc.lines))
		for _, c := range launcherCases {
			if c.id != tc.first && c.id != tc.also && hasFlag(a, c.id) {
				t.Errorf("%s: %s raised (%s)", name, c.id, flagIDs(a))
			}
		}
		if tc.first != "" && topCause(a) != tc.first {
			t.Errorf("%s: first %q, want %q (%s)", name, topCause(a), tc.first, flagIDs(a))
		}
	}
}

// A cause NCCL names itself still ranks above MPI's UCX error in the same
// paste (NCCL's WARN is the job's own transport; UCX's may be MPI's).
func TestUCXErrorBelowNCCLsOwnCause(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	text := prefixed("", []string{
		"[1732800000.123456] [node001:4242 :0]       ib_iface.c:746  UCX  ERROR ibv_create_ah(dlid=0 sl=0 port=1 src_path_bits=0 dgid=::ffff:10.20.0.12 sgid_index=3 traffic_class=0) on mlx5_0:1 failed: Invalid argument",
		p + " misc/ibvwrap.cc:301 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.20.0.11, remote GID ::ffff:10.20.0.12",
	})
	a := analyseText(text)
	if got := topCause(a); got != "error.ib-qp-timeout" {
		t.Errorf("first %q, want error.ib-qp-timeout (%s)", got, flagIDs(a))
	}
	if !hasFlag(a, "error.ucx-error") {
		t.Errorf("the UCX error is not listed (%s)", flagIDs(a))
	}
}

// Two ranks on one GPU, which NCCL names itself, rank above the busy GPU
// that the second rank then meets in Exclusive Process mode.
func TestCUDADeviceBusyBelowDuplicateGPU(t *testing.T) {
	p := ncclPrefix("node001", 1, 0)
	a := analyseText(prefixed("", []string{
		p + " init.cc:1500 NCCL WARN Cuda failure 46 'CUDA-capable device(s) is/are busy or unavailable'",
		p + " init.cc:872 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
	}))
	if got := topCause(a); got != "error.duplicate-gpu" || !hasFlag(a, "error.cuda-device-busy") {
		t.Errorf("first %q (%s)", got, flagIDs(a))
	}
}

// No other file under testdata raises them (the held-out part of the field
// corpus is not read).
func TestLauncherMessagesNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.mpi-ofi-mtl-abort", "error.mpi-btl-unreachable", "error.ucx-error", "error.cuda-device-busy"}, map[string]bool{
		"field/train/191_gh200_exclusive_process_openmpi_ofi_hmem_context_on_gpu0_busy.txt": true,
		"field/train/208_openmpi_ofi_mtl_libfabric_abort_mismatched_address_format.txt":     true,
		"field/train/213_ucx_ibv_create_ah_sriov_pods_mpi_not_nccl.txt":                     true,
		"field/CATEGORIES.md": true, // quotes the messages in the slugs' definitions
	})
}
