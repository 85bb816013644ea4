package bench

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
	render.GPUInfo(&got, InfoReport(rec.Info, rec.Python), render.Options{})
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
		if got := ArchVerdict(torch211, gpu.Device{Capability: cc}); got != want {
			t.Errorf("%s: %q, want %q", cc, got, want)
		}
	}
}

// A device-to-device copy on GB10 is set against the unified memory peak of
// the expectations file; discrete GPUs get no such line. No GB10 was at hand:
// the device and its 100 GB/s copy are stand-ins, not a measurement.
func TestMemoryPeakStandinGB10(t *testing.T) {
	w, ok := MemoryPeak(gpu.Device{Name: "NVIDIA GB10", Integrated: true, Capability: "12.1"})
	if !ok || w.Value != 273 || w.Unit != "GB/s" || w.Source != "DGX Spark memory bandwidth ~273 GB/s peak (seed 000)" {
		t.Errorf("GB10: %+v %v", w, ok)
	}
	if _, ok := MemoryPeak(gpu.Device{Name: "NVIDIA H200", Capability: "9.0"}); ok {
		t.Error("H200 got a unified memory wire")
	}
	copies := []gpu.CopyResult{{Name: "d2d", Src: 0, Dst: 0, Bytes: 1 << 30, Iters: 20, GBs: 100}, {Name: "h2d", Src: -1, Dst: 0, Bytes: 1 << 30, Iters: 20, GBs: 50}}
	gb10 := func(int) (report.Peak, bool) {
		return MemoryPeak(gpu.Device{Name: "NVIDIA GB10", Integrated: true})
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
