package analyze

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// The lines below copy NCCL's INFO/WARN formats and values from real
// pastes (the field corpus cases named at each test); the properties vary
// what a general rule must not depend on: the rank count, the hosts, the
// prefix in front of every line.

// causePrefixes are every real prefix, none, and a few random ones.
func causePrefixes(r *rand.Rand) []string {
	out := append([]string{""}, realPrefixes...)
	for range 3 {
		out = append(out, randomPrefix(r))
	}
	return out
}

func prefixed(prefix string, lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

func analyseText(text string) report.AnalysisResult {
	return Reader("paste.txt", strings.NewReader(text), Options{})
}

// firstFail is the id of the first fail flag, "" when there is none.
func firstFail(a report.AnalysisResult) string {
	for _, f := range a.Flags {
		if f.Severity == report.Fail {
			return f.ID
		}
	}
	return ""
}

func flagOf(a report.AnalysisResult, id string) *report.AnalysisFlag {
	for i := range a.Flags {
		if a.Flags[i].ID == id {
			return &a.Flags[i]
		}
	}
	return nil
}

// socketJob is an NCCL log of ranks spread over hosts that talk over
// NET/Socket with the socket list given (the format of field case 22,
// pytorch/pytorch#68893).
func socketJob(ranks, hosts int, list string) []string {
	var lines []string
	for r := range ranks {
		h := r % hosts
		host := fmt.Sprintf("ip-172-31-0-%d:%d:%d [%d]", 137+h, 14605+r, 14673+r, r/hosts)
		lines = append(lines,
			host+" NCCL INFO Bootstrap : Using "+list,
			host+" NCCL INFO NET/Socket : Using "+list,
			host+" NCCL INFO Using network Socket")
	}
	for r := range ranks {
		h := r % hosts
		host := fmt.Sprintf("ip-172-31-0-%d:%d:%d [%d]", 137+h, 14605+r, 14688+r, r/hosts)
		lines = append(lines, fmt.Sprintf("%s NCCL INFO Channel 00 : %d[1e0] -> %d[1e0] [send] via NET/Socket/0", host, r, (r+1)%ranks))
	}
	return lines
}

// Any rank count over two or more hosts, any prefix: a veth with a
// link-local address in the socket list is named first; the same job
// without it names no such cause.
func TestUnroutableInterfaceAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(3611))
	bad := "[0]ens5:172.31.0.137<0> [1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>"
	good := "[0]ens5:172.31.0.137<0>"
	for _, p := range causePrefixes(r) {
		for ranks := 2; ranks <= 9; ranks++ {
			for hosts := 2; hosts <= min(ranks, 3); hosts++ {
				a := analyseText(prefixed(p, socketJob(ranks, hosts, bad)))
				if got := firstFail(a); got != "nccl.socket-unroutable-if" {
					t.Errorf("prefix %q, %d ranks on %d hosts: first fail %q, want nccl.socket-unroutable-if (flags %v)", p, ranks, hosts, got, a.Flags)
				}
				if f := flagOf(a, "nccl.socket-unroutable-if"); f != nil && !strings.Contains(f.Evidence, "veth75fa783") {
					t.Errorf("evidence %q does not name the veth", f.Evidence)
				}
				if f := flagOf(analyseText(prefixed(p, socketJob(ranks, hosts, good))), "nccl.socket-unroutable-if"); f != nil {
					t.Errorf("prefix %q, %d ranks: flagged a routable list: %s", p, ranks, f.Evidence)
				}
			}
		}
	}
}

// One host and no channel over the network: a veth in the list carries
// nothing between nodes, so it is not a cause.
func TestUnroutableInterfaceNotOnOneNode(t *testing.T) {
	lines := []string{
		"node1:100:100 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.5<0> [1]docker0:172.17.0.1<0>",
		"node1:100:100 [0] NCCL INFO comm 0x55f6848de3b0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
		"node1:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
	}
	if f := flagOf(analyseText(prefixed("", lines)), "nccl.socket-unroutable-if"); f != nil {
		t.Errorf("flagged a single-node job: %s", f.Evidence)
	}
}

