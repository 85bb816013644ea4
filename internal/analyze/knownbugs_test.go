package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// asyncAddrLog is an NCCL_DEBUG=INFO log of ranks on hosts in the format
// of NVIDIA/nccl#957 and #846: NCCL's banner, then each rank's CUDA
// failure from file and NCCL's error-return trace after it.
func asyncAddrLog(ranks, hosts int, version, file, cudaErr string) []string {
	var out []string
	if version != "" {
		out = append(out, "NCCL version "+version+"+cuda12.1")
	}
	for r := range ranks {
		head := fmt.Sprintf("node%02d:%d:%d [%d]", r%hosts, 4000+r, 4100+r, r%8)
		out = append(out,
			fmt.Sprintf("%s %s:154 NCCL WARN Cuda failure %s", head, file, cudaErr),
			fmt.Sprintf("%s NCCL INFO init.cc:1093 -> 1", head))
	}
	return out
}

// asyncAddrTraceback is PyTorch's report of the same failure (field case
// 155): the release in the DistBackendError line, NCCL's last error quoted
// without its file.
func asyncAddrTraceback(version, cudaErr string) []string {
	return []string{
		"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version " + version,
		"ncclUnhandledCudaError: Call to CUDA function failed.",
		"Last error:",
		"Cuda failure " + cudaErr,
	}
}

// NCCL 2.18.1 to 2.18.5 with an invalid-argument CUDA failure from
// transport.cc, or quoted without a file, is the asynchronous address copy
// fixed in 2.18.6, ranked above the generic CUDA failure, for any rank and
// host count behind any prefix; another release, no release, another file
// or another CUDA error is not.
func TestAsyncAddrCopyAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(957))
	bugged := []string{"2.18.1", "2.18.3", "2.18.5"}
	for _, pre := range causePrefixes(r) {
		n, hosts := 1+r.Intn(32), 1+r.Intn(4)
		v := bugged[r.Intn(len(bugged))]
		for what, lines := range map[string][]string{
			"log, transport.cc":     asyncAddrLog(n, hosts, v, "transport.cc", "'invalid argument'"),
			"log, transport.cc, 1":  asyncAddrLog(n, hosts, v, "transport.cc", "1 'invalid argument'"),
			"traceback":             asyncAddrTraceback(v, "'invalid argument'"),
			"traceback with code 1": asyncAddrTraceback(v, "1 'invalid argument'"),
		} {
			res := analyseText(prefixed(pre, lines))
			if f := firstFail(res); f != "nccl.too-old" {
				t.Errorf("%s, NCCL %s, %d ranks on %d hosts behind %q: first %q (%+v)", what, v, n, hosts, pre, f, res.Flags)
			}
		}
		for what, lines := range map[string][]string{
			"2.17.1":           asyncAddrLog(n, hosts, "2.17.1", "transport.cc", "'invalid argument'"),
			"2.18.6":           asyncAddrLog(n, hosts, "2.18.6", "transport.cc", "'invalid argument'"),
			"2.19.3 traceback": asyncAddrTraceback("2.19.3", "'invalid argument'"),
			"no release":       asyncAddrLog(n, hosts, "", "transport.cc", "'invalid argument'"),
			"nvls.cc":          asyncAddrLog(n, hosts, v, "transport/nvls.cc", "'invalid argument'"),
			"enqueue.cc":       asyncAddrLog(n, hosts, v, "enqueue.cc", "1 'invalid argument'"),
			"out of memory":    asyncAddrLog(n, hosts, v, "transport.cc", "2 'out of memory'"),
			"traceback, oom":   asyncAddrTraceback(v, "'out of memory'"),
		} {
			if res := analyseText(prefixed(pre, lines)); hasFlag(res, "nccl.too-old") {
				t.Errorf("%s, %d ranks on %d hosts behind %q: flagged (%+v)", what, n, hosts, pre, res.Flags)
			}
		}
	}
}

func TestSourceFileBefore(t *testing.T) {
	for in, want := range map[string]string{
		"node2:242431:242479 [5] transport/nvls.cc:158 NCCL WARN ": "nvls.cc",
		"[1] enqueue.cc:1500 NCCL WARN ":                           "enqueue.cc",
		"gpu1:1:2 [0] transport.cc:154 NCCL WARN ":                 "transport.cc",
		"Last error: ":                           "",
		"":                                       "",
		"ERROR 03-28 21:38:23 ray_utils.py:44] ": "",
	} {
		if got := sourceFileBefore([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
