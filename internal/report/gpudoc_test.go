package report

import (
	"os"
	"testing"
)

func TestDecodeGPUOutput(t *testing.T) {
	mem, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-memory.d2d-peer.h200x2.json")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := DecodeGPUOutput(mem)
	if !ok || r.Command != "bench gpu memory" || len(r.GPU.Copies) != 4 || r.GPU.Copies[2].GBs != 394.8221335933958 || r.GPU.Copies[2].Size != "256M" || r.Status != VerdictOK {
		t.Errorf("memory: %v %+v", ok, r)
	}
	info, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.json")
	if err != nil {
		t.Fatal(err)
	}
	r, ok = DecodeGPUOutput(info)
	if !ok || r.Command != "bench gpu info" || r.GPU.Info.NCCL != "2.28.9" || len(r.GPU.Info.Devices) != 2 || r.GPU.Info.Devices[1].SMArch != "sm_90" || r.GPU.Info.Devices[0].MemTotal != "139.8G" {
		t.Errorf("info: %v %+v", ok, r)
	}
	for _, other := range []string{`[]`, `[{"name":"x"}]`, `[{"gbs":1,"method":"m"}]`, `{"tool":"sparkrig","devices":[],"libraries":{}}`, `{"start":{"test_start":{}}}`, `[1,2]`, `{"libraries":{},"devices":[]}`} {
		if _, ok := DecodeGPUOutput([]byte(other)); ok {
			t.Errorf("%s read as a GPU output", other)
		}
	}
}

func FuzzDecodeGPUOutput(f *testing.F) {
	for _, p := range []string{"../../testdata/gpu/sparkrig.bench-gpu-memory.d2d-peer.h200x2.json", "../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := DecodeGPUOutput(data)
		if ok && (r.GPU == nil || r.Tool != "sparkrig" || len(r.GPU.Copies) == 0 && r.GPU.Info == nil) {
			t.Fatalf("decoded without a GPU section: %+v", r)
		}
	})
}
