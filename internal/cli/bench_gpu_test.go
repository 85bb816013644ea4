package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
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
		{[]string{"collective", "--iters=x"}, `sparkrig: bench gpu collective: invalid argument "x" for "-n, --iters" flag: strconv.ParseInt: parsing "x": invalid syntax (see --help)`},
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

// bench gpu info's text reproduces the recorded H200 info text from the recorded JSON of
// the same machine and environment (two runs; nothing in them differs).
func TestWriteInfoRecordedH200(t *testing.T) {
	b, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		gpu.Info
		Python *gpu.PythonEnv `json:"python"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	render.GPUInfo(&got, infoReport(rec.Info, rec.Python), render.Options{})
	want, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.txt")
	if err != nil {
		t.Fatal(err)
	}
	v := string(fixture.Verbatim(want))
	if got.String() != v {
		t.Fatalf("info text:\n%s\nrecorded:\n%s", got.String(), v)
	}
}

func TestArchVerdict(t *testing.T) {
	torch211 := []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}
	for cc, want := range map[string]string{
		"9.0":  "covers sm_90",
		"12.1": "no sm_121 kernels: runs its sm_120 ones (binary compatible, not built for this GPU)",
		"7.0":  "no kernels for sm_70: CUDA operations will fail",
	} {
		if got := archVerdict(torch211, gpu.Device{Capability: cc}); got != want {
			t.Errorf("%s: %q, want %q", cc, got, want)
		}
	}
}

// A device-to-device copy on GB10 is set against the unified memory peak of
// the expectations file; discrete GPUs get no such line. No GB10 was at hand:
// the device and its 100 GB/s copy are stand-ins, not a measurement.
func TestMemoryPeakStandinGB10(t *testing.T) {
	w, ok := memoryPeak(gpu.Device{Name: "NVIDIA GB10", Integrated: true, Capability: "12.1"})
	if !ok || w.Value != 273 || w.Unit != "GB/s" || w.Source != "DGX Spark memory bandwidth ~273 GB/s peak (seed 000)" {
		t.Errorf("GB10: %+v %v", w, ok)
	}
	if _, ok := memoryPeak(gpu.Device{Name: "NVIDIA H200", Capability: "9.0"}); ok {
		t.Error("H200 got a unified memory wire")
	}
	copies := []gpu.CopyResult{{Name: "d2d", Src: 0, Dst: 0, Bytes: 1 << 30, Iters: 20, GBs: 100}, {Name: "h2d", Src: -1, Dst: 0, Bytes: 1 << 30, Iters: 20, GBs: 50}}
	gb10 := func(int) (report.Peak, bool) {
		return memoryPeak(gpu.Device{Name: "NVIDIA GB10", Integrated: true})
	}
	for width, want := range map[int]string{
		130: "d2d       gpu0->gpu0       1G     20     100.00   DRAM traffic 200 GB/s = 73% of the 273 GB/s GB10 LPDDR5X unified memory peak\n" +
			"h2d       host->gpu0       1G     20      50.00\n",
		80: "d2d       gpu0->gpu0       1G     20     100.00\n" +
			"    DRAM traffic 200 GB/s = 73% of the 273 GB/s GB10 LPDDR5X unified memory\n" +
			"      peak\n" +
			"h2d       host->gpu0       1G     20      50.00\n",
	} {
		var b bytes.Buffer
		render.GPUCopies(&b, gpu.CopyReport(copies, gb10), render.Options{Width: width})
		if !strings.HasSuffix(b.String(), want) {
			t.Errorf("copies at %d columns:\n%s\nwant\n%s", width, b.String(), want)
		}
	}
}
