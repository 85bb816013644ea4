package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"
)

// The result table of `bench gpu gemm --python`, as recorded on an H200:
// the same numbers give the same lines.
func TestGPUGEMMRecordedH200(t *testing.T) {
	rec := string(fixture.ReadVerbatim(t, "../../testdata/gpu/sparkrig.bench-gpu-gemm.bf16-8192.python.h200x2.txt"))
	i := strings.Index(rec, "tool ")
	if i < 0 {
		t.Fatal("no result table in the recording")
	}
	runs := []report.GPUGEMM{
		{Tool: "sparkrig (cuBLAS 13.1.0)", DType: "bfloat16", M: 8192, N: 8192, K: 8192, Iters: 6072, TFLOPS: 661.8, Best: 683.3},
		{Tool: "torch 2.11.0+cu130", DType: "bfloat16", M: 8192, N: 8192, K: 8192, Iters: 6006, TFLOPS: 659.0, Best: 682.8},
	}
	var out bytes.Buffer
	if err := Text(&out, &report.Report{Command: "bench gpu gemm", GPU: &report.GPU{GEMM: runs}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), rec[i:]; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The state gate's answer closes bench gpu gemm and collective's text.
func TestGPUValidityLines(t *testing.T) {
	for _, c := range []struct {
		v    report.Validity
		want string
	}{
		{report.Validity{}, "state: clocks, power and RoCE MTU not sampled (no nvidia-smi): validity unchecked\n"},
		{report.Validity{Sampled: true, Valid: true}, "state: valid (clocks, power and RoCE MTU sampled during the run)\n"},
		{report.Validity{Sampled: true, Reasons: []string{"spark2 GPU 0 at 890 MHz under 96% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)"}},
			"state: INVALID, measured in a bad state:\n  spark2 GPU 0 at 890 MHz under 96% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)\n"},
	} {
		var out bytes.Buffer
		if err := Text(&out, &report.Report{GPU: &report.GPU{Validity: &c.v}}, Options{}); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%+v:\n%q\nwant\n%q", c.v, out.String(), c.want)
		}
	}
}
