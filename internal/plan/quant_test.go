package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// nemotronSuperNVFP4 is the NVFP4 checkpoint's config, its quantization_config
// (mixed precision: quantized_layers) included.
const nemotronSuperNVFP4 = "nemotron-3-super-120b-a12b-nvfp4.json"

func weightsGB(t *testing.T, m Model, format string) float64 {
	t.Helper()
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Format(format)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEstimator(m, f, Cluster{Nodes: 1}, Workload{Engine: "vllm", KVDType: "fp8"}, a)
	if err != nil {
		t.Fatal(err)
	}
	return e.weightBytes() / 1e9
}

// TestMixedPrecisionCheckpoint prices Nemotron-3 Super NVFP4 as its own
// quantisation config stores it: the routed experts NVFP4, the projections
// it lists as FP8 at one byte, and every projection it leaves out (the
// attention layers' q, k, v, most latent projections, some Mamba-2 ones) at
// 16 bits. kubis.ai measures 69.5 GiB (74.6 GB) resident under vLLM; NVFP4
// throughout gives 69.4 GB, the checkpoint's own precision 74.4 GB.
func TestMixedPrecisionCheckpoint(t *testing.T) {
	m := load(t, nemotronSuperNVFP4)
	s := m.Stored
	if s == nil || s.Format != "nvfp4" || s.Expert != 0.5625 || len(m.Unread) != 0 {
		t.Fatalf("stored %+v, unread %v; want the experts at NVFP4's 0.5625 bytes and nothing unread", s, m.Unread)
	}
	plain := load(t, "nemotron-3-super-120b-a12b.json")
	got, flat := weightsGB(t, m, "nvfp4"), weightsGB(t, plain, "nvfp4")
	if math.Abs(got/74.6-1) > 0.01 || math.Abs(flat-69.42) > 0.01 {
		t.Errorf("weights %.2f GB as stored (kubis measures 74.6 GB resident), %.2f GB as NVFP4 throughout (want 69.42)", got, flat)
	}
	// The checkpoint's precision describes its NVFP4 weights only: another
	// --weights format prices another checkpoint.
	if a, b := weightsGB(t, m, "fp8"), weightsGB(t, plain, "fp8"); a != b {
		t.Errorf("--weights fp8: %.3f GB with the NVFP4 checkpoint's config, %.3f without", a, b)
	}
	// The same file as hf_quant_config.json gives the same prices.
	b, err := os.ReadFile("testdata/quant/nemotron-3-super-120b-a12b-nvfp4.hf_quant_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.ApplyQuantConfig(b); err != nil {
		t.Fatal(err)
	}
	if plain.Stored == nil || *plain.Stored != (Stored{Format: s.Format, Mixer: s.Mixer, FFN: s.FFN, Expert: s.Expert, Source: "hf_quant_config.json quantized_layers", Rule: ruleListed}) {
		t.Errorf("hf_quant_config.json gives %+v, config.json %+v", plain.Stored, s)
	}
}

// TestEveryListedProjection: taking any one entry out of quantized_layers
// leaves that projection unquantised, so the weights grow by exactly its
// size times (2 − its algorithm's bytes); an expert entry stands for every
// routed expert of its layer. The sizes are worked out here from the
// config's widths, not by the code under test.
func TestEveryListedProjection(t *testing.T) {
	raw, err := os.ReadFile("testdata/models/" + nemotronSuperNVFP4)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	const h, inner, latent = 4096.0, 128 * 64.0, 1024.0
	size := map[string]float64{
		"in_proj":                  h * (2*inner + 2*8*128 + 128),
		"out_proj":                 inner * h,
		"o_proj":                   32 * 128 * h,
		"shared_experts.up_proj":   h * 5376,
		"shared_experts.down_proj": 5376 * h,
		"fc1_latent_proj":          h * latent,
		"fc2_latent_proj":          latent * h,
		"experts.0.up_proj":        512 * latent * 2688,
		"experts.0.down_proj":      512 * 2688 * latent,
	}
	algo := map[string]float64{"FP8": 1, "NVFP4": 0.5625}
	base := weightsGB(t, load(t, nemotronSuperNVFP4), "nvfp4")
	layers := cfg["quantization_config"].(map[string]any)["quantized_layers"].(map[string]any)
	name := regexp.MustCompile(`^backbone\.layers\.\d+\.mixer\.(.+)$`)
	for key, v := range layers {
		mm := name.FindStringSubmatch(key)
		if mm == nil || size[mm[1]] == 0 {
			t.Fatalf("%s: no size for it in this test", key)
		}
		delete(layers, key)
		b, _ := json.Marshal(cfg)
		layers[key] = v
		m, err := ParseConfig(b, "cut")
		if err != nil {
			t.Fatal(err)
		}
		want := size[mm[1]] * (2 - algo[v.(map[string]any)["quant_algo"].(string)]) / 1e9
		if got := weightsGB(t, m, "nvfp4") - base; math.Abs(got-want) > 1e-6*want {
			t.Errorf("without %s: %+.6f GB, want %+.6f", key, got, want)
		}
	}
}

