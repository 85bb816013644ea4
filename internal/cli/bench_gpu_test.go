package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/gpu"
)

// Bad flags are refused with one line and exit 3 before any library is
// loaded, so these run on machines without a GPU.
func TestBenchGPUFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"collective", "--op", "allreduce,foo"},
			`sparkrig: bench gpu collective: invalid argument "allreduce,foo" for "--op" flag: unknown "foo" (want all_reduce, all_gather, reduce_scatter, broadcast, alltoall, sendrecv) (see --help)`},
		{[]string{"collective", "-b", "2G", "-e", "1G"},
			"sparkrig: bench gpu collective: sizes: need 0 < min (2147483648) <= max (1073741824)"},
		{[]string{"collective", "-e", "8X"},
			`sparkrig: bench gpu collective: size "8X": want a number with an optional K, M, G or T suffix`},
		{[]string{"collective", "-d", "int8"},
			`sparkrig: bench gpu collective: unknown data type "int8" (want float, half or bfloat16)`},
		{[]string{"collective", "--nranks", "2", "--rank", "1"},
			"sparkrig: bench gpu collective: multi-process run: need --nranks >= 2, 0 <= --rank < --nranks and --rendezvous HOST:PORT"},
		{[]string{"collective", "-n", "0"},
			"sparkrig: bench gpu collective: iterations 0, warm-up 5: need at least 1 iteration"},
		{[]string{"collective", "--format", "yaml"}, `sparkrig: bench gpu collective: unknown --format "yaml" (want one of text, json)`},
		{[]string{"memory", "--mem-fraction", "1.5"}, "sparkrig: bench gpu memory: --mem-fraction 1.5: want more than 0 and at most 0.9"},
		{[]string{"memory", "--size", "0"}, `sparkrig: bench gpu memory: --size "0", --iters 20: need a positive size and iteration count`},
		{[]string{"gemm", "--dtype", "fp32"}, "sparkrig: bench gpu gemm: gemm data type float: want bf16 or fp16"},
		{[]string{"gemm", "--m", "0"}, "sparkrig: bench gpu gemm: gemm shape 0x8192x8192: every dimension must be positive"},
		{[]string{"gemm", "--dtype", "tf32"}, `sparkrig: bench gpu gemm: unknown data type "tf32" (want float, half or bfloat16)`},
		{[]string{"info", "extra"}, `sparkrig: bench gpu info: unknown command "extra" for "sparkrig bench gpu info" (see --help)`},
		{[]string{"collective", "--iters=x"}, `sparkrig: bench gpu collective: invalid argument "x" for "-n, --iters" flag: "x": invalid syntax (see --help)`},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"bench", "gpu"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
		if code != ExitUnknown || strings.TrimSpace(stderr.String()) != tt.want {
			t.Errorf("%v: exit %d, stderr %q\nwant exit 3, %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// Without libcuda each command says "no CUDA driver found", naming itself,
// and exits 3.
func TestBenchGPUNoDriver(t *testing.T) {
	for _, d := range gpu.StandardDirs() {
		if _, err := os.Stat(d + "/libcuda.so.1"); err == nil {
			t.Skipf("this machine has a CUDA driver (%s)", d)
		}
	}
	t.Setenv("LD_LIBRARY_PATH", t.TempDir())
	t.Setenv("CUDA_HOME", "")
	for _, sub := range []string{"info", "collective", "memory", "gemm"} {
		var stdout, stderr bytes.Buffer
		code := Main([]string{"bench", "gpu", sub}, strings.NewReader(""), &stdout, &stderr)
		if code != ExitUnknown || !strings.HasPrefix(stderr.String(), "sparkrig: bench gpu "+sub+": no CUDA driver found (libcuda.so.1/libcuda.so not found; searched ") {
			t.Errorf("%s: exit %d, stderr %q", sub, code, stderr.String())
		}
		if strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || stdout.Len() != 0 {
			t.Errorf("%s: want one line on stderr and nothing on stdout; stdout %q", sub, stdout.String())
		}
	}
}
