package analyze

import (
	"fmt"
	"math/rand"
	"slices"
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

// memPoolLog is ranks failing NCCL's memory pool creation in the format of
// field case 142 (NVIDIA/nccl#2101): the WARN from init.cc and NCCL's
// error-return trace, with the banner of version when one is given.
func memPoolLog(ranks int, version string, line int, cudaErr string) []string {
	var out []string
	if version != "" {
		out = append(out, "NCCL version "+version+"+cuda12.8")
	}
	for r := range ranks {
		head := fmt.Sprintf("pod-%d:%d:%d [%d]", r/8, 500+r, 500+r, r%8)
		out = append(out,
			fmt.Sprintf("%s init.cc:%d NCCL WARN Cuda failure %s", head, line, cudaErr),
			fmt.Sprintf("%s NCCL INFO init.cc:1437 -> 1", head))
	}
	return out
}

// cudaMemPoolCreate refused with 'operation not supported' is named for
// every release's line of it (with the release printed, or without where
// the line holds no other CUDA call in any release), any rank count,
// either CUDACHECK form, behind any prefix; another line, file, error or
// a release the table does not hold is not.
func TestMemPoolUnsupportedAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2101))
	versions := make([]string, 0, len(memPoolLine))
	for v := range memPoolLine {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for _, pre := range causePrefixes(r) {
		n := 1 + r.Intn(16)
		v := versions[r.Intn(len(versions))]
		line := memPoolLine[v]
		e := []string{"'operation not supported'", "801 'operation not supported'"}[r.Intn(2)]
		fire := map[string][]string{"release " + v: memPoolLog(n, v, line, e)}
		if memPoolOnly[line] {
			fire["no release"] = memPoolLog(n, "", line, e)
		}
		for what, lines := range fire {
			if f := firstFail(analyseText(prefixed(pre, lines))); f != "nccl.mempool-unsupported" {
				t.Errorf("%s, line %d, %d ranks behind %q: first %q", what, line, n, pre, f)
			}
		}
		for what, lines := range map[string][]string{
			"another line":      memPoolLog(n, v, line+1, e),
			"417, no release":   memPoolLog(n, "", 417, e),
			"2.22.3":            memPoolLog(n, "2.22.3", 426, e),
			"2.31.0":            memPoolLog(n, "2.31.0", 564, e),
			"out of memory":     memPoolLog(n, v, line, "2 'out of memory'"),
			"enqueue.cc":        {fmt.Sprintf("pod:1:1 [0] enqueue.cc:%d NCCL WARN Cuda failure %s", line, e)},
			"release, 426 else": memPoolLog(n, "2.30.7", 426, e),
		} {
			if res := analyseText(prefixed(pre, lines)); hasFlag(res, "nccl.mempool-unsupported") {
				t.Errorf("%s behind %q: flagged (%+v)", what, pre, res.Flags)
			}
		}
	}
}