// TestUnknownQuantAlgoNamed: an algorithm the planner does not know changes
// the size, so it is named and its checkpoint priced as --weights.
func TestUnknownQuantAlgoNamed(t *testing.T) {
	raw, err := os.ReadFile("testdata/models/" + nemotronSuperNVFP4)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(strings.Replace(string(raw), `"quant_algo": "FP8"`, `"quant_algo": "FP6_E3M2"`, 1))
	m, err := ParseConfig(b, "cut")
	if err != nil {
		t.Fatal(err)
	}
	if m.Stored != nil || len(m.Unread) != 1 || !strings.Contains(m.Unread[0], `"FP6_E3M2"`) {
		t.Errorf("stored %+v, unread %q; want no stored precision and FP6_E3M2 named", m.Stored, m.Unread)
	}
	// A module a single-format config leaves unconverted that the planner
	// cannot place is named too; attention, heads and routers are placed.
	c := `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
	  "quantization_config": {"quant_method": "modelopt", "exclude_modules": ["lm_head", "model.layers.*.self_attn", "model.layers.0.mlp"]}}`
	m, err = ParseConfig([]byte(c), "cut")
	if err != nil {
		t.Fatal(err)
	}
	if !m.UnquantizedAttention || len(m.Unread) != 1 || !strings.Contains(m.Unread[0], `"model.layers.0.mlp"`) {
		t.Errorf("unquantised attention %v, unread %q", m.UnquantizedAttention, m.Unread)
	}
}

// TestSmallExpertBatchPrefill: a prefill pass whose experts each get few
// tokens is bound by reading them, whatever the rest of the pass is bound
// by, so the pass takes the rest's roofline plus the experts' own; with
// many tokens per expert both are compute-bound and the pass is its
// compute. The crossing is where an expert's tokens multiply for as long as
// its weights take to read: bytes per weight × rate / (2 × bandwidth)
// tokens. A dense model's pass is max(compute, reads) as before.
func TestSmallExpertBatchPrefill(t *testing.T) {
	for _, tc := range []struct {
		file  string
		input int
	}{{"qwen3-30b-a3b.json", 128}, {"qwen3-30b-a3b.json", 512}, {"qwen3-30b-a3b.json", 16384}, {"gpt-oss-120b.json", 128}, {"gpt-oss-120b.json", 512}, {"llama-3.1-8b.json", 512}} {
		p := sparkPlan(t, tc.file, "nvfp4", 1, Workload{Input: tc.input, Output: 1, Concurrency: 1, KVDType: "fp8", PrefillChunk: tc.input})
		a, _ := DefaultAssumptions()
		f, _ := a.Format("nvfp4")
		e, err := newEstimator(load(t, tc.file), f, p.Cluster, p.Workload, a)
		if err != nil {
			t.Fatal(err)
		}
		c, m, ec, em := e.prefillPass(1, 0, tc.input, true)
		perExpert := float64(tc.input*e.m.ExpertsPerToken) / float64(max(e.m.Experts, 1))
		want := max(c, m)
		if e.m.Experts > 0 {
			want = max(c-ec, m-em) + max(ec, em)
			crossing := e.expertBytes() * e.expertRate() * e.preMoE.Value / (2 * e.bandwidth())
			if em > ec != (perExpert < crossing) {
				t.Errorf("%s, %d tokens (%.0f per expert, crossing at %.0f): experts' reads %.1f ms, multiplies %.1f ms", tc.file, tc.input, perExpert, crossing, em*1e3, ec*1e3)
			}
		}
		if got := e.passTime(1, 0, tc.input, true); math.Abs(got-want) > 1e-12 || got < max(c, m) {
			t.Errorf("%s, %d tokens: pass %.3f ms, want %.3f (compute %.3f, reads %.3f)", tc.file, tc.input, got*1e3, want*1e3, c*1e3, m*1e3)
		}
	}
}

// FuzzApplyQuantConfig: any hf_quant_config.json is read or refused, never
// a panic, and what it prices stays a size (each class between NVFP4's
// smallest and 16 bits).
func FuzzApplyQuantConfig(f *testing.F) {
	b, err := os.ReadFile("testdata/quant/nemotron-3-super-120b-a12b-nvfp4.hf_quant_config.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"backbone.layers.1.mixer.experts.7.up_proj": {"quant_algo": "W4A16_AWQ", "group_size": 128}}}}`))
	f.Add([]byte(`{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head", "backbone.layers.*.mixer.in_proj"]}}`))
	cfg, err := os.ReadFile("testdata/models/nemotron-3-super-120b-a12b.json")
	if err != nil {
		f.Fatal(err)
	}
	base, err := ParseConfig(cfg, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := base
		m.Unread = nil
		if m.ApplyQuantConfig(b) != nil || m.Stored == nil {
			return
		}
		for _, v := range []float64{m.Stored.Mixer, m.Stored.FFN, m.Stored.Expert} {
			if v != 0 && (v < 0.5 || v > 2) || math.IsNaN(v) {
				t.Fatalf("stored %+v", *m.Stored)
			}
		}
	})
}

