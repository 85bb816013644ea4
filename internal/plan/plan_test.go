package plan

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
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

// TestSeedLayouts checks what seed 000's clusters say beyond the numbers
// (the numbers are rows of the field table): the 397B model does not fit one
// Spark and the plan says by how much, TP4 is recommended on four nodes and
// its decode is bound by memory.
func TestSeedLayouts(t *testing.T) {
	qwen := sparkPlan(t, "qwen3.5-397b-a17b.json", "int4", 4, Workload{Input: 1024, Output: 1024, Concurrency: 4, KVDType: "bf16"})
	if d := option(t, qwen, 4).Dominant; d != "memory" {
		t.Errorf("Qwen3.5-397B TP4 decode dominated by %s, want memory", d)
	}
	if o := qwen.Options[0]; o.TP != 1 || o.Fits || o.ShortGB < 90 || !strings.Contains(o.Note, "GB short per node") {
		t.Errorf("397B at TP1: %+v, want does not fit, ~98 GB short", o)
	}
	if qwen.Options[qwen.Recommended].TP != 4 {
		t.Errorf("recommended TP%d for 397B on four nodes, want TP4", qwen.Options[qwen.Recommended].TP)
	}
	llama := sparkPlan(t, "llama-3.3-70b.json", "nvfp4", 2, Workload{Input: 32768, Output: 1024, Concurrency: 1, KVDType: "fp8"})
	if s := option(t, llama, 2).Speedup; s < 1.8 || s > 2.1 {
		t.Errorf("Llama 3.3 70B TP2 decode speedup %.2f, want about 2 (seed 000 measured 269/133 ms = 2.02)", s)
	}
}

// TestParamCounts checks the architecture arithmetic against the published
// sizes. Model cards count "active" three ways: every per-token weight with
// the lm_head (DeepSeek, gpt-oss, Meta), without the lm_head (GLM) and with
// the input embedding too (Qwen); the row says which.
func TestParamCounts(t *testing.T) {
	const (
		withHead = iota
		layersOnly
		withEmbedding
	)
	for _, c := range []struct {
		file          string
		total, active float64 // billions
		counted       int
		source        string
	}{
		{"llama-3.3-70b.json", 70.55, 69.5, withHead, "meta-llama/Llama-3.3-70B-Instruct: 70.55B"},
		{"qwen3.5-397b-a17b.json", 396.3, 16.3, withHead, "Qwen/Qwen3.5-397B-A17B: 397B total"},
		{"qwen3.5-35b-a3b.json", 34.7, 2.95, withHead, "Qwen/Qwen3.5-35B-A3B: 35B total"},
		{"qwen3-1.7b.json", 1.72, 1.72, withHead, "Qwen/Qwen3-1.7B: 1.7B, 1.4B non-embedding"},
		{"gpt-oss-120b.json", 116.83, 5.13, withHead, "openai/gpt-oss-120b card (arXiv 2508.10925): 116.83B total, 5.13B active; llama-bench prints 116.83 B"},
		{"gpt-oss-20b.json", 20.91, 3.61, withHead, "openai/gpt-oss-20b card (arXiv 2508.10925): 20.91B total, 3.61B active; llama-bench prints 20.91 B"},
		{"qwen3-coder-30b-a3b.json", 30.53, 3.3, withEmbedding, "Qwen/Qwen3-Coder-30B-A3B-Instruct card: 30.5B total, 3.3B activated; llama-bench prints 30.53 B"},
		{"qwen3-235b-a22b.json", 235, 22, withEmbedding, "Qwen/Qwen3-235B-A22B card: 235B total, 22B activated"},
		{"qwen3-vl-32b.json", 32.76, 31.98, withHead, "Qwen/Qwen3-VL-32B-Instruct: the language model of Qwen3-32B's shape (32.8B) without the vision tower"},
		{"deepseek-v3.json", 671, 36.6, withHead, "deepseek-ai/DeepSeek-V3 README_WEIGHTS.md: 671B main model, 36.6B activated including 0.9B for the output head (the 14B MTP module aside)"},
		{"deepseek-v3.2.json", 671.9, 37.5, withHead, "DeepSeek-V3's 671B plus the V3.2 indexer (index_n_heads 64 x index_head_dim 128 from the query latent, 0.85B)"},
		{"glm-4.5-air.json", 106, 12, layersOnly, "zai-org/GLM-4.5-Air card: 106B total, 12B active (the MTP layer aside)"},
		{"glm-4.5.json", 355, 32, layersOnly, "zai-org/GLM-4.5 card: 355B total, 32B active (NeMo Megatron-Bridge GLM 4.5 page)"},
		{"nemotron-nano-9b-v2.json", 9.0, 8.3, withHead, "nvidia/NVIDIA-Nemotron-Nano-9B-v2: 9B; 56 layers, 27 Mamba-2, 25 MLP, 4 attention (jetson-ai-lab model page)"},
		{"gemma-3-270m.json", 0.270, 0.268, withHead, "google/gemma-3-270m card: 270M, 170M of them embeddings and 100M transformer blocks"},
		{"gemma-2-27b.json", 27.2, 27.2, withHead, "google/gemma-2-27b card: 27.2B (Gemma 2 report, arXiv 2408.00118)"},
		{"nemotron-3-super-120b-a12b.json", 120, 12, withHead, "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B: 120B total, 12B active (kubis.ai cross-model comparison); LatentMoE experts of moe_latent_size 1024, the MTP layer aside"},
	} {
		m := load(t, c.file)
		p := m.Count()
		if got := p.Total(m) / 1e9; math.Abs(got-c.total) > 0.015*c.total {
			t.Errorf("%s: %.2fB parameters, want %.2fB (%s)", c.file, got, c.total, c.source)
		}
		active := p.Active(m)
		switch c.counted {
		case layersOnly:
			active -= p.head()
		case withEmbedding:
			if p.LMHead > 0 {
				active += p.Embedding
			}
		}
		if got := active / 1e9; math.Abs(got-c.active) > 0.03*c.active {
			t.Errorf("%s: %.2fB active, want %.2fB (%s)", c.file, got, c.active, c.source)
		}
	}
}

