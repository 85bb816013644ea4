package plan

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed assumptions.yaml
var assumptionsYAML []byte

// Format is how weights are stored.
type Format struct {
	Name          string   `yaml:"name" json:"name"`
	Aliases       []string `yaml:"aliases" json:"-"`
	BytesPerParam float64  `yaml:"bytes_per_param" json:"bytes_per_param"`
	Compute       string   `yaml:"compute" json:"compute"`
	// HeadBytesPerParam is what the embeddings and lm_head take where the
	// format quantises them too (GGUF); zero keeps them 16-bit.
	HeadBytesPerParam float64 `yaml:"head_bytes_per_param" json:"head_bytes_per_param,omitempty"`
	// NonExpertBytesPerParam is what attention and dense weights take where
	// the format stores them apart from the routed experts (GGUF MXFP4_MOE);
	// zero stores them like the experts (or 16-bit where the checkpoint
	// leaves attention unquantised).
	NonExpertBytesPerParam float64 `yaml:"non_expert_bytes_per_param" json:"non_expert_bytes_per_param,omitempty"`
	// EmbedBytesPerParam is the input embedding table's type where it differs
	// from the output's (GGUF K-quants keep token_embd at the body's type and
	// the output at Q6_K); zero: as the head.
	EmbedBytesPerParam float64 `yaml:"embed_bytes_per_param" json:"embed_bytes_per_param,omitempty"`
	// MixBytesPerParam is what llama.cpp's _M mixes give the attention value
	// projection and the feed-forward down projection in half the layers
	// (use_more_bits in llama-quant.cpp); zero: no mix.
	MixBytesPerParam float64 `yaml:"mix_bytes_per_param" json:"mix_bytes_per_param,omitempty"`
	Source           string  `yaml:"source" json:"source"`
}

// PlatformNumbers are one platform's per-node figures and where they come from.
type PlatformNumbers struct {
	Name                string  `yaml:"name"`
	MemoryGB            float64 `yaml:"memory_gb"`
	MemorySource        string  `yaml:"memory_source"`
	MemoryBandwidthWire string  `yaml:"memory_bandwidth_wire"`
	BF16TFLOPS          float64 `yaml:"bf16_tflops"`
	BF16Source          string  `yaml:"bf16_source"`
	// BF16PeakTFLOPS is the chip's dense 16-bit tensor-core peak, the
	// ceiling no measurement on it can pass.
	BF16PeakTFLOPS float64 `yaml:"bf16_peak_tflops"`
	// GPUsPerNode is how many GPUs one node has; a measurement of more on
	// one host is from another platform.
	GPUsPerNode            int     `yaml:"gpus_per_node"`
	GPUsPerNodeSource      string  `yaml:"gpus_per_node_source"`
	BF16PeakSource         string  `yaml:"bf16_peak_source"`
	AllReduceBusBWExpect   string  `yaml:"allreduce_busbw_expectation"`
	AllReduceLatencyUS     float64 `yaml:"allreduce_latency_us"`
	AllReduceLatencyBytes  int64   `yaml:"allreduce_latency_bytes"`
	AllReduceLatencySource string  `yaml:"allreduce_latency_source"`
}

// Efficiency holds what every engine keeps back.
type Efficiency struct {
	ReserveGiB    float64 `yaml:"reserve_gib"`
	ReserveSource string  `yaml:"reserve_source"`
}

// Factor is one engine efficiency: the share of the peak rate a phase
// achieves with one weight format ("*": every format without its own).
type Factor struct {
	// Engine is the engine whose figure it is (filled by the lookup).
	Engine string  `yaml:"-"`
	Format string  `yaml:"format"`
	Value  float64 `yaml:"value"`
	Source string  `yaml:"source"`
	// Of16Bit marks a prefill_moe figure that is a share of the 16-bit
	// tensor-core rate, for the routed experts in every weight format: the
	// engine's grouped expert kernels were measured to reach the same rate
	// whatever the format multiplies in (its source says where).
	Of16Bit bool `yaml:"of_16_bit"`
}