// withQuant is the model config file with the quantization_config of
// testdata/quant/<quant>.quantization_config.json set on it.
func withQuant(t *testing.T, model, quant string) Model {
	t.Helper()
	raw, err := os.ReadFile("testdata/models/" + model)
	if err != nil {
		t.Fatal(err)
	}
	q, err := os.ReadFile("testdata/quant/" + quant + ".quantization_config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["quantization_config"] = q
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseConfig(b, model)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// linearParams is every weight of the decoder's linear layers (all but the
// embeddings and the output layer), worked out here from the config.
func linearParams(m Model) float64 {
	h := float64(m.Hidden)
	attn := h*float64(m.Heads*m.HeadDim)*2 + 2*h*float64(m.KVHeads*m.HeadDim)
	ffn := 3 * h * float64(m.Intermediate)
	return float64(m.Layers) * (attn + ffn)
}

// TestGroupQuantizedCheckpoints prices GPTQ, AWQ and block-scaled FP8
// checkpoints by their own quantization_config: bits/8 + (2 + bits/8) /
// group_size per weight for GPTQ and AWQ (a 16-bit scale and a zero point
// of the weights' width per group), 1 + 4 / (block rows × columns) for
// FP8 (a 32-bit scale per block).
func TestGroupQuantizedCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		model, quant, format string
		bytes                float64
	}{
		{"qwen3-235b-a22b.json", "qwen3-235b-a22b-gptq-int4", "int4", 0.5 + 2.5/128},
		{"qwen3-1.7b.json", "qwen3-1.7b-gptq-int8", "int8", 1 + 3.0/128},
		{"llama-3.1-8b.json", "zephyr-7b-alpha-awq", "int4", 0.5 + 2.5/128},
		{"deepseek-v3.json", "deepseek-v3", "fp8", 1 + 4.0/(128*128)},
		{"qwen3-30b-a3b.json", "qwen3-30b-a3b-fp8", "fp8", 1 + 4.0/(128*128)},
	} {
		m := withQuant(t, tc.model, tc.quant)
		want := Stored{Format: tc.format, Mixer: tc.bytes, FFN: tc.bytes, Expert: tc.bytes, Source: "config.json quantization_config", Rule: ruleUniform}
		if m.Stored == nil || *m.Stored != want || len(m.Unread) != 0 {
			t.Errorf("%s: stored %+v, unread %q; want %+v", tc.quant, m.Stored, m.Unread, want)
		}
	}
	// GPTQ's 4-bit, group-128 checkpoint is what the int4 format prices.
	if a, b := weightsGB(t, withQuant(t, "qwen3-235b-a22b.json", "qwen3-235b-a22b-gptq-int4"), "int4"), weightsGB(t, load(t, "qwen3-235b-a22b.json"), "int4"); math.Abs(a/b-1) > 1e-12 {
		t.Errorf("Qwen3-235B GPTQ-Int4 %.3f GB, the int4 format %.3f GB", a, b)
	}
	// An 8-bit GPTQ checkpoint's scales and zero points add 3/128 of a byte to
	// every linear weight over the int8 format's one byte.
	m, plain := withQuant(t, "qwen3-1.7b.json", "qwen3-1.7b-gptq-int8"), load(t, "qwen3-1.7b.json")
	got := weightsGB(t, m, "int8") - weightsGB(t, plain, "int8")
	if want := linearParams(plain) * 3 / 128 / 1e9; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("Qwen3-1.7B GPTQ-Int8 adds %.4f GB to int8, want %.4f", got, want)
	}
	// Any width the planner has and any group: the bytes are the formula's.
	for _, bits := range []int{4, 8} {
		for _, group := range []int{16, 32, 64, 128, 1024, -1} {
			for _, method := range []string{`"gptq"`, `"awq", "zero_point": false`} {
				c := fmt.Sprintf(`{"num_hidden_layers": 2, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 1000, "intermediate_size": 4096,
				  "quantization_config": {"quant_method": %s, "bits": %d, "group_size": %d}}`, method, bits, group)
				m, err := ParseConfig([]byte(c), "cut")
				if err != nil {
					t.Fatal(err)
				}
				g, b := float64(group), float64(bits)/8
				if group < 0 {
					g = 2048
				}
				per := 2 + b
				if strings.Contains(method, "awq") {
					per = 2
				}
				if m.Stored == nil || math.Abs(m.Stored.FFN-(b+per/g)) > 1e-15 || m.Stored.Format != intFormats[bits] {
					t.Errorf("%s bits %d group %d: stored %+v, want %.6f bytes", method, bits, group, m.Stored, b+per/g)
				}
			}
		}
	}
}