// TestLayerKinds checks how each family's layers are sorted, from the
// numbers their configs and cards state.
func TestLayerKinds(t *testing.T) {
	for _, c := range []struct {
		file                                             string
		full, sliding, window, linear, mamba, dense, moe int
	}{
		{"gpt-oss-120b.json", 18, 18, 128, 0, 0, 0, 36},     // alternating sliding (128) and full attention
		{"gemma-3-270m.json", 3, 15, 512, 0, 0, 18, 0},      // five local layers to one global
		{"qwen3.5-397b-a17b.json", 15, 0, 0, 45, 0, 0, 60},  // three Gated DeltaNet layers to one full
		{"nemotron-nano-9b-v2.json", 4, 0, 0, 0, 27, 25, 0}, // 27 Mamba, 25 MLP, 4 attention
		{"deepseek-v3.json", 61, 0, 0, 0, 0, 3, 58},         // first_k_dense_replace 3
		{"glm-4.5-air.json", 46, 0, 0, 0, 0, 1, 45},         // first_k_dense_replace 1
		{"qwen3-coder-30b-a3b.json", 48, 0, 0, 0, 0, 0, 48}, // use_sliding_window false: the window is ignored
	} {
		m := load(t, c.file)
		got := []int{m.FullAttentionLayers, m.SlidingLayers, m.SlidingWindow, m.LinearLayers, m.MambaLayers, m.DenseFFNLayers, m.MoELayers}
		want := []int{c.full, c.sliding, c.window, c.linear, c.mamba, c.dense, c.moe}
		if !slices.Equal(got, want) {
			t.Errorf("%s: full, sliding, window, linear, mamba, dense, moe = %v, want %v", c.file, got, want)
		}
	}
	// gpt-oss keeps attention in BF16 (quantization_config.modules_to_not_convert); experts are
	// sized by intermediate_size, there being no moe_intermediate_size.
	if m := load(t, "gpt-oss-120b.json"); !m.UnquantizedAttention || m.ExpertIntermediate != 2880 {
		t.Errorf("gpt-oss-120b: unquantized attention %v, expert size %d", m.UnquantizedAttention, m.ExpertIntermediate)
	}
	if m := load(t, "nemotron-nano-9b-v2.json"); m.FFNMatrices != 2 {
		t.Errorf("Nemotron-H's squared-ReLU MLP has %d matrices, want 2", m.FFNMatrices)
	}
}

// TestLatentKVCache checks DeepSeek's MLA cache: one 512 + 64 latent per
// token and layer, the same on every tensor-parallel rank, against 2 x 128
// heads x 192 that a plain cache of the same heads would hold.
func TestLatentKVCache(t *testing.T) {
	m := load(t, "deepseek-v3.json")
	a, _ := DefaultAssumptions()
	e := estimator{m: m, p: m.Count(), kvb: 2, a: a}
	if got := e.kvPerToken(1); got != 61*576*2 {
		t.Errorf("DeepSeek-V3 KV per token %.0f B, want %d", got, 61*576*2)
	}
	if e.kvPerToken(4) != e.kvPerToken(1) {
		t.Error("a latent cache is not split across tensor-parallel ranks")
	}
	// Sliding layers stop growing at the window: gpt-oss-120b at 100,000 tokens holds
	// 18 layers x 100,000 + 18 x 128 tokens of 8 KV heads x 64 x 2.
	g := load(t, "gpt-oss-120b.json")
	eg := estimator{m: g, p: g.Count(), kvb: 2, a: a}
	if got, want := eg.kvSeq(1, 100000), float64(18*100000+18*128)*2*8*64*2; got != want {
		t.Errorf("gpt-oss-120b KV at 100k tokens %.0f B, want %.0f", got, want)
	}
	// Nemotron-H's Mamba state is fixed: 27 layers x (128 heads x 80 x 128 state + conv 12288 x 3) x 2 bytes.
	n := load(t, "nemotron-nano-9b-v2.json")
	en := estimator{m: n, p: n.Count(), kvb: 2, a: a}
	if got, want := en.statePerSeq(1), float64(27*(128*80*128+12288*3)*2); got != want {
		t.Errorf("Nemotron Nano 9B v2 state %.0f B, want %.0f", got, want)
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

// TestExpertParallelLoad checks the simulated load of the busiest rank
// against the exact figure: one token's 8 experts of 128 over two ranks hold
// max(x, 8-x) on the fuller rank, x hypergeometric, 5.0589 on average.
func TestExpertParallelLoad(t *testing.T) {
	if got := expectedMaxLoad(128, 8, 1, 2); math.Abs(got-5.0589) > 0.15 {
		t.Errorf("busiest of two ranks holds %.3f of one token's 8 experts, want 5.059", got)
	}
	// Splitting every expert instead reads 8/2 = 4 per rank; with whole experts
	// on the ranks a single stream pays for the imbalance, a large batch does not.
	m := load(t, "qwen3-235b-a22b.json")
	a, _ := DefaultAssumptions()
	split := estimator{m: m, p: m.Count(), a: a}
	ep := estimator{m: m, p: m.Count(), a: a, w: Workload{ExpertParallel: true}}
	if s, e := split.expertsPerNode(2, 1), ep.expertsPerNode(2, 1); s != 4 || e < 4.9 {
		t.Errorf("one token over two ranks: %.2f experts split, %.2f whole; want 4 and about 5.06", s, e)
	}
	if e := ep.expertsPerNode(2, 4096); e != 64 {
		t.Errorf("4096 tokens over two ranks touch every expert: %.1f per rank, want 64", e)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"not json", `{"hidden_size": `, "not JSON"},
		{"a tokenizer config", `{"tokenizer_class": "LlamaTokenizer"}`, "no num_hidden_layers"},
		{"missing heads", `{"num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 100}`, "no num_attention_heads"},
		{"moe without sizes", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 8}`, "num_experts_per_tok and moe_intermediate_size"},
		{"more experts per token than experts", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "num_local_experts": 2, "num_experts_per_tok": 4, "intermediate_size": 64}`, "4 experts per token of 2"},
		{"hybrid pattern too short", `{"num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 64, "hybrid_override_pattern": "M-"}`, "hybrid_override_pattern has 2 layers, num_hidden_layers 3"},
		{"mamba without its shape", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 64, "hybrid_override_pattern": "M*"}`, "Mamba layers without"},
		{"latent attention without head sizes", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 64, "kv_lora_rank": 16}`, "qk_nope_head_dim"},
		{"sliding layers without a window", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 64, "layer_types": ["sliding_attention", "full_attention"]}`, "without sliding_window"},
		{"absurd size", `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 99999999999}`, "out of range"},
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
	if _, err := a.Engine("tgi"); err == nil || err.Error() != `unknown engine "tgi" (want one of vllm, llama.cpp, trtllm, sglang, ollama)` {
		t.Errorf("unknown engine: %v", err)
	}
}

func TestAssumptionsNeedSources(t *testing.T) {
	if _, err := ParseAssumptions([]byte("formats:\n  - {name: x, bytes_per_param: 1, compute: bf16}\ncompute_ratio: {bf16: 1}\n")); err == nil {
		t.Error("a format without a source was accepted")
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, n := range []string{"llama-3.3-70b.json", "qwen3.5-397b-a17b.json", "qwen3.5-35b-a3b.json", "qwen3-1.7b.json",
		"gpt-oss-120b.json", "deepseek-v3.2.json", "glm-4.5-air.json", "nemotron-nano-9b-v2.json", "gemma-3-270m.json",
		"nemotron-3-super-120b-a12b-nvfp4.json"} {
		b, err := os.ReadFile("testdata/models/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, q := range []string{"qwen3-235b-a22b-gptq-int4", "deepseek-v3", "qwen3.6-35b-a3b-awq"} {
		b, err := os.ReadFile("testdata/quant/" + q + ".quantization_config.json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fmt.Appendf(nil, `{"num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 1000, "intermediate_size": 1024, "quantization_config": %s}`, b))
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
		for _, ep := range []bool{false, true} {
			if _, err := Estimate(m, ft, c, Workload{Input: 16, Output: 16, Concurrency: 2, KVDType: "bf16", GPUMemUtil: 0.9, ExpertParallel: ep}, a); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestLatentMoEAndMTP reads Nemotron-3 Super's LatentMoE and MTP fields:
// without moe_latent_size its 512 experts per layer would be sized at the
// hidden width (four times the latent one) and the model would not fit one
// Spark in NVFP4; the MTP layer is counted apart and named.
func TestLatentMoEAndMTP(t *testing.T) {
	m := load(t, "nemotron-3-super-120b-a12b.json")
	if m.LatentSize != 1024 || m.MTPLayers != 1 || len(m.Unread) != 0 {
		t.Fatalf("latent %d, MTP layers %d, unread %v; want 1024, 1, none", m.LatentSize, m.MTPLayers, m.Unread)
	}
	wide := m
	wide.LatentSize = 0
	if r := wide.Count().Total(wide) / m.Count().Total(m); r < 3 {
		t.Errorf("without the latent width the model is only %.1f times larger", r)
	}
	p := sparkPlan(t, "nemotron-3-super-120b-a12b.json", "nvfp4", 1, Workload{Input: 1024, Output: 128, Concurrency: 1, KVDType: "fp8"})
	if !p.Options[0].Fits {
		t.Errorf("Nemotron-3 Super NVFP4 does not fit one Spark: %s", p.Options[0].Note)
	}
	var mtp bool
	for _, n := range p.Assumed {
		mtp = mtp || strings.Contains(n.Unit, "multi-token-prediction")
	}
	if !mtp {
		t.Error("the plan does not name the MTP layer it leaves out")
	}
}

// TestUnknownSizeFieldNamed: a config field that looks like a size and is
// not read is named in the plan, never silently ignored; a field at its
// neutral value (an empty list, a zero) is not.
func TestUnknownSizeFieldNamed(t *testing.T) {
	b, err := os.ReadFile("testdata/models/llama-3.3-70b.json")
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "{", `{"num_memory_experts": 16, "adapter_dim": 0, "extra_layers": [],`, 1))
	m, err := ParseConfig(b, "llama-extra")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Unread, []string{"num_memory_experts"}) {
		t.Fatalf("unread %v, want [num_memory_experts]", m.Unread)
	}
	a, _ := DefaultAssumptions()
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 2, a, set)
	f, _ := a.Format("nvfp4")
	p, err := Estimate(m, f, c, Workload{Input: 128, Output: 128, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9}, a)
	if err != nil {
		t.Fatal(err)
	}
	var named bool
	for _, n := range p.Assumed {
		named = named || strings.Contains(n.Unit, "not read: num_memory_experts")
	}
	if !named {
		t.Errorf("the plan does not name num_memory_experts: %+v", p.Assumed)
	}
}