// The peer's address: on another network than this rank's (field case
// 73, gpustack/gpustack#2275) it is named first, above the connect abort
// it explains; on the same /16, or a loopback address, it is not.
func TestPeerOtherNetwork(t *testing.T) {
	r := rand.New(rand.NewSource(36))
	run := func(p, peer string) report.AnalysisResult {
		return analyseText(prefixed(p, []string{
			"gpu:77952:77952 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to " + peer + "<57093> failed : Software caused connection abort",
			"gpu:77952:77952 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens3",
			"gpu:77952:77952 [0] NCCL INFO Bootstrap : Using ens3:172.16.0.16<0>",
		}))
	}
	for _, p := range causePrefixes(r) {
		a := run(p, "172.21.0.1")
		if got := firstFail(a); got != "nccl.peer-other-network" {
			t.Errorf("prefix %q: first fail %q, want nccl.peer-other-network", p, got)
		}
		if f := flagOf(a, "nccl.peer-other-network"); f == nil || !strings.Contains(f.Message, "container bridge") {
			t.Errorf("prefix %q: %+v", p, f)
		}
		for _, peer := range []string{"172.16.3.4", "127.0.1.1"} {
			if f := flagOf(run(p, peer), "nccl.peer-other-network"); f != nil {
				t.Errorf("prefix %q, peer %s: flagged: %s", p, peer, f.Message)
			}
		}
	}
}

// oneHostNet is one host whose ranks connect through NET/Socket, with the
// NCCL_*_DISABLE lines given (NCCL's "set by environment to" format).
func oneHostNet(ranks int, env []string) []string {
	var lines []string
	for r := range ranks {
		host := fmt.Sprintf("node1:%d:%d [%d]", 200+r, 300+r, r)
		for _, e := range env {
			lines = append(lines, host+" NCCL INFO "+e+" set by environment to 1.")
		}
		lines = append(lines,
			host+" NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>",
			host+" NCCL INFO Using network Socket",
			fmt.Sprintf("%s NCCL INFO comm 0x5596166a63d0 rank %d nRanks %d nNodes 1 localRanks %d localRank %d MNNVL 0", host, r, ranks, ranks, r),
			fmt.Sprintf("%s NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/Socket/0", host, r, r, (r+1)%ranks, (r+1)%ranks))
	}
	return lines
}

// P2P and SHM both off on one node, any rank count and prefix: that is
// the cause, ranked above the NET/Socket fallback, which becomes a
// warning. With one of them on, or across nodes, it is not named.
func TestP2PSHMDisabledAboveSocketFallback(t *testing.T) {
	r := rand.New(rand.NewSource(406))
	both := []string{"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"}
	for _, p := range causePrefixes(r) {
		for ranks := 2; ranks <= 8; ranks++ {
			a := analyseText(prefixed(p, oneHostNet(ranks, both)))
			if got := firstFail(a); got != "nccl.p2p-shm-disabled" {
				t.Errorf("prefix %q, %d ranks: first fail %q (flags %v)", p, ranks, got, a.Flags)
			}
			if f := flagOf(a, "nccl.net-socket"); f != nil && f.Severity != report.Warn {
				t.Errorf("prefix %q, %d ranks: net-socket %s, want warn", p, ranks, f.Severity)
			}
			if f := flagOf(analyseText(prefixed(p, oneHostNet(ranks, both[:1]))), "nccl.p2p-shm-disabled"); f != nil {
				t.Errorf("prefix %q, %d ranks: named with SHM on", p, ranks)
			}
		}
	}
}

// sparkTwins is one DGX Spark's NET/IB lines (device names and format of
// DGX Spark logs in the corpus) with channels via NET/IB.
func sparkTwins(devs string, ranks int) []string {
	lines := []string{"spark-1:100:100 [0] NCCL INFO NET/IB : Using " + devs + " [RO]; OOB enp1s0f1np1:192.168.100.10<0>",
		"spark-1:100:100 [0] NCCL INFO Using network IB"}
	for r := range ranks {
		lines = append(lines, fmt.Sprintf("spark-1:100:101 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[0] [send] via NET/IB/0", r))
	}
	return lines
}

