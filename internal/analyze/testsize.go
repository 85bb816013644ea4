package analyze

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightTestSize ranks the reading above the bare out-of-memory signature
// it explains (error.cuda-oom, 1.2, and up to 0.05 more for repeated
// lines).
const weightTestSize = 1.3

// gpuMemGB is the memory a GPU's name gives ("NVIDIA A100-SXM4-40GB",
// "NVIDIA H100 80GB HBM3").
var gpuMemGB = regexp.MustCompile(`(\d{2,3}) ?GB\b`)

// testFailFile is the source file of nccl-tests' failure line: the
// collective's own test ("alltoall.cu") or the common driver.
var testFailFile = regexp.MustCompile(`Test (?:NCCL|CUDA) failure (?:\S*/)?([a-z_]+)\.cu:\d+`)

// testSizeOOM: an nccl-tests run failed and the CUDA failure behind it is
// out of memory. nccl-tests takes, on every GPU it drives, a send and a
// receive buffer of the largest size asked for (-e, maxBytes) and an
// expected-result buffer when it checks data (-c 1, the default)
// (src/common.cu, AllocateBuffs), before the first size runs; NCCL then
// adds its own buffers on first use of each connection (NCCL_BUFFSIZE,
// 4 MiB by default, per channel and peer, and an alltoall or sendrecv
// connects to every peer). The test's memory is its parameters: a run
// that does not fit the GPU is the test asked too much of it, not a
// fault of the system. For: an nccl-tests failure line ("Test NCCL
// failure", "Test CUDA failure": the tool's own macros) and an
// out-of-memory CUDA failure. Against: no nccl-tests line (an
// application's out-of-memory is error.cuda-oom's), no out-of-memory
// line (another CUDA failure).
func (a *analysis) testSizeOOM(c cudaFacts) {
	if c.testFailure == "" || c.oom == "" {
		return
	}
	op := "the test"
	if m := testFailFile.FindStringSubmatch(c.testFailure); m != nil && m[1] != "common" {
		op = m[1] + "_perf"
	}
	ev := fmt.Sprintf("%q; %q", c.testFailure, c.oom)
	if c.maxBytes > 0 {
		ev += fmt.Sprintf("; header maxBytes %d (%s): up to %s of test buffers per GPU", c.maxBytes, results.HumanSize(c.maxBytes), results.HumanSize(3*c.maxBytes))
	}
	if c.gpu != "" {
		ev += "; GPU " + c.gpu
		if m := gpuMemGB.FindStringSubmatch(c.gpu); m != nil && c.maxBytes > 0 {
			if gb, err := strconv.ParseInt(m[1], 10, 64); err == nil && 3*c.maxBytes > gb<<30 {
				ev += fmt.Sprintf(" (%d GB: less than the test's buffers)", gb)
			}
		}
	}
	a.cause(weightTestSize, report.Fail, "nccl-tests.size-exceeds-gpu-memory",
		fmt.Sprintf("%s ran out of GPU memory: nccl-tests takes, on every GPU, a send and a receive buffer of its largest size (-e) and an expected-result buffer when it checks data (the default), and NCCL adds buffers of NCCL_BUFFSIZE per channel and peer on first use (an alltoall connects to every peer); the sizes asked for do not fit this GPU, the system is not at fault", op),
		ev,
		"run again with a smaller largest size (-e: about a third of the GPU's free memory at most, less for alltoall on many ranks) and NCCL_BUFFSIZE left at its default; check with nvidia-smi that no other process holds GPU memory",
		"https://github.com/NVIDIA/nccl-tests/blob/master/src/common.cu (AllocateBuffs: sendbuff and recvbuff of the largest size, expected when datacheck; CUDACHECK and NCCLCHECK print \"Test CUDA failure\" and \"Test NCCL failure\", src/common.h); NVIDIA/nccl src/include/cudawrap.h (WARN \"Cuda failure %d '%s'\"); https://github.com/aws/aws-k8s-tester/issues/690 (alltoall with a 16G largest size and an 8 MiB NCCL_BUFFSIZE out of memory on 40 GB GPUs; default sizes fixed it)")
}