// TestGGUFBytes holds the GGUF formats to ggml's block layouts
// (ggml/src/ggml-common.h: block_q4_0 an FP16 scale and 16 bytes per 32
// weights; block_q4_K two FP16 scales, 12 bytes of 6-bit scales and 128
// bytes per 256; block_q5_K that plus 32 bytes of high bits; block_q6_K 128
// + 64 + 16 bytes and an FP16 scale per 256; block_q8_0 an FP16 scale and 32
// bytes per 32; block_mxfp4 an E8M0 byte and 16 bytes per 32).
func TestGGUFBytes(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format        string
		bytes, values float64
	}{
		{"q4_0", 2 + 16, 32}, {"q4_k_m", 2*2 + 12 + 128, 256}, {"q5_k_m", 2*2 + 12 + 128 + 32, 256},
		{"q6_k", 128 + 64 + 16 + 2, 256}, {"q8_0", 2 + 32, 32}, {"mxfp4", 1 + 16, 32},
	} {
		f, err := a.Format(c.format)
		if err != nil {
			t.Fatal(err)
		}
		if f.BytesPerParam != c.bytes/c.values {
			t.Errorf("%s: %g bytes per weight, ggml's block gives %g", c.format, f.BytesPerParam, c.bytes/c.values)
		}
	}
	// The K-quant mixes keep the output in Q6_K.
	for _, n := range []string{"q4_0", "q4_k_m", "q5_k_m", "q6_k"} {
		if f, _ := a.Format(n); f.HeadBytesPerParam != 210.0/256 {
			t.Errorf("%s: output at %g bytes per weight, want Q6_K's 210/256", n, f.HeadBytesPerParam)
		}
	}
}

// TestGGUFFileSizes: the weights the planner works out for GGUF files are
// the file sizes llama-bench printed for them (GiB; DandinPower/llama.cpp_bench
// dgx_spark/decoding.log for the Q4_K_M files, ggml-org/llama.cpp
// benches/dgx-spark.md for the others), within 0.5 %.
func TestGGUFFileSizes(t *testing.T) {
	for _, c := range []struct {
		file, weights string
		gib           float64
	}{
		{"qwen3-1.7b.json", "q4_k_m", 1.03}, {"qwen3-8b.json", "q4_k_m", 4.68}, {"qwen3-32b.json", "q4_k_m", 18.40},
		{"qwen3-30b-a3b.json", "q4_k_m", 17.28}, {"qwen2.5-coder-7b.json", "q8_0", 7.54}, {"qwen3-coder-30b-a3b.json", "q8_0", 30.25},
		{"gpt-oss-120b.json", "gguf-mxfp4", 59.02}, {"gpt-oss-20b.json", "gguf-mxfp4", 11.27},
	} {
		p := sparkPlan(t, c.file, c.weights, 1, Workload{Input: 16, Output: 16, Concurrency: 1, KVDType: "fp16"})
		if got := p.WeightsGB * 1e9 / (1 << 30); math.Abs(got/c.gib-1) > 0.005 {
			t.Errorf("%s %s: %.2f GiB, llama-bench printed %.2f GiB", c.file, c.weights, got, c.gib)
		}
	}
}