// One host's lines are enough to see one twin in use once a channel runs
// via NET/IB; both twins listed, or no network channel, are not flagged.
func TestOneTwinFromOneHost(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, p := range causePrefixes(r) {
		for ch := 1; ch <= 4; ch++ {
			a := analyseText(prefixed(p, sparkTwins("[0]rocep1s0f1:1/RoCE", ch)))
			if flagOf(a, "spark.one-twin") == nil {
				t.Errorf("prefix %q, %d channels: one twin not flagged (flags %v)", p, ch, a.Flags)
			}
			if f := flagOf(analyseText(prefixed(p, sparkTwins("[0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE", ch))), "spark.one-twin"); f != nil {
				t.Errorf("prefix %q: both twins flagged as one", p)
			}
		}
		if f := flagOf(analyseText(prefixed(p, sparkTwins("[0]rocep1s0f1:1/RoCE", 0))), "spark.one-twin"); f != nil {
			t.Errorf("prefix %q: flagged without a network channel", p)
		}
	}
}

// The signatures added for the field's misses, on their real lines (the
// field corpus's train cases, named by thread).
func TestFieldSignatures(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		// NVIDIA/nccl#426
		{"-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129", "error.ib-wc-retry-exceeded"},
		// EvolvingLMMs-Lab/open-r1-multimodal#7
		{"[rank0]: ncclInternalError: Internal check failed.\n[rank0]: Last error:\n[rank0]: Bootstrap : no socket interface found", "error.socket-ifname-not-found"},
		// NVIDIA/nccl-tests#264
		{"test: Test CUDA failure common.cu:941 'system not yet initialized'\n .. test pid 54340: Test failure common.cu:891", "error.fabric-manager-not-running"},
		// NVIDIA/gpu-operator#544
		{"nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03. Please update with matching NVIDIA driver package.", "error.fabric-manager-not-running"},
		// NVIDIA/nccl#1338
		{"node2:242431:242479 [5] transport/nvls.cc:158 NCCL WARN Cuda failure 1 'invalid argument'\nnode2:242431:242475 [1] NCCL INFO transport/nvls.cc:330 -> 1", "error.nvls-fabric-stale"},
	} {
		a := analyseText(c.text + "\n")
		if got := firstFail(a); got != c.want {
			t.Errorf("%q: first fail %q, want %s (flags %v)", c.text, got, c.want, a.Flags)
		}
	}
}

// An all_reduce between two DGX Spark (the header of
// NVIDIA/dgx-spark-playbooks#103) is judged at 1 GiB and up against the
// link's expectation, whatever bus bandwidth the rows give.
func TestSparkAllReduceJudged(t *testing.T) {
	head := []string{
		"# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102",
		"# Collective test starting: all_reduce_perf",
		"# nThread 1 nGpus 1 minBytes 8192 maxBytes 8589934592 step: 2(factor) warmup iters: 10 iters: 100 agg iters: 1 validation: 1 graph: 0 unalign: 0",
		"#",
		"# Using devices",
		"#  Rank  0 Group  0 Pid 1666603 on spark-d708 device  0 [000f:01:00] NVIDIA GB10",
		"#  Rank  1 Group  0 Pid 1669515 on spark-dbf4 device  0 [000f:01:00] NVIDIA GB10",
		"#",
		"#                                                              out-of-place                       in-place",
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)",
	}
	for _, c := range []struct {
		busbw float64
		want  report.Verdict
	}{{21.6, report.VerdictOK}, {19.0, report.VerdictWarning}, {12.0, report.VerdictCritical}} {
		lines := slices.Clone(head)
		for _, size := range []int64{1 << 30, 2 << 30, 4 << 30} {
			us := float64(size) / c.busbw / 1e3
			lines = append(lines, fmt.Sprintf("%12d %13d     float     sum      -1 %8.1f %7.2f %7.2f       0 %8.1f %7.2f %7.2f       0",
				size, size/4, us, c.busbw, c.busbw, us, c.busbw, c.busbw))
		}
		a := analyseText(prefixed("", lines))
		var judged bool
		for _, it := range a.Items {
			if it.Expectation != nil && it.Expectation.ID == "spark-2n1c-all-reduce-large" {
				judged = true
				if it.Verdict != c.want {
					t.Errorf("busbw %v: verdict %s, want %s", c.busbw, it.Verdict, c.want)
				}
			}
		}
		if !judged {
			t.Errorf("busbw %v: no item judged against spark-2n1c-all-reduce-large: %s", c.busbw, summary(a))
		}
	}
}

