package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The signatures that name a cause from a tool's own message fire on
// their real lines behind any prefix, rank first in the paste they came
// from, and leave the lookalike lines of other causes alone.
func TestToolMessageSignaturesAnyPrefix(t *testing.T) {
	cases := []struct {
		line, id string
		fire     bool
	}{
		// field case 119 (esnet/iperf#980)
		{"iperf3: error - the server is busy running a test. try again later", "error.iperf-server-busy", true},
		{"iperf3: error - unable to connect to server: Connection refused", "error.iperf-server-busy", false},
		// field case 176 (esnet/iperf#404): the server loop of iperf3 3.0.1
		// to 3.0.11 and 3.1 to 3.1.2 (src/main.c); a failed test it outlives
		// is not the exit
		{"iperf3: too many errors, exiting", "error.iperf3-server-too-many-errors", true},
		{"iperf3: error - unable to receive cookie at server: Connection reset by peer", "error.iperf3-server-too-many-errors", false},
		{"iperf3: error - unable to receive cookie at server: Connection reset by peer", "error.iperf-server-unreachable", false},
		// field case 120 (jax-ml/jax#18391); the message of openxla/xla's nccl_stub.cc
		{"external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.;      ", "error.nccl-library-missing", true},
		{"external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclCommInitRank(&comm) failed: unhandled system error", "error.nccl-library-missing", false},
		// field case 114 (vllm-project/vllm#1726): INT_MIN is NCCL_CONFIG_UNDEF_INT
		{"Invalid config blocking attribute value -2147483648", "error.nccl-config-undef-rejected", true},
		{"node01:1297:1297 [0] init.cc:1270 NCCL WARN Invalid config blocking attribute value 2", "error.nccl-config-undef-rejected", false},
		// field case 110 (NVIDIA/TensorRT-LLM#1131)
		{"Failed, NCCL error /home/qiaoxj/TensorRT-LLM/cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp:183 'unknown result code'", "error.nccl-unknown-result-code", true},
		{"Failed, NCCL error /home/jenkins/agent/workspace/LLM/main/L0_Test-x86_64/tensorrt_llm/cpp/tensorrt_llm/thop/allreduceOp.cpp:308 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'", "error.nccl-unknown-result-code", false},
		// field case 71 (NVIDIA/nccl#1637), NCCL 2.25's INFO line; 2.26 to
		// 2.29.3 and 2.29.7 on print it as a WARN (src/enqueue.cc formats)
		{"localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "error.nccl-kernel-shmem-exceeds", true},
		{"localhost:11344:11344 [1] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "error.nccl-kernel-shmem-exceeds", true},
		{"localhost:11344:11344 [1] enqueue.cc:81 NCCL WARN cudaArch 1200 dynamic smem 82240 exceeds device/fn maxSharedMem 79856", "error.nccl-kernel-shmem-exceeds", true},
		{"localhost:11344:11344 [1] NCCL INFO ncclCommInitRank comm 0x397e3800 rank 1 nranks 2 cudaDev 1 busId 2000 - Init START", "error.nccl-kernel-shmem-exceeds", false},
		// field case 131 (hkproj/pytorch-transformer-distributed#1); NCCL
		// 2.7's and 2.12's wording of the same WARN; iperf3's and other
		// errnos are another signature's
		{"socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host", "error.socket-no-route", true},
		{"node01:1297:1310 [0] misc/socket.cc:450 NCCL WARN Net : Connect to 10.1.0.7<41531> failed : No route to host", "error.socket-no-route", true},
		{"iperf3: error - unable to connect to server: No route to host", "error.socket-no-route", false},
		{"socketStartConnect: Connect to 192.168.19.14<52822> failed : Connection refused", "error.socket-no-route", false},
		// field case 181 (NCCL 2.4's bare WARN, src/misc/ibvwrap.cc
		// IBV_PTR_CHECK; NCCL's troubleshooting page: memlock); an errno
		// other than ENOMEM after it is another cause
		{"ibvwrap.c: 106 NCCL WARN Call to ibv_reg_mr failed", "error.ib-resource-enomem", true},
		{"node01:1297:1310 [0] misc/ibvwrap.cc:152 NCCL WARN Call to ibv_create_qp failed", "error.ib-resource-enomem", true},
		{"node01:1297:1310 [0] misc/ibvwrap.cc:215 NCCL WARN Call to ibv_reg_mr failed with error Bad address", "error.ib-resource-enomem", false},
		{"node01:1297:1310 [0] misc/ibvwrap.cc:215 NCCL WARN Call to ibv_reg_mr failed (file a.c)", "error.ib-resource-enomem", false},
		// field case 135 (a blog's quote of NCCL's duplicate-GPU WARN without its prefix)
		{"Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)", "error.duplicate-gpu", true},
		// field case 117 (vllm-project/vllm#58179) and NCCL 2.27's wording;
		// without a variable set the same WARN is an internal error
		{"No algorithm/protocol nor symKernelId available for function Broadcast with datatype ncclInt8. NCCL_ALGO was set to allreduce:tree. NCCL_PROTO was set to Simple.", "error.nccl-algo-env-excludes", true},
		{"node01:1297:1297 [0] enqueue.cc:1828 NCCL WARN Error : no algorithm/protocol available for function AllGather with datatype ncclBfloat16. NCCL_PROTO was set to LL.", "error.nccl-algo-env-excludes", true},
		{"node01:1297:1297 [0] enqueue.cc:2063 NCCL WARN No algorithm/protocol available for function AllGather with datatype ncclBfloat16.", "error.nccl-algo-env-excludes", false},
		{"NCCL_ALGO was set to allreduce:tree. NCCL_PROTO was set to Simple.", "error.nccl-algo-env-excludes", true},
		{"node01:1297:1297 [0] NCCL INFO NCCL_ALGO set by environment to allreduce:tree", "error.nccl-algo-env-excludes", false},
		{"node01:1297:1297 [0] enqueue.cc:1182 NCCL WARN Error : no algorithm/protocol available", "error.nccl-algo-env-excludes", false},
		// NCCL's own wording (src/transport/net_socket.cc, net_ib); a
		// socket error of another kind is not a size mismatch
		{"node02:2211:2290 [1] transport/net_socket.cc:636 NCCL WARN NET/Socket : peer 10.0.0.12<40671> message truncated : receiving 1048576 bytes instead of 524288. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks", "error.socket-message-truncated", true},
		{"node02:2211:2290 [1] transport/net_socket.cc:640 NCCL WARN NET/Socket : peer 10.0.0.12<40671> closed connection", "error.socket-message-truncated", false},
		{"node02:2211:2290 [1] transport/net_ib/connect.cc:987 NCCL WARN NET/IB : Attempted to connect incompatible devices: [1]mlx5_1:1/RoCE and [0]mlx5_0:1/IB. Try selecting NICs of only one link type using NCCL_IB_HCA", "error.ib-incompatible-devices", true},
		{"node02:2211:2290 [1] transport/net_ib.cc:533 NCCL WARN NET/IB : Trying to merge multiple devices together with different link_layer properties mlx5_0 -> 1, mlx5_1 -> 2. Try only selecting NICs with one type of link using NCCL_IB_HCA", "error.ib-incompatible-devices", true},
		{"node02:2211:2211 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.12<0>", "error.ib-incompatible-devices", false},
		// NCCL's RAS and bootstrap root in their own words (src/ras/ras.cc,
		// src/bootstrap.cc); the RAS INFO line that precedes them is not one
		{"gpu-a:4711:4790 [0] ras/ras.cc:415 NCCL WARN NCCL version mismatch with remote peer 10.0.0.7<53111> (local: 2.30.7, remote 2.28.9)", "error.nccl-version-mismatch-peer", true},
		{"gpu-a:4711:4790 [0] NCCL INFO RAS handling connInit from 10.0.0.7<53111> (version 2.28.9, listeningAddr 10.0.0.7<28028>, peersHash 0x1, deadPeersHash 0x0)", "error.nccl-version-mismatch-peer", false},
		{"gpu-a:4711:4800 [0] bootstrap.cc:140 NCCL WARN Bootstrap Root : mismatch in rank count from procs 16 : 8", "error.bootstrap-rank-count-mismatch", true},
		{"gpu-a:4711:4800 [0] bootstrap.cc:312 NCCL WARN Bootstrap Root : mismatch in info from procs, nranks 16 vs 8, nroots 1 vs 1, iroot 0 vs 0", "error.bootstrap-rank-count-mismatch", true},
		{"gpu-a:4711:4800 [0] bootstrap.cc:145 NCCL WARN Bootstrap Root : rank 3 of 16 ranks has already checked in", "error.bootstrap-rank-count-mismatch", false},
		// NCCL 2.30's wording of the same-GPU check (src/init.cc v2.30.7-1)
		{"node01:1297:1297 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.", "error.duplicate-gpu", true},
	}
	r := rand.New(rand.NewSource(36))
	prefixes := append(causePrefixes(r), launchPrefixes...)
	for _, c := range cases {
		for _, pre := range prefixes {
			a := analyseText(pre + c.line + "\n")
			if got := hasFlag(a, c.id); got != c.fire {
				t.Errorf("%q behind %q: %s fired %v, want %v (%+v)", c.line, pre, c.id, got, c.fire, a.Flags)
			}
			if c.fire && firstFail(a) != c.id {
				t.Errorf("%q behind %q: first fail %q, want %s", c.line, pre, firstFail(a), c.id)
			}
		}
	}
}

// initJob is the "Init START" lines of one communicator of n ranks over
// hosts pods, rank r on GPU busOf(r) (the format of field case 112,
// NVIDIA/TensorRT-LLM#9263; NCCL 2.30 puts "[Rank r] <function>" first).
func initJob(n, hosts int, comm string, v230 bool, busOf func(r int) string) []string {
	var lines []string
	for r := range n {
		h := r % hosts
		pre := fmt.Sprintf("test-trt-prefill-worker-0-%d:%d:%d [%d] NCCL INFO ", h, 42+r, 982+r, r/hosts)
		msg := fmt.Sprintf("ncclCommInitRank comm 0x7a12257c%04x rank %d nranks %d cudaDev %d nvmlDev %d busId %s commId %s - Init START", r, r, n, r/hosts, r/hosts, busOf(r), comm)
		if v230 {
			msg = fmt.Sprintf("[Rank %d] ncclCommInitRankConfig comm 0x7a12257c%04x rank %d nranks %d cudaDev %d nvmlDev %d busId %s commId %s - Init START", r, r, r, n, r/hosts, r/hosts, busOf(r), comm)
		}
		lines = append(lines,
			pre+"NET/Socket : Using [0]eth0:10.0.133.59<0>",
			pre+"Using network Socket",
			pre+msg)
	}
	return lines
}

// Any rank count, any number of hosts, any prefix, both NCCL formats:
// one GPU per rank says nothing; two ranks of one communicator on one
// host's GPU are named first; the same bus on other hosts, in another
// communicator, or with NCCL_MULTI_RANK_GPU_ENABLE=1 is no evidence.
func TestSharedGPUAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(112))
	bus := func(local int) string { return fmt.Sprintf("%x", 0x100000+local*0x10000) }
	for _, pre := range causePrefixes(r) {
		for range 4 {
			hosts := 1 + r.Intn(4)
			n := hosts + 1 + r.Intn(8)
			v230 := r.Intn(2) == 0
			own := func(rank int) string { return bus(rank / hosts) }
			if hasFlag(analyseText(prefixed(pre, initJob(n, hosts, "0xaa9becea043c4e6c", v230, own))), "nccl.shared-gpu") {
				t.Fatalf("%d ranks on %d hosts, one GPU each, behind %q: flagged", n, hosts, pre)
			}
			// rank b shares rank a's GPU: same host (a ≡ b mod hosts)
			a := r.Intn(n - hosts)
			b := a + hosts*(1+r.Intn((n-1-a)/hosts))
			shared := func(rank int) string {
				if rank == b {
					return own(a)
				}
				return own(rank)
			}
			lines := initJob(n, hosts, "0xaa9becea043c4e6c", v230, shared)
			res := analyseText(prefixed(pre, lines))
			if f := firstFail(res); f != "nccl.shared-gpu" {
				t.Fatalf("ranks %d and %d of %d on one GPU (%d hosts) behind %q: first %q (%+v)", a, b, n, hosts, pre, f, res.Flags)
			}
			if m := flagOf(res, "nccl.shared-gpu").Message; !strings.Contains(m, fmt.Sprintf("ranks %d and %d ", a, b)) {
				t.Errorf("message names other ranks: %s", m)
			}
			local := strings.ReplaceAll(strings.Join(lines, "\n"), "test-trt-prefill-worker-0-0:", "localhost:")
			if hosts == 1 && hasFlag(analyseText(prefixed(pre, strings.Split(local, "\n"))), "nccl.shared-gpu") {
				t.Errorf("host localhost behind %q: flagged (NCCL's host hash adds the boot id)", pre)
			}
			env := append([]string{"test-trt-prefill-worker-0-0:42:42 [0] NCCL INFO NCCL_MULTI_RANK_GPU_ENABLE set by environment to 1"}, lines...)
			if hasFlag(analyseText(prefixed(pre, env)), "nccl.shared-gpu") {
				t.Errorf("NCCL_MULTI_RANK_GPU_ENABLE=1 behind %q still flagged", pre)
			}
			// the same bus ids on every host, one rank per GPU, and two
			// communicators that each use the GPU once
			same := func(rank int) string { return bus(rank / hosts) }
			two := append(initJob(n, hosts, "0x1111111111111111", v230, same), initJob(n, hosts, "0x2222222222222222", v230, same)...)
			if hasFlag(analyseText(prefixed(pre, two)), "nccl.shared-gpu") {
				t.Fatalf("two communicators, one GPU per rank, behind %q: flagged", pre)
			}
		}
	}
}

