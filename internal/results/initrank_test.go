package results

import (
	"bytes"
	"testing"
)

// Lines of two real NCCL logs (copied from the field corpus):
// SOURCE: https://github.com/NVIDIA/TensorRT-LLM/issues/9263 (two ranks of one communicator on one GPU)
// SOURCE: https://github.com/NVIDIA/nccl/issues/1000 (NCCL's traces out of a failed bootstrap)
var (
	sharedGPULog = []byte(`test-trt-prefill-worker-0-0:42:982 [0] NCCL INFO Using network Socket
test-trt-prefill-worker-0-0:42:982 [0] NCCL INFO ncclCommInitRank comm 0x7a12257c8780 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xaa9becea043c4e6c - Init START
test-trt-prefill-worker-0-0:43:43 [0] NCCL INFO NET/IB : No device found.
test-trt-prefill-worker-0-0:43:43 [0] NCCL INFO ncclCommInitRank comm 0x397e3800 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xaa9becea043c4e6c - Init START
`)
	bootstrapFailLog = []byte(`dso-s1-r1-a100-03:2332:2691 [4] NCCL INFO Using network IBext
dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO misc/socket.cc:567 -> 2
dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO misc/socket.cc:618 -> 2
dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO bootstrap.cc:270 -> 2
`)
)

func observeLines(b []byte) *NCCLLog {
	var l NCCLLog
	for _, line := range bytes.Split(b, []byte("\n")) {
		l.Observe(line)
	}
	l.Finish()
	return &l
}

func TestInitStartSharedGPU(t *testing.T) {
	g := observeLines(sharedGPULog).SharedGPU
	if g == nil {
		t.Fatal("no shared GPU read")
	}
	if g.Host != "test-trt-prefill-worker-0-0" || g.BusID != "100000" || g.CommID != "0xaa9becea043c4e6c" || g.Ranks != [2]int{0, 1} {
		t.Errorf("%+v", g)
	}
	// the same ranks on other hosts, or in other communicators, share nothing
	other := bytes.Replace(sharedGPULog, []byte("worker-0-0:43:43"), []byte("worker-0-1:43:43"), -1)
	if g := observeLines(other).SharedGPU; g != nil {
		t.Errorf("two hosts: %+v", g)
	}
	split := bytes.Replace(sharedGPULog, []byte("rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xaa9b"), []byte("rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xbb9b"), 1)
	if g := observeLines(split).SharedGPU; g != nil {
		t.Errorf("two communicators: %+v", g)
	}
	// NCCL 2.30 puts "[Rank r] <function>" before "comm"
	v230 := bytes.Replace(sharedGPULog, []byte("NCCL INFO ncclCommInitRank comm"), []byte("NCCL INFO [Rank 9] ncclCommInitRankConfig comm"), -1)
	if g := observeLines(v230).SharedGPU; g == nil || g.Ranks != [2]int{0, 1} {
		t.Errorf("2.30 format: %+v", g)
	}
}

func TestBootstrapFailTrace(t *testing.T) {
	if got := observeLines(bootstrapFailLog).BootstrapFail; got != "bootstrap.cc:270 -> 2" {
		t.Errorf("BootstrapFail %q", got)
	}
	ok := bytes.Replace(bootstrapFailLog, []byte("bootstrap.cc:270 -> 2"), []byte("bootstrap.cc:270 -> 0"), 1)
	if got := observeLines(ok).BootstrapFail; got != "" {
		t.Errorf("a zero result read as a failure: %q", got)
	}
}