// TestScanFLOPs holds the linear-attention and Mamba-2 scans' products to
// the chunked algorithms' counts worked by hand, linear in the prompt (any
// split of it costs the same), and absent from a model with neither.
func TestScanFLOPs(t *testing.T) {
	// Qwen3.6-35B-A3B: 30 Gated DeltaNet layers of 32 value heads, key and
	// value widths 128, chunks of 64: 64·(6·128 + 4·128) + 6·128·128 + ⅔·64²
	// = 182,954.67 a head and token.
	qwen := load(t, "qwen3.6-35b-a3b.json")
	// Nemotron-3 Nano: 23 Mamba-2 layers of 64 heads of width 64, state 128,
	// 8 groups, chunks of 128 (config.json chunk_size): 64·(4·128·64 +
	// 2·128·64) + 8·2·128·128 = 3,407,872 a layer and token.
	nano := load(t, "nemotron-3-nano-30b-a3b.json")
	for _, c := range []struct {
		m    Model
		want float64
	}{{qwen, 30 * 32 * (64*(6*128+4*128) + 6*128*128 + 2*64*64/3.0)}, {nano, 23 * 3407872}} {
		e := estimator{m: c.m}
		if got := e.scanFLOPs(1); math.Abs(got/c.want-1) > 1e-12 {
			t.Errorf("%s: %.0f scan FLOPs a token, want %.0f", c.m.Name, got, c.want)
		}
		for _, n := range []float64{1, 17, 4096, 160913} {
			for _, k := range []float64{0, 1, n / 3, n - 1} {
				if a, b := e.scanFLOPs(n), e.scanFLOPs(k)+e.scanFLOPs(n-k); math.Abs(a/b-1) > 1e-12 {
					t.Errorf("%s: %v tokens cost %.6g, split at %v %.6g", c.m.Name, n, a, k, b)
				}
			}
		}
	}
	if got := (estimator{m: load(t, "llama-3.1-8b.json")}).scanFLOPs(4096); got != 0 {
		t.Errorf("a model without linear-attention or Mamba layers has %.0f scan FLOPs, want 0", got)
	}
}