// ipoibJob is NET/IB's device line with its out-of-band interface for
// every rank and, when failed, NCCL's error-return traces out of the
// bootstrap (the format of field case 87, NVIDIA/nccl#1000).
func ipoibJob(n int, oob string, failed bool, env []string) []string {
	var lines []string
	for r := range n {
		pre := fmt.Sprintf("dso-s1-r1-a100-%02d:%d:%d [%d] NCCL INFO ", r/8+3, 2328+r, 2666+r, r%8)
		for _, e := range env {
			lines = append(lines, pre+e)
		}
		lines = append(lines,
			pre+"NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP [2]mlx5_8:1/RoCE [RO]; OOB "+fmt.Sprintf(oob, r/8+103),
			pre+"Using network IBext")
	}
	if failed {
		pre := fmt.Sprintf("dso-s1-r1-a100-03:%d:2658 [2] NCCL INFO ", 2330)
		lines = append(lines, pre+"misc/socket.cc:567 -> 2", pre+"misc/socket.cc:618 -> 2", pre+"bootstrap.cc:270 -> 2")
	}
	return lines
}

// Any rank count, any prefix: a bootstrap that failed over an ib*
// interface NCCL chose itself is named; one the user chose
// (NCCL_SOCKET_IFNAME), an Ethernet interface, or no failure is not.
func TestBootstrapIPoIBAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(87))
	for _, pre := range causePrefixes(r) {
		n := 1 + r.Intn(24)
		res := analyseText(prefixed(pre, ipoibJob(n, "ibp75s0:192.168.0.%d<0>", true, nil)))
		if f := firstFail(res); f != "nccl.bootstrap-ipoib-auto" {
			t.Fatalf("%d ranks behind %q: first %q (%+v)", n, pre, f, res.Flags)
		}
		for what, lines := range map[string][]string{
			"no failure":           ipoibJob(n, "ibp75s0:192.168.0.%d<0>", false, nil),
			"ethernet":             ipoibJob(n, "enp226s0:10.10.0.%d<0>", true, nil),
			"NCCL_SOCKET_IFNAME":   ipoibJob(n, "ibp75s0:192.168.0.%d<0>", true, []string{"NCCL_SOCKET_IFNAME set by environment to ibp75s0"}),
			"NCCL_SOCKET_IFNAME=^": ipoibJob(n, "ib0:192.168.0.%d<0>", true, []string{"NCCL_SOCKET_IFNAME set by environment to ^docker,lo"}),
		} {
			if hasFlag(analyseText(prefixed(pre, lines)), "nccl.bootstrap-ipoib-auto") {
				t.Errorf("%s, %d ranks behind %q: flagged", what, n, pre)
			}
		}
	}
}