// FFNActivation is the size of one activation element a feed-forward
// block writes to memory and reads back between its multiplies: Float for
// the multiplies' outputs and the activation function's, Quantized for the
// copies of their inputs the quantised multiplies read.
type FFNActivation struct {
	Float     float64 `yaml:"float_bytes"`
	Quantized float64 `yaml:"quantized_bytes"`
	// Converted is the bytes a value of a multiply's input copy takes where
	// the weights are 16-bit (converted to 16-bit floats, not quantised).
	Converted float64 `yaml:"converted_bytes"`
	Source    string  `yaml:"source"`
}

// Engine is one serving engine's factors between peak and achieved rates:
// decode as a share of peak memory bandwidth, prefill as a share of the
// format's tensor-core rate, each per weight format. An engine without a
// figure for a format and phase takes Inherit's (Ollama runs llama.cpp's).
type Engine struct {
	Name               string   `yaml:"name"`
	Aliases            []string `yaml:"aliases"`
	Inherit            string   `yaml:"inherit"`
	InheritSource      string   `yaml:"inherit_source"`
	PrefillChunk       int      `yaml:"prefill_chunk"`
	PrefillChunkSource string   `yaml:"prefill_chunk_source"`
	// UngraphedLayerMs is what each layer adds, in milliseconds, to a pass
	// or decode step of more than one token where the engine launches its
	// kernels one by one instead of replaying a CUDA graph (llama.cpp
	// captures graphs for one-token steps only); zero: none.
	UngraphedLayerMs     float64 `yaml:"ungraphed_layer_ms"`
	UngraphedLayerSource string  `yaml:"ungraphed_layer_source"`
	// DecodeMoEMaxTokens is the most tokens a decode step or prefill pass
	// may multiply for the DecodeMoE figures to apply (llama.cpp reads the
	// experts with its vector kernels up to it); a larger batch reads them
	// with the tiled kernels a dense model's prompts use, at the format's
	// Decode figure. Zero: DecodeMoE applies to every batch.
	DecodeMoEMaxTokens       int    `yaml:"decode_moe_max_tokens"`
	DecodeMoEMaxTokensSource string `yaml:"decode_moe_max_tokens_source"`
	// FFNActivation is what the feed-forward activations of each token a
	// pass or step multiplies take in memory between the multiplies, where
	// the engine writes them out and reads them back (zero: not priced
	// apart from the engine's figures).
	FFNActivation FFNActivation `yaml:"ffn_activation"`
	Decode        []Factor      `yaml:"decode"`
	// DecodeMoE, where given, replaces Decode for a mixture-of-experts
	// model's decode step (its routed experts read by their own kernels).
	DecodeMoE []Factor `yaml:"decode_moe"`
	Prefill   []Factor `yaml:"prefill"`
	// PrefillMoE, where given, replaces Prefill for a mixture of experts'
	// routed-expert multiplies in prefill (grouped per-expert kernels); the
	// rest of its prefill takes Prefill.
	PrefillMoE []Factor `yaml:"prefill_moe"`
	// Attention is the share of the measured 16-bit GEMM rate a prefill's
	// attention score and value products achieve ("*": every weight format),
	// whatever format the weights are in.
	Attention []Factor `yaml:"attention"`
	// LinearAttention, where given, replaces Attention for the products of
	// the linear-attention (Gated DeltaNet) layers' chunked scan in
	// prefill: a share of the measured 16-bit GEMM rate.
	LinearAttention []Factor `yaml:"linear_attention"`
}

// The phases an efficiency applies to: decode (a mixture of experts' decode
// apart), prefill's weight multiplies, and prefill's attention products.
const (
	PhaseDecode     = "decode"
	PhaseDecodeMoE  = "decode-moe"
	PhasePrefill    = "prefill"
	PhasePrefillMoE = "prefill-moe"
	PhaseAttention  = "attention"
	PhaseLinear     = "linear-attention"
)