// TestLinearAttentionFigure: the linear-attention figure prices the Gated
// DeltaNet scan's products and nothing else. For any prompt pass (start,
// length) of a Qwen3.5 or Qwen3.6 model, changing it from v1 to v2 changes
// the pass's compute by exactly deltaFLOPs/(16-bit rate)·(1/v2 − 1/v1);
// a Mamba-2 model's and a transformer's passes do not move; and an engine
// without a figure of its own, nor one it inherits, takes its attention
// figure.
func TestLinearAttentionFigure(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	with := func(v float64) Assumptions {
		b := a
		b.Engines = slices.Clone(a.Engines)
		for i, e := range b.Engines {
			if e.Name == "vllm" {
				b.Engines[i].LinearAttention = []Factor{{Format: "*", Value: v, Source: "test"}}
			}
		}
		return b
	}
	for _, tc := range []struct{ file, format string }{{"qwen3.5-0.8b.json", "bf16"}, {"qwen3.5-9b.json", "bf16"},
		{"qwen3.6-35b-a3b.json", "fp8"}, {"nemotron-3-nano-30b-a3b.json", "bf16"}, {"llama-3.1-8b.json", "nvfp4"}} {
		f, err := a.Format(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		m := load(t, tc.file)
		for _, start := range []int{0, 1, 8192, 100000} {
			for _, n := range []int{1, 64, 777, 8192} {
				w := Workload{Input: start + n, Output: 1, Concurrency: 1, KVDType: "fp8", Engine: "vllm", GPUMemUtil: 0.9}
				e1, err := newEstimator(m, f, c, w, with(0.5))
				if err != nil {
					t.Fatal(err)
				}
				e2, _ := newEstimator(m, f, c, w, with(0.05))
				c1, _, _, _ := e1.prefillPass(1, start, n, true)
				c2, _, _, _ := e2.prefillPass(1, start, n, true)
				want := e1.deltaFLOPs(float64(n)) / (c.BF16TFLOPS.Value * 1e12) * (1/0.05 - 1/0.5)
				if d := c2 - c1; math.Abs(d-want) > 1e-9*max(c1, 1e-6) {
					t.Errorf("%s, %d tokens after %d: the figure 0.5 to 0.05 moves compute %.6g s, want %.6g s", tc.file, n, start, d, want)
				}
			}
		}
	}
	for _, e := range a.Engines {
		if len(e.LinearAttention) > 0 || e.Inherit != "" {
			continue
		}
		lin, err1 := a.Factor(e.Name, PhaseLinear, "bf16")
		att, err2 := a.Factor(e.Name, PhaseAttention, "bf16")
		if err1 != nil || err2 != nil || lin.Value != att.Value || lin.Source != att.Source {
			t.Errorf("%s has no linear-attention figure; it should take its attention figure (%v, %v), got %v (%v)", e.Name, att, err2, lin, err1)
		}
	}
	// An engine that inherits and has no scan figure of its own takes its
	// parent's, whatever figures of other phases it has: TensorRT-LLM and
	// SGLang take vLLM's fitted scan figure, Ollama llama.cpp's attention one.
	for _, e := range a.Engines {
		if e.Inherit == "" || len(e.LinearAttention) > 0 {
			continue
		}
		for _, format := range []string{"bf16", "fp8", "nvfp4"} {
			got, err1 := a.Factor(e.Name, PhaseLinear, format)
			want, err2 := a.Factor(e.Inherit, PhaseLinear, format)
			if err1 != nil || err2 != nil || got.Value != want.Value || got.Engine != want.Engine || !strings.HasSuffix(got.Source, want.Source) {
				t.Errorf("%s, %s: the scan figure is %v (%v), want %s's %v (%v)", e.Name, format, got, err1, e.Inherit, want, err2)
			}
		}
	}
	for _, name := range []string{"trtllm", "sglang"} {
		got, err := a.Factor(name, PhaseLinear, "bf16")
		if err != nil || got.Engine != "vllm" || got.Value != 0.036 || !strings.Contains(got.Source, "takes vllm's figure") {
			t.Errorf("%s's scan figure is %v (%v), want vLLM's linear_attention 0.036, named as inherited", name, got, err)
		}
	}
}

// TestUngraphedLaunches holds llama.cpp's per-layer launch cost to its rule
// for any prompt length, chunk and stream count: a prompt's TTFT carries it
// once per pass, a one-token decode step never, a step of more streams once;
// an engine without the figure (vLLM) carries none.
func TestUngraphedLaunches(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	per, _ := a.ungraphedLayer("llama.cpp")
	if inherited, src := a.ungraphedLayer("ollama"); inherited != per || !strings.Contains(src, "ollama takes llama.cpp's figure") {
		t.Errorf("ollama's ungraphed figure %.3f (%q), want llama.cpp's %.3f, said so", inherited, src, per)
	}
	if v, _ := a.ungraphedLayer("vllm"); v != 0 {
		t.Errorf("vLLM replays CUDA graphs for every batch it captures; its ungraphed figure is %.3f", v)
	}
	m := load(t, "qwen3-8b.json")
	for _, input := range []int{1, 2, 16, 511, 512, 513, 4096, 10000} {
		for _, chunk := range []int{1, 64, 512, 2048} {
			for _, b := range []int{1, 2, 8} {
				w := Workload{Input: input, Output: 16, Concurrency: b, KVDType: "fp16", GPUMemUtil: 0.9, Engine: "llama.cpp", PrefillChunk: chunk}
				with := sparkPlan(t, "qwen3-8b.json", "q4_k_m", 1, w)
				a0 := a
				a0.Engines = slices.Clone(a.Engines)
				for i := range a0.Engines {
					a0.Engines[i].UngraphedLayerMs = 0
				}
				f, _ := a.Format("q4_k_m")
				set, _ := expect.Default()
				c, _ := PlatformCluster("dgx-spark", 1, a, set)
				without, err := Estimate(m, f, c, w, a0)
				if err != nil {
					t.Fatal(err)
				}
				o1, o0 := option(t, with, 1), option(t, without, 1)
				var passes float64
				for s := 0; s < input; s += chunk {
					if min(chunk, input-s) > 1 {
						passes++
					}
				}
				want := passes * per * float64(m.Layers)
				if d := o1.TTFTms - o0.TTFTms; math.Abs(d-want) > 0.15 {
					t.Errorf("input %d, chunk %d: TTFT gains %.2f ms, want %.0f passes × %d layers × %.3f = %.2f", input, chunk, d, passes, m.Layers, per, want)
				}
				if o1.TPOTms != o0.TPOTms {
					t.Errorf("a one-stream step replays its graph: TPOT %.2f against %.2f", o1.TPOTms, o0.TPOTms)
				}
				wantStep := 0.0
				if b > 1 {
					wantStep = per * float64(m.Layers)
				}
				if d := o1.ConcTPOTms - o0.ConcTPOTms; math.Abs(d-wantStep) > 0.15 {
					t.Errorf("%d streams: the step gains %.2f ms, want %.2f", b, d, wantStep)
				}
			}
		}
	}
}

// TestDraftDecode holds the multi-token-prediction decode to its rule: a
// step verifies the draft and its token in one pass and drafts with the
// prediction head, so a step costs more than a plain one and less than
// draft+1 plain ones (the weights are read once), and the time per token
// is the step over the tokens it emits, for any draft length and any
// tokens per step; the workload is refused where the tokens per step do
// not fit the draft.
func TestDraftDecode(t *testing.T) {
	base := Workload{Input: 4096, Output: 256, Concurrency: 1, KVDType: "fp8", Engine: "vllm"}
	for _, file := range []string{"qwen3.6-35b-a3b.json", "glm-4.5-air.json"} {
		plain := option(t, sparkPlan(t, file, "nvfp4", 1, base), 1)
		for _, k := range []int{1, 2, 3, 5} {
			var step float64
			for _, per := range []float64{1, 1.5, float64(k) + 1} {
				w := base
				w.Draft, w.TokensPerStep = k, per
				o := option(t, sparkPlan(t, file, "nvfp4", 1, w), 1)
				s := o.MemoryMs * per // the step, before it is shared among its tokens
				if step == 0 {
					step = s
				} else if math.Abs(s/step-1) > 0.01 {
					t.Errorf("%s, draft %d: the step is %.2f ms at %.1f tokens a step and %.2f at another: it must not depend on them", file, k, s, per, step)
				}
				if s <= plain.MemoryMs || s >= float64(k+1)*plain.MemoryMs {
					t.Errorf("%s, draft %d: a step of %.2f ms against a plain %.2f: want more than one plain step, less than %d", file, k, s, plain.MemoryMs, k+1)
				}
				if o.TTFTms != plain.TTFTms {
					t.Errorf("%s: a draft changed the TTFT (%.1f against %.1f)", file, o.TTFTms, plain.TTFTms)
				}
			}
		}
	}
	a, _ := DefaultAssumptions()
	f, _ := a.Format("nvfp4")
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	// The verifying pass reads the weights once: a dense model's is its plain
	// step, a mixture of experts' more (its k+1 tokens route to more experts).
	// (Qwen3-8B has no prediction layer: given one, it stands for a dense
	// model that drafts.)
	for _, file := range []string{"qwen3-8b.json", "qwen3.6-35b-a3b.json"} {
		w := base
		w.GPUMemUtil = 0.9
		m := load(t, file)
		m.MTPLayers = max(m.MTPLayers, 1)
		e0, err := newEstimator(m, f, c, w, a)
		if err != nil {
			t.Fatal(err)
		}
		plain, _, _ := e0.decodeStep(1, 1, 1)
		w.Draft, w.TokensPerStep = 2, 2
		e, _ := newEstimator(m, f, c, w, a)
		per, _, _ := e.decodeStep(1, 1, 1)
		ctx := float64(w.Input) + float64(w.Output)/2
		verify := 2*per - 2*e.draftPass(1, 1, ctx)/e.bandwidth()
		switch dense := e.m.Experts == 0; {
		case dense && math.Abs(verify/plain-1) > 1e-9:
			t.Errorf("%s: the verifying pass is %.3f ms, the plain step %.3f: a dense model reads the same bytes", file, verify*1e3, plain*1e3)
		case !dense && verify <= plain*1.05:
			t.Errorf("%s: the verifying pass is %.3f ms, the plain step %.3f: three tokens route to more experts than one", file, verify*1e3, plain*1e3)
		}
	}
	for _, w := range []Workload{{Draft: 2, TokensPerStep: 3.5}, {Draft: 2, TokensPerStep: 0.5}, {Draft: 2}, {TokensPerStep: 2}, {Draft: -1}} {
		w.Input, w.Output, w.Concurrency, w.KVDType, w.GPUMemUtil = 1024, 64, 1, "fp8", 0.9
		if _, err := Estimate(load(t, "qwen3.6-35b-a3b.json"), f, c, w, a); err == nil {
			t.Errorf("draft %d with %.1f tokens a step was accepted", w.Draft, w.TokensPerStep)
		}
	}
}

// TestDraftRefused: a draft needs the model's own prediction layers and an
// engine whose launch line carries it, and weight-only expert kernels an
// engine that has them; each refusal names the flag, and the tokens per
// step and the draft each name the other they need.
func TestDraftRefused(t *testing.T) {
	a, _ := DefaultAssumptions()
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	for _, tc := range []struct {
		file, format, engine string
		draft                int
		per                  float64
		marlin               bool
		want                 string
	}{
		{"llama-3.3-70b.json", "nvfp4", "vllm", 2, 2.5, false, "--mtp-draft 2: the model has no multi-token-prediction layers to draft with (config.json num_nextn_predict_layers or mtp_num_hidden_layers)"},
		{"qwen3-8b.json", "nvfp4", "sglang", 1, 1.5, false, "--mtp-draft 1: the model has no multi-token-prediction layers to draft with (config.json num_nextn_predict_layers or mtp_num_hidden_layers)"},
		{"qwen3.6-35b-a3b.json", "q4_k_m", "llama.cpp", 2, 2.5, false, "--mtp-draft is for vllm and sglang (their launch lines carry the draft), not llama.cpp"},
		{"qwen3.6-35b-a3b.json", "nvfp4", "trtllm", 2, 2.5, false, "--mtp-draft is for vllm and sglang (their launch lines carry the draft), not trtllm"},
		{"qwen3.6-35b-a3b.json", "nvfp4", "sglang", 0, 0, true, "--weight-only-experts is for vllm (--moe-backend marlin), not sglang"},
		{"gpt-oss-120b.json", "gguf-mxfp4", "llama.cpp", 0, 0, true, "--weight-only-experts is for vllm (--moe-backend marlin), not llama.cpp"},
		{"qwen3.6-35b-a3b.json", "nvfp4", "vllm", 2, 0, false, "--mtp-draft 2 needs --mtp-tokens-per-step (1 to 3)"},
		{"qwen3.6-35b-a3b.json", "nvfp4", "vllm", 0, 2.5, false, "--mtp-tokens-per-step needs --mtp-draft"},
		{"qwen3.6-35b-a3b.json", "nvfp4", "vllm", 2, 3.5, false, "--mtp-tokens-per-step 3.50 with --mtp-draft 2: want 1 to 3"},
	} {
		f, _ := a.Format(tc.format)
		w := Workload{Input: 1024, Output: 64, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9, Engine: tc.engine,
			Draft: tc.draft, TokensPerStep: tc.per, WeightOnlyExperts: tc.marlin}
		_, err := Estimate(load(t, tc.file), f, c, w, a)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s on %s, draft %d, %.1f a step, weight-only %v: got %v, want %q", tc.file, tc.engine, tc.draft, tc.per, tc.marlin, err, tc.want)
		}
	}
}