// allGatherTable is an all_gather_perf paste in the format of field case
// 126 (NVIDIA/nccl-tests#37): the command, optionally the header with
// nGpus and the NCCL version, and one row per size with its wrong count.
func allGatherTable(gpus int, header bool, version string, sizes []int64, wrong map[int64]int) []string {
	lines := []string{fmt.Sprintf("all_gather_perf -g %d -b %d -e %d -f 2", gpus, sizes[0], sizes[len(sizes)-1])}
	if header {
		lines = append(lines, fmt.Sprintf("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: 1", gpus, sizes[0], sizes[len(sizes)-1]))
	}
	if version != "" {
		lines = append(lines, "NCCL version "+version+"+cuda10.1")
	}
	lines = append(lines,
		"                                             out-of-place                       in-place",
		"       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error",
		"        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)")
	bad := 0
	for _, s := range sizes {
		w := wrong[s]
		bad += 2 * w
		lines = append(lines, fmt.Sprintf("  %10d  %12d   float  %7d  129.05  129.05  %d  %7d  128.84  128.84  %d", s, s/4/int64(gpus), s/33000000+1, w, s/33000000+1, w))
	}
	if bad > 0 {
		lines = append(lines, fmt.Sprintf(" Out of bounds values : %d FAILED", bad))
	} else {
		lines = append(lines, " Out of bounds values : 0 OK")
	}
	return append(lines, " Avg bus bandwidth    : 128.942")
}