// spreadJob is a job whose channel lines go over NCCL's socket devices
// 0..devs-1 with no socket list printed (the format of field case 69,
// NVIDIA/nccl#697: "[send] via NET/Socket/3"), the ranks spread over
// hosts, env lines first.
func spreadJob(ranks, hosts, devs int, env []string) []string {
	var lines []string
	for r := range ranks {
		host := fmt.Sprintf("dgxa%d:%d:%d [%d]", 100+r%hosts, 1050+r, 1315+r, r/hosts)
		for _, e := range env {
			lines = append(lines, host+" NCCL INFO "+e)
		}
		for c := range 2 * devs {
			lines = append(lines, fmt.Sprintf("%s NCCL INFO Channel %02d/0 : %d[90000] -> %d[1000] [send] via NET/Socket/%d", host, c, r, (r+1)%ranks, c%devs))
		}
	}
	return lines
}

// Any rank count over one or more hosts, any prefix: channels over three
// or more socket devices with NCCL_SOCKET_IFNAME unset are named first,
// above the TCP fallback; one or two devices, or the variable set, are
// not a cause.
func TestSocketSpreadAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(3613))
	for _, p := range causePrefixes(r) {
		for ranks := 2; ranks <= 9; ranks += 3 {
			for hosts := 1; hosts <= min(ranks, 3); hosts++ {
				for devs := 1; devs <= 8; devs++ {
					a := analyseText(prefixed(p, spreadJob(ranks, hosts, devs, nil)))
					f := flagOf(a, "nccl.socket-many-ifs")
					if devs < minSpreadIfs {
						if f != nil {
							t.Errorf("prefix %q, %d ranks on %d hosts, %d devices: flagged %s", p, ranks, hosts, devs, f.Evidence)
						}
						continue
					}
					if got := firstFail(a); got != "nccl.socket-many-ifs" {
						t.Errorf("prefix %q, %d ranks on %d hosts, %d devices: first fail %q (flags %v)", p, ranks, hosts, devs, got, a.Flags)
					}
					if f != nil && !strings.Contains(f.Evidence, fmt.Sprintf("NET/Socket/%d", devs-1)) {
						t.Errorf("evidence %q does not name device %d", f.Evidence, devs-1)
					}
				}
				set := spreadJob(ranks, hosts, 8, []string{"NCCL_SOCKET_IFNAME set by environment to bond0"})
				if f := flagOf(analyseText(prefixed(p, set)), "nccl.socket-many-ifs"); f != nil {
					t.Errorf("prefix %q: flagged a job with NCCL_SOCKET_IFNAME set: %s", p, f.Evidence)
				}
			}
		}
	}
}

// The socket list printed: the interfaces' names decide
// (nccl.socket-unroutable-if), not the count of devices.
func TestSocketSpreadNotWithList(t *testing.T) {
	lines := socketJob(4, 2, "[0]ens5:172.31.0.137<0> [1]ens6:172.31.1.137<0> [2]ens7:172.31.2.137<0>")
	for r := range 4 {
		lines = append(lines, fmt.Sprintf("ip-172-31-0-137:%d:1 [0] NCCL INFO Channel 01 : %d[1e0] -> %d[1e0] [send] via NET/Socket/%d", 14605+r, r, (r+1)%4, r%3))
	}
	if f := flagOf(analyseText(prefixed("", lines)), "nccl.socket-many-ifs"); f != nil {
		t.Errorf("flagged a job whose socket list names three routable interfaces: %s", f.Evidence)
	}
}