// factors is the engine's list for phase.
func (e Engine) factors(phase string) []Factor {
	switch phase {
	case PhasePrefill:
		return e.Prefill
	case PhaseAttention:
		return e.Attention
	case PhaseLinear:
		if len(e.LinearAttention) > 0 {
			return e.LinearAttention
		}
		return e.Attention
	case PhaseDecodeMoE:
		if len(e.DecodeMoE) > 0 {
			return e.DecodeMoE
		}
	case PhasePrefillMoE:
		if len(e.PrefillMoE) > 0 {
			return e.PrefillMoE
		}
		return e.Prefill
	}
	return e.Decode
}

// Assumptions is the whole data file.
type Assumptions struct {
	Formats      []Format           `yaml:"formats"`
	Unquantized  float64            `yaml:"unquantized_bytes_per_param"`
	ComputeRatio map[string]float64 `yaml:"compute_ratio"`
	Platforms    []PlatformNumbers  `yaml:"platforms"`
	Efficiency   Efficiency         `yaml:"efficiency"`
	// Engines lists the serving engines; the first is the default.
	Engines []Engine `yaml:"engines"`
}

var defaultAssumptions = sync.OnceValues(func() (Assumptions, error) { return ParseAssumptions(assumptionsYAML) })

// DefaultAssumptions returns the embedded data file (checked by the tests).
func DefaultAssumptions() (Assumptions, error) { return defaultAssumptions() }

// ParseAssumptions reads and checks an assumptions file: every number needs its source.
func ParseAssumptions(b []byte) (Assumptions, error) {
	var a Assumptions
	if err := yaml.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("plan assumptions: %w", err)
	}
	for _, f := range a.Formats {
		if f.BytesPerParam <= 0 || f.Source == "" || a.ComputeRatio[f.Compute] <= 0 {
			return a, fmt.Errorf("plan assumptions: format %q needs bytes_per_param, a known compute rate and a source", f.Name)
		}
	}
	for _, p := range a.Platforms {
		if p.MemoryGB <= 0 || p.MemorySource == "" || p.BF16TFLOPS <= 0 || p.BF16Source == "" || p.AllReduceLatencyUS <= 0 || p.AllReduceLatencySource == "" ||
			p.BF16PeakTFLOPS < p.BF16TFLOPS || p.BF16PeakSource == "" || p.GPUsPerNode < 1 || p.GPUsPerNodeSource == "" {
			return a, fmt.Errorf("plan assumptions: platform %q needs memory, compute and latency with their sources", p.Name)
		}
	}
	if a.Efficiency.ReserveSource == "" || a.Unquantized <= 0 {
		return a, fmt.Errorf("plan assumptions: the reserve and the unquantized bytes per weight need their sources")
	}
	if len(a.Engines) == 0 {
		return a, fmt.Errorf("plan assumptions: no engines")
	}
	for _, e := range a.Engines {
		if e.Inherit != "" && e.InheritSource == "" {
			return a, fmt.Errorf("plan assumptions: engine %q inherits %q without a source", e.Name, e.Inherit)
		}
		if e.PrefillChunk < 0 || (e.PrefillChunk > 0 && e.PrefillChunkSource == "") {
			return a, fmt.Errorf("plan assumptions: engine %q: a prefill chunk needs its source", e.Name)
		}
		if e.UngraphedLayerMs < 0 || (e.UngraphedLayerMs > 0 && e.UngraphedLayerSource == "") {
			return a, fmt.Errorf("plan assumptions: engine %q: an ungraphed layer cost needs its source", e.Name)
		}
		if e.DecodeMoEMaxTokens < 0 || (e.DecodeMoEMaxTokens > 0 && e.DecodeMoEMaxTokensSource == "") {
			return a, fmt.Errorf("plan assumptions: engine %q: decode_moe_max_tokens needs its source", e.Name)
		}
		if act := e.FFNActivation; act.Float < 0 || act.Quantized < 0 || ((act.Float > 0 || act.Quantized > 0) && act.Source == "") {
			return a, fmt.Errorf("plan assumptions: engine %q: ffn_activation needs sizes of zero or more and its source", e.Name)
		}
		for _, f := range slices.Concat(e.Decode, e.DecodeMoE, e.Prefill, e.PrefillMoE, e.Attention, e.LinearAttention) {
			if f.Value <= 0 || f.Value > 1 || f.Source == "" {
				return a, fmt.Errorf("plan assumptions: engine %q, format %q: efficiencies must lie in (0, 1] and carry their sources", e.Name, f.Format)
			}
		}
	}
	for _, e := range a.Engines {
		for _, ph := range []string{PhaseDecode, PhaseDecodeMoE, PhasePrefill, PhasePrefillMoE} {
			if _, err := a.Factor(e.Name, ph, "*"); err != nil {
				return a, fmt.Errorf("plan assumptions: %w", err)
			}
		}
		if a.prefillChunk(e.Name) <= 0 {
			return a, fmt.Errorf("plan assumptions: engine %q has no prefill chunk, nor one it inherits", e.Name)
		}
	}
	return a, nil
}