// Any number of GPUs per process, any sizes around 4 GiB, any prefix:
// wrong elements only from 4 GiB on with several GPUs per process name
// NCCL's fixed all_gather bug; one GPU per process, wrong elements below
// 4 GiB, or NCCL 2.6.4 and later do not.
func TestAllGatherOver4GAnyGPUsAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(126))
	const four = int64(1) << 32
	for _, pre := range causePrefixes(r) {
		gpus := 2 + r.Intn(15)
		var sizes []int64
		for s := four >> uint(1+r.Intn(4)); s <= four<<uint(r.Intn(2)); s *= 2 {
			sizes = append(sizes, s)
		}
		header := r.Intn(2) == 0
		over := map[int64]int{four: 1 + r.Intn(3)}
		res := analyseText(prefixed(pre, allGatherTable(gpus, header, "", sizes, over)))
		if f := firstFail(res); f != "nccl.too-old" {
			t.Fatalf("%d GPUs per process, sizes %v, behind %q: first %q (%+v)", gpus, sizes, pre, f, res.Flags)
		}
		for what, lines := range map[string][]string{
			"one GPU per process": allGatherTable(1, header, "", sizes, over),
			"wrong below 4 GiB":   allGatherTable(gpus, header, "", sizes, map[int64]int{four: 1, sizes[0]: 2}),
			"NCCL 2.6.4":          allGatherTable(gpus, header, "2.6.4", sizes, over),
			"NCCL 2.7.8":          allGatherTable(gpus, header, "2.7.8", sizes, over),
			"no wrong elements":   allGatherTable(gpus, header, "", sizes, nil),
		} {
			if f := flagOf(analyseText(prefixed(pre, lines)), "nccl.too-old"); f != nil {
				t.Errorf("%s, behind %q: flagged %s", what, pre, f.Message)
			}
		}
		if f := flagOf(analyseText(prefixed(pre, allGatherTable(gpus, header, "2.5.6", sizes, over))), "nccl.too-old"); f == nil || !strings.Contains(f.Evidence, "NCCL 2.5.6") {
			t.Errorf("NCCL 2.5.6 behind %q: %+v", pre, f)
		}
	}
}

