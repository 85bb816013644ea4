package analyze

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// testCUDACase is nccl-tests' CUDACHECK failing (src/common.h: "%s: Test
// CUDA failure %s:%d '%s'", then main's "Test failure" lines; field case
// 219, NVIDIA/nccl#2418) with a CUDA error no other signature names.
var testCUDACase = docSignatureCase{"error.nccl-tests-cuda-failure", func(r *rand.Rand, host string, rank, dev int) []string {
	why := []string{"an illegal memory access was encountered", "unspecified launch failure", "misaligned address", "an illegal instruction was encountered"}[r.Intn(4)]
	return []string{
		fmt.Sprintf("%s: Test CUDA failure common.cu:%d '%s'", host, 400+r.Intn(900), why),
		fmt.Sprintf(" .. %s pid %d: Test failure common.cu:%d", host, 3000+rank, 700+r.Intn(400)),
	}
}}

// Any rank count, host count, share of failing ranks and prefix: the line
// ranks first, in a job's lines and alone (a paste of the failure only).
func TestTestCUDAFailureAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2418))
	firstAnyRanksAnyPrefix(t, r, []docSignatureCase{testCUDACase}, 4)
	for _, pre := range causePrefixes(r) {
		lines := append([]string{"      524288        131072     float     sum      -1"}, testCUDACase.line(r, "node001", r.Intn(8), 0)...)
		if got := topCause(analyseText(prefixed(pre, lines))); got != testCUDACase.id {
			t.Errorf("%q behind %q: first %q", lines, pre, got)
		}
	}
}

// The CUDA errors another rule names rank that one first: out of memory
// (the test's size, or the CUDA OOM signature), an invalid device ordinal,
// a busy device.
func TestTestCUDAFailureBelowNamedErrors(t *testing.T) {
	for why, named := range map[string][]string{
		"out of memory":          {"error.cuda-oom", "nccl-tests.size-exceeds-gpu-memory"},
		"invalid device ordinal": {"error.nccl-tests-too-few-gpus"},
		"CUDA-capable device(s) is/are busy or unavailable": {"error.cuda-device-busy"},
	} {
		a := analyseText(fmt.Sprintf("node001: Test CUDA failure common.cu:1009 '%s'\n .. node001 pid 4242: Test failure common.cu:1189\n", why))
		if got := topCause(a); !slices.Contains(named, got) {
			t.Errorf("%q: first %q, want one of %q (%s)", why, got, named, flagIDs(a))
		}
	}
}