// Engine finds a serving engine by name or alias; "" is the default (the first).
func (a Assumptions) Engine(name string) (Engine, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" && len(a.Engines) > 0 {
		return a.Engines[0], nil
	}
	var names []string
	for _, e := range a.Engines {
		if e.Name == n || slices.Contains(e.Aliases, n) {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return Engine{}, fmt.Errorf("unknown engine %q (want one of %s)", name, strings.Join(names, ", "))
}

// Format finds a weight format by name or alias.
func (a Assumptions) Format(name string) (Format, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, f := range a.Formats {
		if f.Name == n || slices.Contains(f.Aliases, n) {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("unknown weight format %q (want one of %s)", name, strings.Join(a.FormatNames(), ", "))
}

// FormatNames lists the formats and their aliases.
func (a Assumptions) FormatNames() []string {
	var out []string
	for _, f := range a.Formats {
		out = append(out, f.Name)
		out = append(out, f.Aliases...)
	}
	return out
}

// Platform finds a platform's numbers.
func (a Assumptions) Platform(name string) (PlatformNumbers, bool) {
	for _, p := range a.Platforms {
		if p.Name == name {
			return p, true
		}
	}
	return PlatformNumbers{}, false
}

// Factor is engine's efficiency for phase with weights of format: the
// format's own figure, else the engine's "*", else the engine it inherits
// from (its source then says so). A mixture of experts' decode takes the
// engine's decode_moe figures where it has them: the format's (else its
// decode figure for the format), else decode_moe's "*". Its routed experts'
// prefill multiplies take the engine's prefill_moe figures where it has them
// (the format's, else prefill_moe's "*"), else its prefill figures.
func (a Assumptions) Factor(engine, phase, format string) (Factor, error) {
	name := engine
	var via []string
	for range 4 {
		e, err := a.Engine(name)
		if err != nil {
			return Factor{}, err
		}
		lists := [][]Factor{e.factors(phase)}
		if phase == PhaseDecodeMoE && len(e.DecodeMoE) > 0 {
			// The format's own decode figure comes before the catch-all of
			// mixtures of experts: a format's kernels are its own.
			lists = append(lists, e.Decode)
		}
		for _, want := range []string{format, "*"} {
			for _, list := range lists {
				for _, f := range list {
					if f.Format == want {
						f.Engine = e.Name
						if len(via) > 0 {
							f.Source = strings.Join(via, "; ") + "; " + e.Name + ": " + f.Source
						}
						return f, nil
					}
				}
			}
		}
		if e.Inherit == "" {
			break
		}
		via = append(via, e.Name+" takes "+e.Inherit+"'s figure ("+e.InheritSource+")")
		name = e.Inherit
	}
	return Factor{}, fmt.Errorf("engine %q has no %s efficiency for %s weights", engine, phase, format)
}

// prefillChunk is how many prompt tokens engine prefills in one pass.
func (a Assumptions) prefillChunk(engine string) int {
	name := engine
	for range 4 {
		e, err := a.Engine(name)
		if err != nil {
			return 0
		}
		if e.PrefillChunk > 0 {
			return e.PrefillChunk
		}
		name = e.Inherit
	}
	return 0
}

// ungraphedLayer is the milliseconds each layer adds to engine's passes of
// more than one token, and its source, its own or the engine's it inherits
// (zero: none).
func (a Assumptions) ungraphedLayer(engine string) (float64, string) {
	e, via, ok := a.inherited(engine, func(e Engine) bool { return e.UngraphedLayerMs > 0 })
	if !ok {
		return 0, ""
	}
	return e.UngraphedLayerMs, withVia(via, e.Name, e.UngraphedLayerSource)
}

// inherited is the first engine along engine's inherit chain (itself
// first) for which has is true, and the words that say how its figure was
// reached.
func (a Assumptions) inherited(engine string, has func(Engine) bool) (Engine, string, bool) {
	name := engine
	var via []string
	for range 4 {
		e, err := a.Engine(name)
		if err != nil {
			break
		}
		if has(e) {
			return e, strings.Join(via, "; "), true
		}
		if e.Inherit == "" {
			break
		}
		via = append(via, e.Name+" takes "+e.Inherit+"'s figure ("+e.InheritSource+")")
		name = e.Inherit
	}
	return Engine{}, "", false
}

// withVia prefixes source with how an inherited figure was reached.
func withVia(via, name, source string) string {
	if via == "" {
		return source
	}
	return via + "; " + name + ": " + source
}

// decodeMoEMaxTokens is engine's DecodeMoEMaxTokens, its own or inherited,
// and its source (zero: none).
func (a Assumptions) decodeMoEMaxTokens(engine string) (int, string) {
	e, via, ok := a.inherited(engine, func(e Engine) bool { return e.DecodeMoEMaxTokens > 0 })
	if !ok {
		return 0, ""
	}
	return e.DecodeMoEMaxTokens, withVia(via, e.Name, e.DecodeMoEMaxTokensSource)
}

// ffnActivation is engine's FFNActivation, its own or inherited (zero: none).
func (a Assumptions) ffnActivation(engine string) FFNActivation {
	e, via, ok := a.inherited(engine, func(e Engine) bool { return e.FFNActivation.Float > 0 || e.FFNActivation.Quantized > 0 })
	if !ok {
		return FFNActivation{}
	}
	act := e.FFNActivation
	act.Source = withVia(via, e.Name, act.Source)
	return act
}

// EngineNames lists the engines by name.
func (a Assumptions) EngineNames() []string {
	var out []string
	for _, e := range a.Engines {
		out = append(out, e.Name)
	}
	return out
}

// Requant is a serving recipe that re-quantises layers at load: gpt-oss's
// attention and lm_head in MXFP4 (spark-vllm-docker's --mxfp4-layers
// moe,qkv,o,lm_head), where the checkpoint keeps them in 16-bit.
type Requant struct {
	Attention bool   `json:"attention,omitempty"`
	LMHead    bool   `json:"lm_head,omitempty"`
	Format    Format `json:"format"`
}

// String writes r as the flag takes it: "attention,lm_head=mxfp4".
func (r Requant) String() string {
	if !r.Attention && !r.LMHead {
		return ""
	}
	var layers []string
	if r.Attention {
		layers = append(layers, "attention")
	}
	if r.LMHead {
		layers = append(layers, "lm_head")
	}
	return strings.Join(layers, ",") + "=" + r.Format.Name
}

// ParseRequant reads "LAYERS=FORMAT": LAYERS a comma-separated list of
// attention and lm_head, FORMAT a weight format. "" is no recipe.
func (a Assumptions) ParseRequant(s string) (Requant, error) {
	if strings.TrimSpace(s) == "" {
		return Requant{}, nil
	}
	layers, format, ok := strings.Cut(s, "=")
	if !ok {
		return Requant{}, fmt.Errorf("%q: want LAYERS=FORMAT, e.g. attention,lm_head=mxfp4", s)
	}
	f, err := a.Format(format)
	if err != nil {
		return Requant{}, err
	}
	r := Requant{Format: f}
	for _, l := range strings.Split(layers, ",") {
		switch strings.ToLower(strings.TrimSpace(l)) {
		case "attention", "attn", "qkv,o", "qkv", "o":
			r.Attention = true
		case "lm_head", "head":
			r.LMHead = true
		default:
			return Requant{}, fmt.Errorf("%q: unknown layers %q (want attention, lm_head)", s, l)
		}
	}
	return r, nil
}
