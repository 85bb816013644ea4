package gpu

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
)

func TestParseDType(t *testing.T) {
	for in, want := range map[string]string{"bf16": "bfloat16", "fp16": "half", "float": "float", "fp32": "float", "half": "half"} {
		got, err := ParseDType(in)
		if err != nil || got.Name != want {
			t.Errorf("ParseDType(%q) = %q, %v; want %q", in, got.Name, err, want)
		}
	}
	if _, err := ParseDType("int8"); err == nil {
		t.Error("int8 accepted")
	}
}

func TestVersions(t *testing.T) {
	for v, want := range map[int]string{22803: "2.28.3", 22809: "2.28.9", 2708: "2.7.8", 0: ""} {
		if got := FormatNCCLVersion(v); got != want {
			t.Errorf("FormatNCCLVersion(%d) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[int]string{13000: "13.0", 12080: "12.8", 13010: "13.1"} {
		if got := FormatCUDAVersion(v); got != want {
			t.Errorf("FormatCUDAVersion(%d) = %q, want %q", v, got, want)
		}
	}
	for cc, want := range map[string]string{"9.0": "sm_90", "12.1": "sm_121", "10.0": "sm_100"} {
		if got := (Device{Capability: cc}).SMArch(); got != want {
			t.Errorf("SMArch(%s) = %s, want %s", cc, got, want)
		}
	}
}

func TestMemCap(t *testing.T) {
	avail := facts.ParseMeminfo(readVerbatim(t, "testdata/proc-meminfo.debian12-x86_64.txt"))["MemAvailable"]
	if avail != 24012636*1024 {
		t.Fatalf("MemAvailable = %d", avail)
	}
	// H200 as recorded (testdata/gpu info): 146052224 KiB free; the refusal
	// text is the one recorded in sparkrig.bench-gpu-collective.cap-refusal.h200x2.txt.
	h200 := Device{Index: 0, MemFreeBytes: 146052224 << 10}
	c := NewMemCap(h200, avail, 0.5, 2)
	if c.Bytes != 146052224<<9 {
		t.Fatalf("discrete GPU cap = %d, want half the free memory", c.Bytes)
	}
	if err := c.Allow("a sweep up to 8G", 16<<30); err != nil {
		t.Fatalf("16 GiB on H200 refused: %v", err)
	}
	err := c.Allow("a sweep up to 64G (send + receive buffers)", 128<<30)
	want := "a sweep up to 64G (send + receive buffers) needs 128G per GPU, above the cap of 69.6G (50% of GPU 0's free memory 139.3G); lower the size or raise --mem-fraction"
	if err == nil || err.Error() != want {
		t.Fatalf("refusal:\n got %v\nwant %s", err, want)
	}
	// Unified memory (GB10): the cap comes from MemAvailable, not cudaMemGetInfo.
	gb10 := Device{Integrated: true, MemFreeBytes: 1 << 40}
	if c := NewMemCap(gb10, avail, 0.5, 1); c.Bytes != avail/2 || c.Reason != "50% of MemAvailable 22.9G (unified memory)" {
		t.Fatalf("unified cap = %d (%s)", c.Bytes, c.Reason)
	}
	if c := NewMemCap(gb10, avail, 0.5, 2); c.Bytes != avail/4 || !strings.HasSuffix(c.Reason, " shared by 2 GPUs (unified memory)") {
		t.Fatalf("unified cap over 2 GPUs = %d (%s)", c.Bytes, c.Reason)
	}
}

func TestArchCoverage(t *testing.T) {
	// torch 2.11.0+cu130 on the H200 machine (testdata/gpu info output).
	torch211 := []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}
	for _, tt := range []struct {
		list         []string
		major, minor int
		want         Coverage
		what         string
	}{
		{torch211, 9, 0, CoverExact, "sm_90"},
		{torch211, 12, 1, CoverSameMajor, "sm_120"}, // DGX Spark GB10
		{torch211, 10, 3, CoverSameMajor, "sm_100"},
		{[]string{"sm_80", "sm_90", "compute_90"}, 12, 1, CoverPTX, "compute_90"},
		{[]string{"sm_80", "sm_90a"}, 9, 0, CoverNone, ""},
		{[]string{"sm_121", "sm_120"}, 12, 1, CoverExact, "sm_121"},
		{nil, 12, 1, CoverNone, ""},
	} {
		c, what := ArchCoverage(tt.list, tt.major, tt.minor)
		if c != tt.want || what != tt.what {
			t.Errorf("ArchCoverage(%v, %d.%d) = %d %q, want %d %q", tt.list, tt.major, tt.minor, c, what, tt.want, tt.what)
		}
	}
}

const h200Samples = "../../testdata/gpu/"

func TestParseLDConfigCUDAMachine(t *testing.T) {
	m := ParseLDConfig(readVerbatim(t, h200Samples+"ldconfig-p.cuda.h200x2.txt"), "amd64")
	for name, want := range map[string][]string{
		"libcuda.so.1":    {"/usr/local/nvidia/lib64/libcuda.so.1", "/lib/libcuda.so.1"},
		"libnccl.so.2":    {"/lib/x86_64-linux-gnu/libnccl.so.2"},
		"libcublas.so.13": {"/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.13"},
	} {
		if got := m[name]; !slicesEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(m) != 12 { // 16 lines, four names listed twice
		t.Errorf("%d names, want 12", len(m))
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

func TestParsePythonEnvErrorPath(t *testing.T) {
	env, err := ParsePythonEnv(readVerbatim(t, h200Samples+"torch-probe.circular-import.h200x2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if env.Python != "3.12.3" || len(env.SitePackages) != 4 || env.Torch != "" ||
		!strings.HasPrefix(env.Error, "import torch: partially initialized module 'torch'") {
		t.Fatalf("%+v", env)
	}
	if _, err := ParsePythonEnv([]byte("Traceback (most recent call last):\n")); err == nil {
		t.Fatal("a traceback parsed")
	}
}