// TestDraftLoadsMTP: a drafting plan holds the prediction layers in memory
// (every node's weights grow by them), and a plan without a draft does not.
func TestDraftLoadsMTP(t *testing.T) {
	for _, file := range []string{"qwen3.6-35b-a3b.json", "glm-4.5-air.json"} {
		w := Workload{Input: 1024, Output: 64, Concurrency: 1, KVDType: "fp8", Engine: "vllm"}
		plain := sparkPlan(t, file, "nvfp4", 1, w)
		w.Draft, w.TokensPerStep = 2, 2
		drafting := sparkPlan(t, file, "nvfp4", 1, w)
		a, _ := DefaultAssumptions()
		f, _ := a.Format("nvfp4")
		set, _ := expect.Default()
		c, _ := PlatformCluster("dgx-spark", 1, a, set)
		w.GPUMemUtil = 0.9
		e, err := newEstimator(load(t, file), f, c, w, a)
		if err != nil {
			t.Fatal(err)
		}
		mtp := e.mtpBytes()
		if mtp <= 0 || math.Abs(drafting.WeightsGB-plain.WeightsGB-mtp/1e9) > 1e-9 {
			t.Errorf("%s: weights %.3f GB drafting, %.3f plain: want %.3f GB of prediction layers more", file, drafting.WeightsGB, plain.WeightsGB, mtp/1e9)
		}
		var loaded bool
		for _, n := range drafting.Assumed {
			loaded = loaded || strings.Contains(n.Unit, "multi-token-prediction layer(s), loaded to draft")
		}
		if !loaded {
			t.Errorf("%s: the drafting plan does not say it loads the prediction layers", file)
		}
	}
}

// TestDraftLaunches: the kernels a step launches one by one are priced per
// emitted token like the rest of the step: a step of b sequences
// multiplies b·(1+k) tokens, so it launches ungraphed even for one
// sequence, and its cost is shared among the tokens the step emits.
func TestDraftLaunches(t *testing.T) {
	a, _ := DefaultAssumptions()
	f, _ := a.Format("nvfp4")
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	for _, k := range []int{1, 2, 4} {
		for _, per := range []float64{1, 1.5, float64(k + 1)} {
			w := Workload{Input: 1024, Output: 64, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9, Engine: "vllm", Draft: k, TokensPerStep: per}
			e, err := newEstimator(load(t, "qwen3.6-35b-a3b.json"), f, c, w, a)
			if err != nil {
				t.Fatal(err)
			}
			e.ungraphed = 1e-4 // 0.1 ms a layer
			o := e.option(1, 1)
			mem, comp, net := e.decodeStep(1, 1, 1)
			want := (max(mem, comp) + net + 1e-4*float64(e.m.Layers)/per) * 1e3
			if math.Abs(o.ConcTPOTms-want) > 0.051 || math.Abs(o.TPOTms-want) > 0.051 {
				t.Errorf("draft %d, %.1f tokens a step: %.2f ms a token (%.2f for one user), want %.2f (the launches over the tokens a step emits)", k, per, o.ConcTPOTms, o.TPOTms, want)
			}
		}
	}
}

// TestSixteenBitExpertFigure: vLLM's routed-expert prefill figures are
// shares of the 16-bit rate, one for each format the fit half has rows of
// and the catch-all for the rest, with or without --weight-only-experts:
// a format's experts take their multiplies at the 16-bit rate times that
// format's figure, weight-only kernels do not move them, and the plan says
// which rate its figure is a share of.
func TestSixteenBitExpertFigure(t *testing.T) {
	a, _ := DefaultAssumptions()
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	vllm, err := a.Engine("vllm")
	if err != nil {
		t.Fatal(err)
	}
	figure := func(format string) Factor {
		var all Factor
		for _, f := range vllm.factors(PhasePrefillMoE) {
			switch f.Format {
			case format:
				return f
			case "*":
				all = f
			}
		}
		return all
	}
	for _, format := range []string{"nvfp4", "fp8", "bf16", "mxfp4", "int4", "int8"} {
		f, _ := a.Format(format)
		want := figure(format)
		if !want.Of16Bit || want.Value <= 0 || want.Value > 1 {
			t.Errorf("%s: vLLM's routed-expert figure %+v is not a share of the 16-bit rate in (0, 1]", format, want)
		}
		var plain float64
		for _, weightOnly := range []bool{false, true} {
			w := Workload{Input: 8192, Output: 64, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9, Engine: "vllm", WeightOnlyExperts: weightOnly}
			e, err := newEstimator(load(t, "qwen3.6-35b-a3b.json"), f, c, w, a)
			if err != nil {
				t.Fatal(err)
			}
			if e.preMoE.Value != want.Value || !e.sixteenBitExperts() {
				t.Errorf("%s, weight-only %v: experts take %.2f (%s), want the format's %.2f of the 16-bit rate", format, weightOnly, e.preMoE.Value, e.preMoE.Source, want.Value)
			}
			for _, n := range []int{512, 8192} {
				_, _, ec, _ := e.prefillPass(1, 0, n, true)
				wantS := 2 * e.p.Expert * float64(e.m.ExpertsPerToken*e.m.MoELayers) * float64(n) / (c.BF16TFLOPS.Value * 1e12 * want.Value)
				if math.Abs(ec/wantS-1) > 1e-9 {
					t.Errorf("%s, weight-only %v, %d tokens: expert multiplies %.4g s, want %.4g", format, weightOnly, n, ec, wantS)
				}
			}
			_, _, ec, _ := e.prefillPass(1, 0, 8192, true)
			if !weightOnly {
				plain = ec
			} else if math.Abs(ec/plain-1) > 1e-9 {
				t.Errorf("%s: expert multiplies %.4g s weight-only, %.4g without: the 16-bit figure already prices them", format, ec, plain)
			}
			p, err := Estimate(load(t, "qwen3.6-35b-a3b.json"), f, c, w, a)
			if err != nil {
				t.Fatal(err)
			}
			var said bool
			for _, n := range p.Assumed {
				said = said || strings.Contains(n.Unit, "of the 16-bit tensor-core rate in prefill's routed-expert multiplies")
			}
			if !said {
				t.Errorf("%s, weight-only %v: the plan does not say its experts' figure is a share of the 16-bit rate", format, weightOnly)
			}
		}
	}
}

