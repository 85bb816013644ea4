package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// testOps are nccl-tests' collective tests, by source file.
var testOps = []string{"all_reduce", "all_gather", "alltoall", "broadcast", "reduce_scatter", "sendrecv", "hypercube", "reduce", "gather", "scatter"}

// testOOMLines is an nccl-tests run's failure from a CUDA out-of-memory
// on the GPUs of host, in the forms nccl-tests and NCCL print it
// (nccl-tests src/common.h: "%s: Test CUDA failure %s:%d '%s'" and
// "%s: Test NCCL failure %s:%d '%s / %s'"; NCCL src/include/cudawrap.h
// "Cuda failure %d '%s'" from 2.19, checks.h "Cuda failure '%s'" before,
// then "Failed to CUDA calloc" of alloc.h in some releases).
func testOOMLines(r *rand.Rand, host string, rank, dev int) []string {
	op := testOps[r.Intn(len(testOps))]
	failure := fmt.Sprintf("%s: Test NCCL failure %s.cu:%d 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '", host, op, 50+r.Intn(60))
	p := ncclPrefix(host, rank, dev)
	switch r.Intn(4) {
	case 0: // nccl-tests' own buffers
		return []string{fmt.Sprintf("%s: Test CUDA failure common.cu:%d 'out of memory'", host, 800+r.Intn(300))}
	case 1:
		return []string{p + fmt.Sprintf(" enqueue.cc:%d NCCL WARN Cuda failure 2 'out of memory'", 1000+r.Intn(900)), failure,
			fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 400+r.Intn(90000), 300+r.Intn(800))}
	case 2:
		return []string{failure, p + fmt.Sprintf(" transport/p2p.cc:%d NCCL WARN Cuda failure 'out of memory'", 100+r.Intn(800))}
	default: // NCCL's allocation helper after the CUDA failure it checks
		return []string{p + fmt.Sprintf(" include/alloc.h:%d NCCL WARN Cuda failure 'out of memory'", 40+r.Intn(200)),
			p + fmt.Sprintf(" include/alloc.h:%d NCCL WARN Failed to CUDA calloc %d bytes", 40+r.Intn(200), 1<<(20+r.Intn(10))), failure}
	}
}

// An nccl-tests run that fails on a CUDA out-of-memory names the test's
// sizes first, for any rank and host count, share of ranks that fail,
// collective, message form and prefix.
func TestTestSizeOOMAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(690)), []docSignatureCase{{"nccl-tests.size-exceeds-gpu-memory", testOOMLines}}, 3)
}

// The lines alone (no NCCL startup) name it too.
func TestTestSizeOOMLinesAlone(t *testing.T) {
	r := rand.New(rand.NewSource(691))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			if got := topCause(analyseText(prefixed(pre, testOOMLines(r, "worker-0", 0, 0)))); got != "nccl-tests.size-exceeds-gpu-memory" {
				t.Errorf("behind %q: first %q", pre, got)
			}
		}
	}
}

// An application's out-of-memory (no nccl-tests line) stays NCCL's
// out-of-memory signature, now also in NCCL 2.19's form with the error's
// number; an nccl-tests failure from another CUDA error does not raise
// the test's sizes.
func TestTestSizeOOMDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, c := range map[string]struct {
		lines []string
		first string
	}{
		"a framework's OOM, NCCL 2.19 form": {[]string{p + " enqueue.cc:1451 NCCL WARN Cuda failure 2 'out of memory'",
			"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5"}, "error.cuda-oom"},
		"a framework's OOM, older form": {[]string{p + " enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'"}, "error.cuda-oom"},
		"nccl-tests and another CUDA error": {[]string{p + " transport.cc:154 NCCL WARN Cuda failure 1 'invalid argument'",
			"node001: Test NCCL failure all_reduce.cu:58 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '"}, "error.cuda-failure"},
		"nccl-tests and the host's memory": {[]string{"node001: Test NCCL failure alltoall.cu:62 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '",
			p + " misc/shmutils.cc:80 NCCL WARN Error: failed to extend /dev/shm/nccl-x to 9637892 bytes, error: No space left on device"}, ""},
		"out of memory said by something else": {[]string{"node001: Test NCCL failure alltoall.cu:62 'internal error / '",
			"kernel: Out of memory: Killed process 4242 (alltoall_perf) total-vm:1000kB"}, ""},
	} {
		a := analyseText(prefixed("", c.lines))
		if hasFlag(a, "nccl-tests.size-exceeds-gpu-memory") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
		if c.first != "" && topCause(a) != c.first {
			t.Errorf("%s: first %q, want %q (%s)", name, topCause(a), c.first, flagIDs(a))
		}
	}
}

// The nccl-tests header's largest size and the GPU's name join the
// evidence, and a GPU whose memory is less than the test's buffers is
// said to be.
func TestTestSizeOOMHeaderEvidence(t *testing.T) {
	r := rand.New(rand.NewSource(692))
	for _, pre := range causePrefixes(r) {
		gb := []int{16, 24, 40, 80}[r.Intn(4)]
		maxBytes := int64(1) << (33 + r.Intn(3))
		lines := append([]string{
			fmt.Sprintf("# nThread 1 nGpus 1 minBytes 8 maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", maxBytes),
			"#",
			"# Using devices",
			fmt.Sprintf("#  Rank  0 Group  0 Pid    411 on multi-node-alltoall-perf-worker-0 device  0 [0x10] NVIDIA A100-SXM4-%dGB", gb),
		}, testOOMLines(r, "multi-node-alltoall-perf-worker-0", 0, 0)...)
		a := analyseText(prefixed(pre, lines))
		var ev string
		for _, f := range a.Flags {
			if f.ID == "nccl-tests.size-exceeds-gpu-memory" {
				ev = f.Evidence
			}
		}
		want := fmt.Sprintf("header maxBytes %d", maxBytes)
		if !strings.Contains(ev, want) || !strings.Contains(ev, fmt.Sprintf("A100-SXM4-%dGB", gb)) {
			t.Errorf("behind %q: evidence %q lacks %q or the GPU (%s)", pre, ev, want, flagIDs(a))
		}
		if less := 3*maxBytes > int64(gb)<<30; less != strings.Contains(ev, "less than the test's buffers") {
			t.Errorf("%d GB, maxBytes %d behind %q: evidence %q", gb, maxBytes, pre, ev)
		}
	}
}

// No fixture but the field paste it was read from raises it.
func TestTestSizeOOMNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl-tests.size-exceeds-gpu-memory"}, map[string]bool{
		"field/train/183_eks_p4_alltoall_maxbytes_cuda_oom.txt": true,
	})
}
