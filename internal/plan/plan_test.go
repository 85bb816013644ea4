package plan

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/expect"
)

func load(t *testing.T, file string) Model {
	t.Helper()
	b, err := os.ReadFile("testdata/models/" + file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseConfig(b, file)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sparkPlan(t *testing.T, file, format string, nodes int, w Workload) *Plan {
	t.Helper()
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Format(format)
	if err != nil {
		t.Fatal(err)
	}
	c, err := PlatformCluster("dgx-spark", nodes, a, set)
	if err != nil {
		t.Fatal(err)
	}
	if w.GPUMemUtil == 0 {
		w.GPUMemUtil = 0.9
	}
	p, err := Estimate(load(t, file), f, c, w, a)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func option(t *testing.T, p *Plan, tp int) Option {
	t.Helper()
	for _, o := range p.Options {
		if o.TP == tp && o.PP == 1 {
			if !o.Fits {
				t.Fatalf("TP%d does not fit: %s", tp, o.Note)
			}
			return o
		}
	}
	t.Fatalf("no TP%d option", tp)
	return Option{}
}

// TestSeedMeasurements predicts seed 000's DGX Spark measurements from the
// platform numbers, the data file and each model's config. The prefill
// efficiency is calibrated on the first row (its source says so); every other
// row is a prediction and must land within ±20 %.
func TestSeedMeasurements(t *testing.T) {
	llama := sparkPlan(t, "llama-3.3-70b.json", "nvfp4", 2, Workload{Input: 32768, Output: 1024, Concurrency: 1, KVDType: "fp8"})
	qwen := sparkPlan(t, "qwen3.5-397b-a17b.json", "int4", 4, Workload{Input: 1024, Output: 1024, Concurrency: 4, KVDType: "bf16"})
	moe := sparkPlan(t, "qwen3.5-35b-a3b.json", "bf16", 1, Workload{Input: 1024, Output: 1024, Concurrency: 1, KVDType: "bf16"})
	for _, c := range []struct {
		row       string
		got, want float64
		dominant  string
	}{
		{"Llama 3.3 70B NVFP4 TTFT TP1 ms (calibration row)", option(t, llama, 1).TTFTms, 33415, ""},
		{"Llama 3.3 70B NVFP4 TTFT TP2 ms", option(t, llama, 2).TTFTms, 21384, ""},
		{"Llama 3.3 70B NVFP4 TPOT TP1 ms", option(t, llama, 1).TPOTms, 269, "memory"},
		{"Llama 3.3 70B NVFP4 TPOT TP2 ms", option(t, llama, 2).TPOTms, 133, "memory"},
		{"Llama 3.3 70B TP2 decode speedup", option(t, llama, 2).Speedup, 2.02, ""},
		{"Qwen3.5-397B INT4 TP4 tok/s, one user", option(t, qwen, 4).TokensPerSec, 37, "memory"},
		{"Qwen3.5-397B INT4 TP4 tok/s, 4 users total", option(t, qwen, 4).ConcTokensPerS, 103, ""},
		{"Qwen3.5-35B-A3B BF16 TP1 tok/s", option(t, moe, 1).TokensPerSec, 30.3, "memory"},
	} {
		dev := c.got/c.want - 1
		t.Logf("%-45s predicted %9.1f  measured %9.1f  %+5.1f %%", c.row, c.got, c.want, 100*dev)
		if math.Abs(dev) > 0.20 {
			t.Errorf("%s: predicted %.1f, measured %.1f (%+.0f %%, beyond ±20 %%)", c.row, c.got, c.want, 100*dev)
		}
	}
	if d := option(t, qwen, 4).Dominant; d != "memory" {
		t.Errorf("Qwen3.5-397B TP4 decode dominated by %s, want memory", d)
	}
	// The 397B model does not fit one Spark: the plan says by how much.
	if o := qwen.Options[0]; o.TP != 1 || o.Fits || o.ShortGB < 90 || !strings.Contains(o.Note, "GB short per node") {
		t.Errorf("397B at TP1: %+v, want does not fit, ~98 GB short", o)
	}
	if qwen.Options[qwen.Recommended].TP != 4 {
		t.Errorf("recommended TP%d for 397B on four nodes, want TP4", qwen.Options[qwen.Recommended].TP)
	}
}

// TestParamCounts checks the architecture arithmetic against the published sizes.
func TestParamCounts(t *testing.T) {
	for _, c := range []struct {
		file          string
		total, active float64 // billions
	}{
		{"llama-3.3-70b.json", 70.55, 69.5},
		{"qwen3.5-397b-a17b.json", 396.3, 16.3},
		{"qwen3.5-35b-a3b.json", 34.7, 2.95},
		{"qwen3-1.7b.json", 1.72, 1.72}, // Qwen: 1.7B, 1.4B non-embedding
	} {
		m := load(t, c.file)
		p := m.Count()
		if got := p.Total(m) / 1e9; math.Abs(got-c.total) > 0.01*c.total {
			t.Errorf("%s: %.2fB parameters, want %.2fB", c.file, got, c.total)
		}
		if got := p.Active(m) / 1e9; math.Abs(got-c.active) > 0.02*c.active {
			t.Errorf("%s: %.2fB active, want %.2fB", c.file, got, c.active)
		}
	}
}

// TestKVCacheMatchesVLLM checks the KV arithmetic against vLLM's own start-up
// report for Qwen3-1.7B (vllm-project/vllm issue #33263): "Available KV cache
// memory: 18.78 GiB", "GPU KV cache size: 175,856 tokens".
func TestKVCacheMatchesVLLM(t *testing.T) {
	m := load(t, "qwen3-1.7b.json")
	a, _ := DefaultAssumptions()
	e := estimator{m: m, p: m.Count(), kvb: 2, a: a}
	tokens := 18.78 * (1 << 30) / e.kvPerToken(1)
	if dev := tokens/175856 - 1; math.Abs(dev) > 0.001 {
		t.Errorf("18.78 GiB holds %.0f tokens by our arithmetic, vLLM says 175,856 (%+.2f %%)", tokens, 100*dev)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"not json", `{"hidden_size": `, "not JSON"},
		{"a tokenizer config", `{"tokenizer_class": "LlamaTokenizer"}`, "no num_hidden_layers"},
		{"missing heads", `{"num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 100}`, "no num_attention_heads"},
		{"moe without sizes", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 8}`, "num_experts_per_tok and moe_intermediate_size"},
	} {
		_, err := ParseConfig([]byte(c.json), c.name)
		if !errors.Is(err, ErrNotTransformer) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A TP size that does not divide the heads is named, not planned.
	p := sparkPlan(t, "qwen3.5-35b-a3b.json", "bf16", 3, Workload{Input: 128, Output: 128, Concurrency: 1, KVDType: "bf16"})
	for _, o := range p.Options {
		if o.PP == 3 && (o.Note != "" || !o.Fits) {
			t.Errorf("PP3 over three nodes: %+v", o)
		}
	}
	a, _ := DefaultAssumptions()
	if _, err := a.Format("int3"); err == nil || !strings.Contains(err.Error(), "nvfp4") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestAssumptionsNeedSources(t *testing.T) {
	if _, err := ParseAssumptions([]byte("formats:\n  - {name: x, bytes_per_param: 1, compute: bf16}\ncompute_ratio: {bf16: 1}\n")); err == nil {
		t.Error("a format without a source was accepted")
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, n := range []string{"llama-3.3-70b.json", "qwen3.5-397b-a17b.json", "qwen3.5-35b-a3b.json", "qwen3-1.7b.json"} {
		b, err := os.ReadFile("testdata/models/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	a, _ := DefaultAssumptions()
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 4, a, set)
	ft, _ := a.Format("bf16")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseConfig(b, "fuzz")
		if err != nil {
			return
		}
		if m.Layers > 1<<12 || m.Hidden > 1<<16 || m.Experts > 1<<12 || m.Vocab > 1<<22 {
			return
		}
		if _, err := Estimate(m, ft, c, Workload{Input: 16, Output: 16, Concurrency: 2, KVDType: "bf16", GPUMemUtil: 0.9}, a); err != nil {
			t.Fatal(err)
		}
	})
}
