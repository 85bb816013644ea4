package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestGPUPipelinesWithoutADriver: with no libcuda to be found, every GPU
// pipeline stops before anything runs, saying "no CUDA driver found" and
// where it looked, and returns no report.
func TestGPUPipelinesWithoutADriver(t *testing.T) {
	for _, d := range gpu.StandardDirs() {
		if _, err := os.Stat(d + "/libcuda.so.1"); err == nil {
			t.Skipf("this machine has a CUDA driver (%s)", d)
		}
	}
	empty := t.TempDir()
	o := GPUOptions{MemFraction: 0.5, Getenv: func(k string) string {
		if k == "LD_LIBRARY_PATH" {
			return empty
		}
		return ""
	}}
	ctx := context.Background()
	for name, run := range map[string]func() (*report.Report, error){
		"info": func() (*report.Report, error) { return GPUInfo(ctx, o) },
		"collective": func() (*report.Report, error) {
			return RunCollective(ctx, CollectiveOptions{GPUOptions: o, Devices: "all"})
		},
		"memory": func() (*report.Report, error) { return RunMemory(ctx, MemoryOptions{GPUOptions: o, Devices: "all"}) },
		"gemm":   func() (*report.Report, error) { return RunGEMM(ctx, GEMMOptions{GPUOptions: o}) },
	} {
		r, err := run()
		if err == nil || !strings.HasPrefix(err.Error(), "no CUDA driver found (libcuda.so.1/libcuda.so not found; searched ") ||
			!strings.Contains(err.Error(), empty) {
			t.Errorf("%s: err %v", name, err)
		}
		if r != nil {
			t.Errorf("%s: a report without a driver: %+v", name, r)
		}
	}
}