// gdrJob is the NET channel lines of a ring over hosts nodes with perNode
// ranks each (the format of field case 11, NVIDIA/nccl#897, with NCCL's
// "host:pid:tid [dev] NCCL INFO Channel" prefix): each rank prints its
// send to the next rank and its receive from the one before, with
// "/GDRDMA" where gdrOn(host, send) says so.
func gdrJob(hosts, perNode int, gdrOn func(h int, send bool) bool) []string {
	n := hosts * perNode
	var lines []string
	for r := range n {
		h := r / perNode
		pre := fmt.Sprintf("gpu-node-%02d:%d:%d [%d] NCCL INFO ", h, 3100+r, 3200+r, r%perNode)
		next, prev := (r+1)%n, (r+n-1)%n
		if next/perNode != h {
			suffix := ""
			if gdrOn(h, true) {
				suffix = "/GDRDMA"
			}
			lines = append(lines, fmt.Sprintf("%sChannel 00/0 : %d[%x] -> %d[%x] [send] via NET/IB/%d%s", pre, r, 0x1a000+r%perNode, next, 0x1a000+next%perNode, r%perNode, suffix))
		}
		if prev/perNode != h {
			suffix := ""
			if gdrOn(h, false) {
				suffix = "/GDRDMA"
			}
			lines = append(lines, fmt.Sprintf("%sChannel 00/0 : %d[%x] -> %d[%x] [receive] via NET/IB/%d%s", pre, prev, 0x1a000+prev%perNode, r, 0x1a000+r%perNode, r%perNode, suffix))
		}
	}
	return lines
}

