package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// customARCase is what vLLM's custom all-reduce (and SGLang, which builds
// it) prints when cudaIpcOpenMemHandle with cudaIpcMemLazyEnablePeerAccess
// fails on GPUs without peer access: csrc/custom_all_reduce.cuh's CUDACHECK,
// "Failed: Cuda error %s:%d '%s'" with the build's __FILE__ (field case 237,
// sgl-project/sglang#552), alone or with the worker's tag and PyTorch's
// warnings after the process exits.
var customARCase = docSignatureCase{"error.custom-allreduce-no-peer-access", func(r *rand.Rand, host string, rank, dev int) []string {
	file := []string{
		"/home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh",
		"/workspace/vllm/csrc/custom_all_reduce.cuh",
		"csrc/custom_all_reduce.cuh",
		"/sgl-workspace/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh",
	}[r.Intn(4)]
	line := fmt.Sprintf("Failed: Cuda error %s:%d 'peer access is not supported between these two devices'", file, 200+r.Intn(200))
	switch r.Intn(3) {
	case 0:
		return []string{line}
	case 1: // a Ray worker's tag
		return []string{fmt.Sprintf("(RayWorkerWrapper pid=%d, ip=10.0.0.%d) %s", 4000+rank, 2+r.Intn(200), line)}
	default:
		return []string{line, fmt.Sprintf("[rank%d]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]", rank)}
	}
}}

// Any rank count, host count, share of failing ranks and prefix: the line
// ranks its cause first, in a job's lines and alone.
func TestCustomAllReduceNoPeerAccessAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(552))
	firstAnyRanksAnyPrefix(t, r, []docSignatureCase{customARCase}, 4)
	for _, pre := range causePrefixes(r) {
		for range 4 {
			lines := customARCase.line(r, "node001", r.Intn(8), 0)
			if got := topCause(analyseText(prefixed(pre, lines))); got != customARCase.id {
				t.Errorf("%q behind %q: first %q", lines, pre, got)
			}
		}
	}
}

// What it is not: NCCL's own shared-memory transport failing with the same
// CUDA error (a driver's cuMem host allocation, NVIDIA/nccl#1838, or a
// worker that sees one GPU), another CUDA error of the custom all-reduce,
// NCCL's peer-access fallback (an INFO line).
func TestCustomAllReduceNoPeerAccessMustNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, lines := range map[string][]string{
		"NCCL's shm transport":        {p + " transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'"},
		"a PyTorch CUDA error":        {"RuntimeError: CUDA error: peer access is not supported between these two devices"},
		"another custom AR error":     {"Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'invalid argument'"},
		"NCCL's peer access fallback": {p + " NCCL INFO init.cc:1070 -> cudaDeviceEnablePeerAccess returned (0x2c0)"},
	} {
		if a := analyseText(prefixed("", lines)); hasFlag(a, customARCase.id) {
			t.Errorf("%s: %s raised (%s)", name, customARCase.id, flagIDs(a))
		}
	}
}

// No fixture but the field paste it was read from raises it.
func TestCustomAllReduceNoPeerAccessNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{customARCase.id}, map[string]bool{
		"field/train/237_sglang_2xT4_custom_allreduce_peer_access_not_supported.txt": true,
	})
}