// TestWeightOnlyExperts: weight-only expert kernels multiply the routed
// experts at the 16-bit rate. On an engine whose routed-expert figure is a
// share of the format's rate (llama.cpp's), they take the format's compute
// ratio longer (four times for FP4, twice for FP8, the same for BF16); on
// one whose figure is already a share of the 16-bit rate (vLLM's) they take
// the same time; the rest of the pass and a dense model do not move.
func TestWeightOnlyExperts(t *testing.T) {
	a, _ := DefaultAssumptions()
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	for _, engine := range []string{"vllm", "llama.cpp"} {
		for _, file := range []string{"qwen3.6-35b-a3b.json", "gpt-oss-120b.json", "qwen3-8b.json"} {
			for _, format := range []string{"nvfp4", "fp8", "bf16"} {
				f, _ := a.Format(format)
				w := Workload{Input: 8192, Output: 64, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9, Engine: engine}
				e0, err := newEstimator(load(t, file), f, c, w, a)
				if err != nil {
					t.Fatal(err)
				}
				w.WeightOnlyExperts = true
				e1, _ := newEstimator(load(t, file), f, c, w, a)
				ratio := map[string]float64{"nvfp4": 4, "fp8": 2, "bf16": 1}[format]
				if e0.preMoE.Of16Bit {
					ratio = 1
				}
				for _, n := range []int{1, 512, 8192} {
					c0, _, ec0, _ := e0.prefillPass(1, 0, n, true)
					c1, _, ec1, _ := e1.prefillPass(1, 0, n, true)
					if math.Abs(ec1-ec0*ratio) > 1e-12*max(ec1, 1) {
						t.Errorf("%s %s %s, %d tokens: expert multiplies %.4g s weight-only against %.4g, want %g times", engine, file, format, n, ec1, ec0, ratio)
					}
					if math.Abs((c1-ec1)-(c0-ec0)) > 1e-12 {
						t.Errorf("%s %s %s: the rest of the pass moved (%.4g against %.4g)", engine, file, format, c1-ec1, c0-ec0)
					}
				}
			}
		}
	}
}

// TestMoEReadsByBatch holds a mixture of experts' read rate to its rule for
// any batch: llama.cpp's decode_moe figure up to its decode_moe_max_tokens,
// above it the format's own decode figure where that is higher (the tiled
// kernels a dense prompt uses), never the catch-all and never below the
// mixture-of-experts figure; a dense model reads at its decode figure at any
// batch, and an engine without the bound (vLLM) at its mixture-of-experts
// figure at any batch. The figures are the data file's, written out here;
// a step and a pass of 9 tokens read their weights at them (their reads
// against the same plan without the bound). Ollama inherits the bound,
// saying so.
func TestMoEReadsByBatch(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := a.decodeMoEMaxTokens("llama.cpp"); n != 8 {
		t.Fatalf("llama.cpp's decode_moe_max_tokens %d, want MMVQ_MAX_BATCH_SIZE 8", n)
	}
	if n, src := a.decodeMoEMaxTokens("ollama"); n != 8 || !strings.Contains(src, "ollama takes llama.cpp's figure") {
		t.Errorf("ollama's bound %d (%q), want llama.cpp's 8, said so", n, src)
	}
	if n, _ := a.decodeMoEMaxTokens("vllm"); n != 0 {
		t.Errorf("vLLM has no vector-kernel bound; got %d", n)
	}
	unbound := a
	unbound.Engines = slices.Clone(a.Engines)
	for i := range unbound.Engines {
		unbound.Engines[i].DecodeMoEMaxTokens = 0
		unbound.Engines[i].FFNActivation = FFNActivation{}
	}
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	peak := c.MemoryBandwidth.Value * 1e9
	for _, tc := range []struct {
		file, format, engine string
		upTo8, past8         float64
	}{
		{"qwen3-30b-a3b.json", "q4_k_m", "llama.cpp", 0.51, 0.65}, // decode_moe q4_k_m, decode q4_k_m
		{"qwen3-30b-a3b.json", "q8_0", "llama.cpp", 0.72, 0.78},   // decode_moe q8_0, decode q8_0
		// No MXFP4 decode figure: the MoE one throughout, not the catch-all 0.73.
		{"gpt-oss-120b.json", "gguf-mxfp4", "llama.cpp", 0.76, 0.76},
		{"gpt-oss-120b.json", "gguf-mxfp4", "ollama", 0.57, 0.57},
		{"qwen3-8b.json", "q4_k_m", "llama.cpp", 0.65, 0.65}, // dense
		{"qwen3.6-35b-a3b.json", "fp8", "vllm", 0, 0},        // no bound: its decode_moe figure throughout
	} {
		f, _ := a.Format(tc.format)
		w := Workload{Input: 9, Output: 1, Concurrency: 9, KVDType: "fp16", GPUMemUtil: 0.9, Engine: tc.engine, PrefillChunk: 512}
		e, err := newEstimator(load(t, tc.file), f, c, w, a)
		if err != nil {
			t.Fatal(err)
		}
		if tc.upTo8 == 0 {
			tc.upTo8, tc.past8 = e.dec.Value, e.dec.Value
		}
		for _, n := range []int{1, 2, 7, 8, 9, 16, 512, 8192} {
			want := tc.upTo8
			if n > 8 {
				want = tc.past8
			}
			if got := e.bandwidthFor(n) / peak; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s %s on %s, %d tokens: reads at %.3f of peak, want %.3f", tc.file, tc.format, tc.engine, n, got, want)
			}
		}
		e0, _ := newEstimator(load(t, tc.file), f, c, w, unbound)
		e.act, e0.act = FFNActivation{}, FFNActivation{}
		m, _, _ := e.decodeStep(1, 1, 9)
		m0, _, _ := e0.decodeStep(1, 1, 9)
		_, p, _, _ := e.prefillPass(1, 0, 9, true)
		_, p0, _, _ := e0.prefillPass(1, 0, 9, true)
		if e.m.Experts == 0 || e.moeMax == 0 {
			tc.upTo8 = e0.dec.Value // the plan without the bound reads at its own figure
		}
		for what, r := range map[string]float64{"a 9-stream step": m0 / m, "a 9-token pass": p0 / p} {
			if want := tc.past8 / tc.upTo8; math.Abs(r-want) > 1e-9 {
				t.Errorf("%s %s on %s: %s reads %.4f times as fast as without the bound, want %.4f", tc.file, tc.format, tc.engine, what, r, want)
			}
		}
	}
	// For every engine and format, a mixture of experts never reads slower
	// past the bound than within it.
	for _, eng := range a.EngineNames() {
		for _, f := range a.Formats {
			e, err := newEstimator(load(t, "qwen3-30b-a3b.json"), f, c, Workload{Input: 1, Output: 1, Concurrency: 1, KVDType: "fp16", GPUMemUtil: 0.9, Engine: eng}, a)
			if err != nil {
				continue
			}
			if e.bandwidthFor(9) < e.bandwidthFor(8) {
				t.Errorf("%s %s: past 8 tokens reads at %.2f, below its %.2f within", eng, f.Name, e.wide.Value, e.dec.Value)
			}
		}
	}
}