// Any number of hosts and ranks, any prefix: hosts whose every NET
// receive goes without GPUDirect RDMA while others use it are named; GDR
// everywhere, GDR read alone off on a host, or NCCL_NET_GDR_LEVEL set
// are no evidence.
func TestGDRSomeHostsAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, pre := range causePrefixes(r) {
		hosts := 2 + r.Intn(5)
		perNode := 1 + r.Intn(8)
		bad := r.Intn(hosts)
		res := analyseText(prefixed(pre, gdrJob(hosts, perNode, func(h int, _ bool) bool { return h != bad })))
		f := flagOf(res, "nccl.gdr-off")
		if f == nil || !strings.Contains(f.Message, fmt.Sprintf("off on gpu-node-%02d while", bad)) {
			t.Fatalf("%d hosts × %d ranks, host %d without GDR, behind %q: %+v", hosts, perNode, bad, pre, res.Flags)
		}
		for what, lines := range map[string][]string{
			"GDR everywhere":           gdrJob(hosts, perNode, func(int, bool) bool { return true }),
			"GDR read off on one host": gdrJob(hosts, perNode, func(h int, send bool) bool { return h != bad || !send }),
			"NCCL_NET_GDR_LEVEL": append([]string{"gpu-node-00:3100:3100 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC"},
				gdrJob(hosts, perNode, func(h int, _ bool) bool { return h != bad })...),
		} {
			if f := flagOf(analyseText(prefixed(pre, lines)), "nccl.gdr-off"); f != nil {
				t.Errorf("%s, %d hosts × %d ranks, behind %q: %s", what, hosts, perNode, pre, f.Message)
			}
		}
	}
}