// TestQuantizationFieldsNamed: what changes a checkpoint's size and is not
// read is named, and the checkpoint priced as --weights; what the planner
// places (attention kept in 16 bits, routers, norms) is not.
func TestQuantizationFieldsNamed(t *testing.T) {
	m := withQuant(t, "qwen3.5-35b-a3b.json", "qwen3.6-35b-a3b-awq")
	if !m.UnquantizedAttention || m.Stored == nil || m.Stored.Mixer != 2 || m.Stored.Expert != 0.5+2.5/128 {
		t.Errorf("attention unquantised %v, stored %+v", m.UnquantizedAttention, m.Stored)
	}
	var names []string
	for _, u := range m.Unread {
		if i := strings.Index(u, `excludes "`); i >= 0 {
			names = append(names, strings.SplitN(u[i+10:], `"`, 2)[0])
		}
	}
	if want := []string{"visual", "linear_attn", "shared_expert", "layers.0.", "mtp"}; !slices.Equal(names, want) {
		t.Errorf("named %q, want %q", names, want)
	}
	base := `{"num_hidden_layers": 2, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 1000, "intermediate_size": 4096, "quantization_config": %s}`
	for q, want := range map[string]string{
		`{"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": {"-:.*mlp.gate": {}, "+:.*down_proj": {"bits": 8}}}`:                      "dynamic: per-module overrides of 2 module(s)",
		`{"quant_method": "auto-round", "bits": 4, "group_size": 128, "extra_config": {"model.layers.0.mlp.shared_expert.down_proj": {"bits": 16}}}`: "extra_config: per-module overrides of 1 module(s)",
		`{"quant_method": "gptq", "bits": 3, "group_size": 128}`:                                                                                     "bits 3, group_size 128: no format the planner has",
		`{"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": true}`:                                                                    "lm_head: true",
		`{"quant_method": "hqq", "nbits": 4, "group_size": 64}`:                                                                                      `quant_method "hqq"`,
		`{"quant_method": "fp8", "weight_block_size": [1, 1]}`:                                                                                       "weight_block_size [1 1]",
		`{"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}, "group_1": {"weights": {"num_bits": 8, "type": "int", "group_size": 128}}}}`: `config_groups (format "pack-quantized")`,
	} {
		m, err := ParseConfig(fmt.Appendf(nil, base, q), "cut")
		if err != nil {
			t.Fatal(err)
		}
		if m.Stored != nil || len(m.Unread) == 0 || !strings.Contains(strings.Join(m.Unread, "; "), want) {
			t.Errorf("%s: stored %+v, unread %q; want %q named and nothing stored", q, m.Stored, m.Unread, want)
		}
	}
	// compressed-tensors' one scheme is read: W4A16 in groups of 128, NVFP4.
	for q, want := range map[string]Stored{
		`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128, "symmetric": true}}}}`: {Format: "int4", Mixer: 0.5 + 2.0/128, FFN: 0.5 + 2.0/128, Expert: 0.5 + 2.0/128},
		`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}`:                   {Format: "nvfp4", Mixer: 0.5625, FFN: 0.5625, Expert: 0.5625},
	} {
		m, err := ParseConfig(fmt.Appendf(nil, base, q), "cut")
		if err != nil {
			t.Fatal(err)
		}
		want.Source, want.Rule = "config.json quantization_config", ruleUniform
		if m.Stored == nil || *m.Stored != want || len(m.Unread) != 0 {
			t.Errorf("%s: stored %+v, unread %q; want %+v", q, m.Stored, m.Unread, want)
		}
	}
}

// TestStoredPrecisionReported: the plan says which bytes it priced a
// checkpoint at and how they were worked out.
func TestStoredPrecisionReported(t *testing.T) {
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	c, err := PlatformCluster("dgx-spark", 1, a, set)
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Format("int8")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Estimate(withQuant(t, "qwen3-1.7b.json", "qwen3-1.7b-gptq-int8"), f, c, Workload{Input: 128, Output: 128, Concurrency: 1, KVDType: "bf16", GPUMemUtil: 0.9, Engine: "vllm"}, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range pl.Assumed {
		if strings.Contains(n.Unit, "as the checkpoint stores them") && strings.Contains(n.Unit, "1.023") && strings.Contains(n.Source, "with its scales and zero points") {
			return
		}
	}
	t.Errorf("no stored-precision assumption for the GPTQ-Int8 checkpoint in %+v", pl.Assumed)
}