// TestFFNActivationBytes holds the feed-forward activations' round trips
// to their rule: per token and block, the up (and gate) and activation
// outputs in f32 and the down projection's q8_1 input (i wide), the block
// input's q8_1 copy per up or gate multiply and the f32 output (h wide),
// each written and read once (an f16 copy, 2 bytes, for 16-bit weights);
// a mixture of experts' block once per routed expert and its shared expert
// once. The bytes grow linearly with the tokens, split over the
// tensor-parallel ranks, and an engine without the figure (vLLM) prices
// none; a pass's TTFT and a decode step of b streams gain exactly their
// time at the format's dense decode figure (Q4_K_M 0.65, BF16 the
// catch-all 0.73), written out here, whatever the step's weights read at.
func TestFFNActivationBytes(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	act := a.ffnActivation("llama.cpp")
	if act.Float != 4 || act.Quantized != 1.125 || act.Converted != 2 {
		t.Fatalf("llama.cpp's activations: %v, want f32, q8_1 and f16 (4, 1.125 and 2 bytes)", act)
	}
	if o := a.ffnActivation("ollama"); o.Float != act.Float || !strings.Contains(o.Source, "ollama takes llama.cpp's figure") {
		t.Errorf("ollama's activations %v, want llama.cpp's, said so", o)
	}
	set, _ := expect.Default()
	c, _ := PlatformCluster("dgx-spark", 1, a, set)
	for _, tc := range []struct {
		file, format string
		moves        float64
		perToken     func(m Model) float64
	}{
		// Gated dense: 2i(4·3+1.125) + 2h(1.125·2+4) = 26.25i + 12.5h.
		{"qwen3-8b.json", "q4_k_m", 0.65, func(m Model) float64 {
			return float64(m.Layers) * (26.25*float64(m.Intermediate) + 12.5*float64(m.Hidden))
		}},
		// 16-bit weights: f16 copies, 2i(4·3+2) + 2h(2·2+4) = 28i + 16h.
		{"qwen3-8b.json", "bf16", 0.73, func(m Model) float64 {
			return float64(m.Layers) * (28*float64(m.Intermediate) + 16*float64(m.Hidden))
		}},
		{"qwen3-30b-a3b.json", "q4_k_m", 0.65, func(m Model) float64 {
			return float64(m.MoELayers*m.ExpertsPerToken) * (26.25*float64(m.ExpertIntermediate) + 12.5*float64(m.Hidden))
		}},
		// Plain (squared ReLU) blocks: 2i(4·2+1.125) + 2h(1.125+4) = 18.25i + 10.25h,
		// the routed experts in the latent width, the shared expert in the hidden.
		{"nemotron-3-super-120b-a12b-nvfp4.json", "q4_k_m", 0.65, func(m Model) float64 {
			return float64(m.MoELayers) * (float64(m.ExpertsPerToken)*(18.25*float64(m.ExpertIntermediate)+10.25*float64(m.LatentSize)) +
				18.25*float64(m.SharedIntermediate) + 10.25*float64(m.Hidden))
		}},
	} {
		m := load(t, tc.file)
		f, _ := a.Format(tc.format)
		for _, input := range []int{1, 7, 512, 3000} {
			w := Workload{Input: input, Output: 1, Concurrency: 1, KVDType: "fp16", GPUMemUtil: 0.9, Engine: "llama.cpp", PrefillChunk: 512}
			e, err := newEstimator(m, f, c, w, a)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.perToken(m) * float64(input)
			if got := e.activationBytes(1, input); math.Abs(got/want-1) > 1e-12 {
				t.Errorf("%s, %d tokens: %.0f bytes of activations, want %.0f", tc.file, input, got, want)
			}
			if got := e.activationBytes(2, input); math.Abs(2*got/want-1) > 1e-12 {
				t.Errorf("%s, %d tokens at TP2: %.0f bytes a node, want half of %.0f", tc.file, input, got, want)
			}
			without := a
			without.Engines = slices.Clone(a.Engines)
			for i := range without.Engines {
				without.Engines[i].FFNActivation = FFNActivation{}
			}
			e0, _ := newEstimator(m, f, c, w, without)
			var wantGain float64
			rate := c.MemoryBandwidth.Value * 1e9 * tc.moves
			e.chunks(func(_, n int) { wantGain += tc.perToken(m) * float64(n) / rate })
			if d := e.ttft(1, 1) - e0.ttft(1, 1); math.Abs(d-wantGain) > 1e-9 {
				t.Errorf("%s, %d tokens: TTFT gains %.6f s, want the activations' %.6f s", tc.file, input, d, wantGain)
			}
			for _, b := range []int{1, 2, 9, 32} {
				m1, _, _ := e.decodeStep(1, 1, b)
				m0, _, _ := e0.decodeStep(1, 1, b)
				if d, want := m1-m0, tc.perToken(m)*float64(b)/rate; math.Abs(d-want) > 1e-12 {
					t.Errorf("%s, %d streams: the step's reads gain %.6f s, want the activations' %.6f s", tc.file, b, d, want)
				}
			}
		}
	}
	f, _ := a.Format("fp8")
	e, _ := newEstimator(load(t, "qwen3-8b.json"), f, c, Workload{Input: 512, Output: 1, Concurrency: 1, KVDType: "fp16", GPUMemUtil: 0.9, Engine: "vllm"}, a)
	if b := e.activationBytes(1, 512); b != 0 {
		t.Errorf("vLLM prices no activation round trips apart from its prefill figure; got %.0f bytes", b)
	}
}
