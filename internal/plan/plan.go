package plan

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// Number is one cluster figure and where it came from ("measured: file" or
// the data file's source).
type Number struct {
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
}

// Cluster is what the planner knows of the nodes: how many, and per node.
type Cluster struct {
	Platform        string `json:"platform"`
	Nodes           int    `json:"nodes"`
	MemoryGB        Number `json:"memory_gb"`
	MemoryBandwidth Number `json:"memory_bandwidth_gbs"`
	BF16TFLOPS      Number `json:"bf16_tflops"`
	// AllReduceBusBW is the large-message bus bandwidth between nodes;
	// AllReduceLatency the time of a small all-reduce (LatencyBytes) between two.
	AllReduceBusBW   Number `json:"allreduce_busbw_gbs"`
	AllReduceLatency Number `json:"allreduce_latency_us"`
	LatencyBytes     int64  `json:"allreduce_latency_bytes"`
}

// PlatformCluster fills a cluster of n nodes from the platform's data: the
// assumptions file and the expectations it names.
func PlatformCluster(platform string, n int, a Assumptions, set expect.Set) (Cluster, error) {
	p, ok := a.Platform(platform)
	if !ok {
		return Cluster{}, fmt.Errorf("no platform numbers for %q: give measured results with --from", platform)
	}
	c := Cluster{Platform: platform, Nodes: n,
		MemoryGB:         Number{p.MemoryGB, "GB", p.MemorySource},
		BF16TFLOPS:       Number{p.BF16TFLOPS, "TFLOP/s", p.BF16Source},
		AllReduceLatency: Number{p.AllReduceLatencyUS, "us", p.AllReduceLatencySource},
		LatencyBytes:     p.AllReduceLatencyBytes,
	}
	if w, ok := set.Wire(platform, "memory"); ok && (p.MemoryBandwidthWire == "" || w.ID == p.MemoryBandwidthWire) {
		c.MemoryBandwidth = Number{w.Value, "GB/s", w.Source}
	} else {
		return Cluster{}, fmt.Errorf("expectations have no memory bandwidth for %s", platform)
	}
	for _, e := range set.Expectations {
		if e.ID == p.AllReduceBusBWExpect {
			c.AllReduceBusBW = Number{e.Value, e.Unit, e.Source + " (the nearest measured collective plateau between two nodes)"}
		}
	}
	if c.AllReduceBusBW.Value == 0 {
		return Cluster{}, fmt.Errorf("expectations have no %s", p.AllReduceBusBWExpect)
	}
	return c, nil
}

// Workload is what the model is asked to do.
type Workload struct {
	Input       int     `json:"input_tokens"`
	Output      int     `json:"output_tokens"`
	Concurrency int     `json:"concurrency"`
	KVDType     string  `json:"kv_cache_dtype"`
	GPUMemUtil  float64 `json:"gpu_memory_utilization"`
	// Engine names the serving engine whose efficiencies apply (assumptions.yaml).
	Engine string `json:"engine"`
	// ExpertParallel places whole experts on the tensor-parallel ranks
	// (vLLM's --enable-expert-parallel) instead of splitting every expert.
	ExpertParallel bool `json:"expert_parallel,omitempty"`
	// Requant is a recipe that re-quantises layers at load (plan --requantize).
	Requant Requant `json:"requantize,omitzero"`
	// PrefillChunk is how many prompt tokens one prefill pass takes (vLLM's
	// --max-num-batched-tokens, llama.cpp's -ub); zero: the engine's default.
	PrefillChunk int `json:"prefill_chunk,omitempty"`
	// Draft is how many tokens the model's own multi-token-prediction head
	// drafts each decode step (vLLM's --speculative-config method mtp,
	// num_speculative_tokens); zero: no speculative decoding.
	Draft int `json:"draft_tokens,omitempty"`
	// TokensPerStep is the mean tokens a drafting decode step emits (the
	// accepted drafts and the target's own token: 1 to Draft+1), as a run
	// measured it (a streamed run's inter-token latency over its TPOT).
	TokensPerStep float64 `json:"tokens_per_step,omitempty"`
	// WeightOnlyExperts multiplies the routed experts with weight-only
	// kernels (vLLM's --moe-backend marlin): the stored weights are widened
	// to 16 bits in the kernel and multiplied at the 16-bit rate.
	WeightOnlyExperts bool `json:"weight_only_experts,omitempty"`
}

// kvBytes is the size of one KV-cache element.
func kvBytes(dtype string) (float64, error) {
	switch dtype {
	case "bf16", "fp16", "auto", "bfloat16", "float16":
		return 2, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "int8":
		return 1, nil
	}
	return 0, fmt.Errorf("unknown KV-cache dtype %q (want bf16, fp16, fp8)", dtype)
}

// Option is the answer for one parallel layout.
type Option struct {
	TP             int     `json:"tp"`
	PP             int     `json:"pp"`
	WeightsGB      float64 `json:"weights_gb_per_node"`
	KVAvailableGB  float64 `json:"kv_available_gb_per_node"`
	KVTokens       int64   `json:"kv_cache_tokens"`
	Sequences      int64   `json:"concurrent_sequences"`
	Fits           bool    `json:"fits"`
	ShortGB        float64 `json:"short_gb,omitempty"`
	TTFTms         float64 `json:"ttft_ms"`
	TTFTComputeMs  float64 `json:"ttft_compute_ms"`
	TTFTMemoryMs   float64 `json:"ttft_memory_ms"`
	TTFTNetworkMs  float64 `json:"ttft_network_ms"`
	TPOTms         float64 `json:"tpot_ms"`
	MemoryMs       float64 `json:"tpot_memory_ms"`
	ComputeMs      float64 `json:"tpot_compute_ms"`
	NetworkMs      float64 `json:"tpot_network_ms"`
	Dominant       string  `json:"dominant"`
	TokensPerSec   float64 `json:"tokens_per_s_single_user"`
	ConcTPOTms     float64 `json:"tpot_ms_at_concurrency"`
	ConcTokensPerS float64 `json:"tokens_per_s_at_concurrency"`
	Speedup        float64 `json:"decode_speedup,omitempty"`
	Note           string  `json:"note,omitempty"`
}

// Plan is the whole answer.
type Plan struct {
	Model       Model    `json:"model"`
	Format      Format   `json:"weight_format"`
	TotalParams float64  `json:"total_params"`
	ActiveParam float64  `json:"active_params_per_token"`
	WeightsGB   float64  `json:"weights_gb"`
	Cluster     Cluster  `json:"cluster"`
	Workload    Workload `json:"workload"`
	Options     []Option `json:"options"`
	// Recommended indexes Options: the fastest layout that fits (-1: none fits).
	Recommended int      `json:"recommended"`
	Assumed     []Number `json:"assumptions"`
}

// checkWorkload refuses a workload the estimate cannot price: an unknown
// KV-cache type, no node, lengths, a prefill chunk, a draft or a memory
// share outside their ranges, a draft without its measured tokens per step
// or on a model with no multi-token-prediction layer.
func checkWorkload(m Model, c Cluster, w Workload) error {
	if _, err := kvBytes(w.KVDType); err != nil {
		return err
	}
	switch {
	case c.Nodes < 1:
		return fmt.Errorf("need at least one node")
	case w.Input < 1 || w.Output < 1 || w.Concurrency < 1:
		return fmt.Errorf("input, output and concurrency must be at least 1")
	case w.PrefillChunk < 0 || w.PrefillChunk > 1<<20:
		return fmt.Errorf("prefill chunk %d: want 1 to %d tokens (0: the engine's default)", w.PrefillChunk, 1<<20)
	case w.Draft < 0 || w.Draft > 16:
		return fmt.Errorf("--mtp-draft %d: want 0 to 16 tokens", w.Draft)
	case w.Draft > 0 && w.TokensPerStep == 0:
		return fmt.Errorf("--mtp-draft %d needs --mtp-tokens-per-step (1 to %d)", w.Draft, w.Draft+1)
	case w.Draft > 0 && (w.TokensPerStep < 1 || w.TokensPerStep > float64(w.Draft+1)):
		return fmt.Errorf("--mtp-tokens-per-step %.2f with --mtp-draft %d: want 1 to %d", w.TokensPerStep, w.Draft, w.Draft+1)
	case w.Draft == 0 && w.TokensPerStep != 0:
		return fmt.Errorf("--mtp-tokens-per-step needs --mtp-draft")
	case w.Draft > 0 && m.MTPLayers == 0:
		return fmt.Errorf("--mtp-draft %d: the model has no multi-token-prediction layers to draft with (config.json num_nextn_predict_layers or mtp_num_hidden_layers)", w.Draft)
	case w.GPUMemUtil <= 0 || w.GPUMemUtil > 1:
		return fmt.Errorf("--gpu-memory-utilization %.2f: want a fraction in (0, 1]", w.GPUMemUtil)
	}
	return nil
}

// Estimate plans m in format f on c for w.
func Estimate(m Model, f Format, c Cluster, w Workload, a Assumptions) (*Plan, error) {
	if err := checkWorkload(m, c, w); err != nil {
		return nil, err
	}
	e, err := newEstimator(m, f, c, w, a)
	if err != nil {
		return nil, err
	}
	eng, dec, pre := e.eng, e.dec, e.pre
	w = e.w
	if err := engineTakes(eng.Name, w, m); err != nil {
		return nil, err
	}
	pl := &Plan{Model: m, Format: f, Cluster: c, Workload: w, Recommended: -1,
		TotalParams: e.p.Total(m), ActiveParam: e.p.Active(m), WeightsGB: e.weightBytes() / 1e9,
		Assumed: []Number{
			{dec.Value, "of peak memory bandwidth in " + decodeWords(m) + " (" + eng.Name + ", " + f.Name + ")", dec.Source},
			{pre.Value, "of the format's tensor-core rate in prefill (" + eng.Name + ", " + f.Name + ")", pre.Source},
			{e.att.Value, "of the 16-bit rate in prefill's attention products (" + eng.Name + ")", e.att.Source},
			{float64(e.chunk), "prompt tokens per prefill pass, each reading every weight once (" + eng.Name + ")", e.chunkSource()},
			{a.Efficiency.ReserveGiB, "GiB per node kept for activations and the runtime", a.Efficiency.ReserveSource},
			{f.BytesPerParam, "bytes per weight (" + f.Name + ")", f.Source},
			{e.headBytes(), "bytes per lm_head weight", e.headSource()},
		}}
	if m.LinearLayers > 0 {
		pl.Assumed = append(pl.Assumed, Number{e.lin.Value, "of the 16-bit rate in prefill's linear-attention (Gated DeltaNet) scan (" + eng.Name + ")", e.lin.Source})
	}
	if e.sixteenBitExperts() && m.Experts > 0 {
		pl.Assumed = append(pl.Assumed, Number{e.expertRate() / 1e12, "TFLOP/s the routed experts' prefill share applies to: the 16-bit rate, whatever the weights' format",
			e.expertRateSource()})
	}
	if w.Draft > 0 {
		pl.Assumed = append(pl.Assumed, Number{w.TokensPerStep, fmt.Sprintf("tokens a decode step emits with the model's own %d-token multi-token-prediction draft", w.Draft),
			"given: each step verifies the draft in one pass of the model and drafts the next with the prediction head (one decoder layer and the shared lm_head per drafted token)"})
	}
	if e.ungraphed > 0 {
		pl.Assumed = append(pl.Assumed, Number{e.ungraphed * 1e3, "ms per layer added to each prefill pass and decode step of more than one token: kernels launched one by one, no CUDA graph (" + eng.Name + ")", e.ungraphedSource})
	}
	if b := e.activationBytes(1, 1); b > 0 {
		pl.Assumed = append(pl.Assumed, Number{round(b/1e6, 2), "MB of feed-forward activations each token a pass or step multiplies writes to memory and reads back between the multiplies (" + eng.Name + ")", e.act.Source})
	}
	if m.Experts > 0 && e.moeMax > 0 {
		pl.Assumed = append(pl.Assumed, Number{float64(e.moeMax), fmt.Sprintf("tokens at most in a step the mixture of experts' decode figure applies to; a larger prefill pass or decode batch reads at %.2f (%s, %s)", e.wide.Value, eng.Name, f.Name),
			e.moeMaxSource})
	}
	if m.Experts > 0 && e.preMoE != pre {
		pl.Assumed = append(pl.Assumed, Number{e.preMoE.Value, "of the " + e.expertRateWords() + " in prefill's routed-expert multiplies (" + eng.Name + ", " + f.Name + ")", e.preMoE.Source})
	}
	if r := w.Requant; r.Attention || r.LMHead {
		pl.Assumed = append(pl.Assumed, Number{r.Format.BytesPerParam, "bytes per re-quantised weight (" + r.String() + ")", r.Format.Source})
	}
	if s := e.stored(); s != nil {
		pl.Assumed = append(pl.Assumed, Number{round(e.weightBytes()/1e9, 2), fmt.Sprintf("GB of weights as the checkpoint stores them: mixers %.3f, dense and shared %.3f, routed experts %.3f bytes per weight", s.Mixer, s.FFN, s.Expert),
			s.Source + ": " + s.Rule})
	}
	switch {
	case m.MTPLayers > 0 && w.Draft > 0:
		pl.Assumed = append(pl.Assumed, Number{round(e.p.MTP/1e9, 2), fmt.Sprintf("billion weights in %d multi-token-prediction layer(s), loaded to draft and counted in each node's weights", m.MTPLayers),
			"config.json num_nextn_predict_layers or mtp_num_hidden_layers; the engine loads them to draft tokens (--mtp-draft)"})
	case m.MTPLayers > 0:
		pl.Assumed = append(pl.Assumed, Number{round(e.p.MTP/1e9, 2), fmt.Sprintf("billion weights in %d multi-token-prediction layer(s), not loaded", m.MTPLayers),
			"config.json num_nextn_predict_layers or mtp_num_hidden_layers; engines load them only to draft tokens (--mtp-draft), which this plan does not ask for"})
	}
	if len(m.Unread) > 0 {
		pl.Assumed = append(pl.Assumed, Number{float64(len(m.Unread)), "config.json size fields not read: " + strings.Join(m.Unread, ", "),
			"the planner does not know these fields; the weights and KV cache worked out here may be off by what they change"})
	}
	for _, tp := range layouts(c.Nodes) {
		pl.Options = append(pl.Options, e.option(tp[0], tp[1]))
	}
	base := -1
	for i, o := range pl.Options {
		if !o.Fits {
			continue
		}
		if base < 0 {
			base = i
		}
		pl.Options[i].Speedup = round(pl.Options[base].TPOTms/o.TPOTms, 2)
		if pl.Recommended < 0 || o.ConcTokensPerS > pl.Options[pl.Recommended].ConcTokensPerS*1.05 {
			pl.Recommended = i
		}
	}
	return pl, nil
}

// decodeWords names the decode whose efficiency a model takes.
func decodeWords(m Model) string {
	if m.Experts > 0 {
		return "a mixture of experts' decode"
	}
	return "decode"
}

// newEstimator resolves the engine's efficiencies for the format.
func newEstimator(m Model, f Format, c Cluster, w Workload, a Assumptions) (estimator, error) {
	eng, err := a.Engine(w.Engine)
	if err != nil {
		return estimator{}, err
	}
	w.Engine = eng.Name
	phase := PhaseDecode
	if m.Experts > 0 {
		phase = PhaseDecodeMoE
	}
	dec, err := a.Factor(eng.Name, phase, f.Name)
	if err != nil {
		return estimator{}, err
	}
	pre, err := a.Factor(eng.Name, PhasePrefill, f.Name)
	if err != nil {
		return estimator{}, err
	}
	preMoE, err := a.Factor(eng.Name, PhasePrefillMoE, f.Name)
	if err != nil {
		return estimator{}, err
	}
	att, err := a.Factor(eng.Name, PhaseAttention, f.Name)
	if err != nil {
		return estimator{}, err
	}
	lin, err := a.Factor(eng.Name, PhaseLinear, f.Name)
	if err != nil {
		return estimator{}, err
	}
	kvb, err := kvBytes(w.KVDType)
	if err != nil {
		return estimator{}, err
	}
	// A batch beyond the mixture of experts' decode figure reads at the
	// format's own decode figure (a dense model's) where the engine has one
	// above it; the engine's catch-all, a median over every model's decode
	// in every format, says nothing of this format's tiled kernels.
	wide := dec
	if d, err := a.Factor(eng.Name, PhaseDecode, f.Name); err != nil {
		return estimator{}, err
	} else if d.Format == f.Name && d.Value > dec.Value {
		wide = d
	}
	ungraphed, ungraphedSource := a.ungraphedLayer(eng.Name)
	moeMax, moeMaxSource := a.decodeMoEMaxTokens(eng.Name)
	return estimator{m: m, p: m.Count(), f: f, c: c, w: w, a: a, eng: eng, kvb: kvb, dec: dec, wide: wide, pre: pre, preMoE: preMoE, att: att, lin: lin,
		chunk: cmp.Or(w.PrefillChunk, a.prefillChunk(eng.Name)), ungraphed: ungraphed / 1e3, ungraphedSource: ungraphedSource,
		moeMax: moeMax, moeMaxSource: moeMaxSource, act: a.ffnActivation(eng.Name)}, nil
}

// layouts lists (TP, PP) pairs: tensor parallel over 1, 2, 4, … nodes, and
// where the node count is not a power of two, a pipeline over all of them.
func layouts(nodes int) [][2]int {
	var out [][2]int
	for tp := 1; tp <= nodes; tp *= 2 {
		out = append(out, [2]int{tp, 1})
	}
	if last := out[len(out)-1][0]; last != nodes {
		out = append(out, [2]int{1, nodes})
	}
	return out
}

type estimator struct {
	m   Model
	p   Params
	f   Format
	c   Cluster
	w   Workload
	a   Assumptions
	eng Engine
	kvb float64
	// dec and pre are the engine's decode and prefill efficiencies for the
	// format, preMoE its routed experts' prefill multiplies', att its
	// attention products' share of the 16-bit rate.
	dec, pre, preMoE, att, lin Factor
	// wide is the figure whole rows of a weight or tensor stream at: the
	// format's own decode figure where the engine has one above dec, dec
	// otherwise. A mixture of experts' step or pass of more than moeMax
	// tokens reads its weights at it (moeMax zero: never; moeMaxSource says
	// why), and every step and pass moves its activations at it.
	wide         Factor
	moeMax       int
	moeMaxSource string
	// act is the size of the feed-forward activations each token a pass or
	// step multiplies writes and reads back (zero: not priced).
	act   FFNActivation
	chunk int
	// ungraphed is the seconds each layer adds to a pass or step of more
	// than one token (kernels launched one by one, no CUDA graph), and
	// ungraphedSource where the figure comes from.
	ungraphed       float64
	ungraphedSource string
}

func (e estimator) chunkSource() string {
	if e.w.PrefillChunk > 0 {
		return "given with --prefill-chunk"
	}
	name := e.eng.Name
	for range 4 {
		en, err := e.a.Engine(name)
		if err != nil {
			break
		}
		if en.PrefillChunk > 0 {
			return en.PrefillChunkSource
		}
		name = en.Inherit
	}
	return ""
}

// headBytes is what one lm_head weight takes: the recipe's format where it
// re-quantises the head, the format's own figure where it quantises it
// (GGUF), else 16-bit.
func (e estimator) headBytes() float64 {
	if e.w.Requant.LMHead {
		return e.w.Requant.Format.BytesPerParam
	}
	return e.storedHeadBytes()
}

func (e estimator) storedHeadBytes() float64 {
	if e.f.HeadBytesPerParam > 0 {
		return e.f.HeadBytesPerParam
	}
	return e.a.Unquantized
}

func (e estimator) headSource() string {
	switch {
	case e.w.Requant.LMHead:
		return "re-quantised at load (" + e.w.Requant.String() + "): " + e.w.Requant.Format.Source
	case e.f.HeadBytesPerParam > 0:
		return e.f.Source
	}
	return "quantised checkpoints keep the embeddings and lm_head in 16-bit"
}

// embedBytes is what one input-embedding weight takes; a tied table is the
// output too and is stored as the output is.
func (e estimator) embedBytes() float64 {
	if e.m.TiedEmbeddings || e.f.EmbedBytesPerParam == 0 {
		return e.storedHeadBytes()
	}
	return e.f.EmbedBytesPerParam
}

// moreBits is the share of layers llama.cpp's _M mixes give more bits:
// use_more_bits in llama-quant.cpp (the first and last eighth, and every
// third layer between).
func (e estimator) moreBits() float64 {
	n := e.m.Layers
	if n == 0 {
		return 0
	}
	k := 0
	for i := range n {
		if i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 {
			k++
		}
	}
	return float64(k) / float64(n)
}

// mixed is base bytes per weight where share of the weights (the value or
// down projections) take the mix's type in moreBits of the layers.
func (e estimator) mixed(base, share float64) float64 {
	if e.f.MixBytesPerParam == 0 {
		return base
	}
	return base + (e.f.MixBytesPerParam-base)*share*e.moreBits()
}

// mixerBytes is what one attention (or linear-attention, Mamba) weight takes
// on average: the recipe's format where it re-quantises attention, 16-bit
// where the checkpoint's quantisation config leaves attention unconverted.
func (e estimator) mixerBytes() float64 {
	switch {
	case e.w.Requant.Attention:
		return e.w.Requant.Format.BytesPerParam
	case e.stored() != nil && e.stored().Mixer > 0:
		return e.stored().Mixer
	case e.f.NonExpertBytesPerParam > 0:
		return e.f.NonExpertBytesPerParam
	case e.m.UnquantizedAttention:
		return max(e.a.Unquantized, e.f.BytesPerParam)
	}
	if e.p.Mixer == 0 {
		return e.f.BytesPerParam
	}
	// The value projection's share of the mixer weights.
	v := float64(e.m.FullAttentionLayers+e.m.SlidingLayers) * float64(e.m.Hidden*e.m.KVHeads*e.m.HeadDim)
	if e.m.MLA.KVLoraRank > 0 {
		v = 0
	}
	return e.mixed(e.f.BytesPerParam, v/e.p.Mixer)
}

// stored is the checkpoint's own per-class precision where its
// quantisation config gives one for the --weights format.
func (e estimator) stored() *Stored {
	if s := e.m.Stored; s != nil && s.Format == e.f.Name {
		return s
	}
	return nil
}

// ffnBytes is what one dense feed-forward, shared-expert or router weight takes.
func (e estimator) ffnBytes() float64 {
	if s := e.stored(); s != nil && s.FFN > 0 {
		return s.FFN
	}
	if e.f.NonExpertBytesPerParam > 0 {
		return e.f.NonExpertBytesPerParam
	}
	return e.mixed(e.f.BytesPerParam, 1/float64(e.m.FFNMatrices))
}

// expertBytes is what one routed-expert weight takes.
func (e estimator) expertBytes() float64 {
	if s := e.stored(); s != nil && s.Expert > 0 {
		return s.Expert
	}
	return e.mixed(e.f.BytesPerParam, 1/float64(e.m.FFNMatrices))
}

// weightBytes is the checkpoint's size in its format: the main model, and
// the multi-token-prediction layers where the engine loads them to draft.
func (e estimator) weightBytes() float64 {
	main := e.p.Expert*float64(e.m.Experts*e.m.MoELayers)*e.expertBytes() + e.p.FFN*e.ffnBytes() +
		e.p.Mixer*e.mixerBytes() + e.p.Embedding*e.embedBytes() + e.p.LMHead*e.headBytes()
	if e.w.Draft > 0 {
		main += e.mtpBytes()
	}
	return main
}

// mtpBytes is the multi-token-prediction layers (Params.MTP) in the format:
// each an attention layer, a feed-forward block with every expert of it,
// and the projection of the embedding and hidden state into it.
func (e estimator) mtpBytes() float64 {
	m, h := e.m, float64(e.m.Hidden)
	ffn := float64(m.FFNMatrices) * h * float64(m.Intermediate)
	var experts float64
	if m.Experts > 0 {
		ffn = float64(m.FFNMatrices)*h*float64(m.SharedIntermediate) + h*float64(m.Experts)
		experts = float64(m.Experts) * e.p.Expert * e.expertBytes()
	}
	return float64(m.MTPLayers) * (m.attentionParams()*e.mixerBytes() + (ffn+2*h*h)*e.ffnBytes() + experts)
}

// engineTakes refuses the options whose launch lines only some engines
// carry: the draft (vLLM's --speculative-config, SGLang's NEXTN) and the
// weight-only expert kernels (vLLM's --moe-backend marlin).
func engineTakes(engine string, w Workload, m Model) error {
	if w.Draft > 0 && engine != "vllm" && engine != "sglang" {
		return fmt.Errorf("--mtp-draft is for vllm and sglang (their launch lines carry the draft), not %s", engine)
	}
	if w.WeightOnlyExperts && engine != "vllm" {
		return fmt.Errorf("--weight-only-experts is for vllm (--moe-backend marlin), not %s", engine)
	}
	return nil
}

// denseBytes is what every token reads besides the routed experts.
func (e estimator) denseBytes() float64 {
	return e.p.Mixer*e.mixerBytes() + e.p.FFN*e.ffnBytes() + e.p.head()*e.headBytes()
}

// kvLayerToken is one token's KV cache in one attention layer on one node at
// tensor-parallel size tp: KV heads split across ranks (replicated when
// there are fewer heads than ranks); a latent (MLA) cache is one vector per
// token, replicated on every rank.
func (e estimator) kvLayerToken(tp int) float64 {
	if a := e.m.MLA; a.KVLoraRank > 0 {
		return float64(a.KVLoraRank+a.QKRopeDim+a.IndexHeadDim) * e.kvb
	}
	heads := math.Ceil(float64(e.m.KVHeads) / float64(tp))
	return 2 * heads * float64(e.m.HeadDim) * e.kvb
}

// kvPerToken is what one more token of context adds to a sequence's KV cache
// on one node: the full-attention layers only (sliding windows are bounded).
func (e estimator) kvPerToken(tp int) float64 {
	return float64(e.m.FullAttentionLayers) * e.kvLayerToken(tp)
}

// kvSeq is one sequence's KV cache on one node at context ctx.
func (e estimator) kvSeq(tp int, ctx float64) float64 {
	sliding := float64(e.m.SlidingLayers) * min(ctx, float64(e.m.SlidingWindow))
	return (float64(e.m.FullAttentionLayers)*ctx + sliding) * e.kvLayerToken(tp)
}

// statePerSeq is one sequence's fixed-size state on one node (16-bit): the
// Gated DeltaNet state, or Mamba-2's SSM and convolution states.
func (e estimator) statePerSeq(tp int) float64 {
	var s float64
	if l := e.m.Linear; l.KeyHeads > 0 {
		s += float64(e.m.LinearLayers) * float64(l.ValueHeads*l.KeyDim*l.ValueDim) * 2
	}
	if mb := e.m.Mamba; mb.Heads > 0 {
		inner := mb.Heads * mb.HeadDim
		conv := (inner + 2*mb.Groups*mb.StateSize) * max(mb.ConvKernel-1, 0)
		s += float64(e.m.MambaLayers) * float64(inner*mb.StateSize+conv) * 2
	}
	return s / float64(tp)
}

// expertsPerNode is how many routed experts' weights one node reads in one
// layer for a batch of b tokens: with every expert split across the tp
// ranks, 1/tp of those the batch touches; with expert parallelism, the
// ranks wait for the one holding the most of them (expectedMaxLoad).
func (e estimator) expertsPerNode(tp, b int) float64 {
	if !e.w.ExpertParallel || tp < 2 || e.m.Experts == 0 {
		return e.distinctExperts(b) / float64(tp)
	}
	if e.distinctExperts(b) > float64(e.m.Experts)-0.5 {
		return math.Ceil(float64(e.m.Experts) / float64(tp)) // every expert in use
	}
	return expectedMaxLoad(e.m.Experts, e.m.ExpertsPerToken, b, tp)
}

// expectedMaxLoad is the mean, over uniformly routed batches, of the most
// distinct experts any one of n ranks holds when b tokens each pick k of
// the experts and each rank holds a contiguous 1/n of them. It is worked
// out by simulation with a fixed seed, so a plan is the same every time.
func expectedMaxLoad(experts, k, b, n int) float64 {
	const trials = 400
	r := rand.New(rand.NewPCG(1, 2))
	perm := make([]int, experts)
	for i := range perm {
		perm[i] = i
	}
	used := make([]bool, experts)
	load := make([]int, n)
	var sum int
	for range trials {
		clear(used)
		clear(load)
		for range b {
			// k distinct experts for this token: a partial Fisher-Yates shuffle.
			for i := range k {
				j := i + r.IntN(experts-i)
				perm[i], perm[j] = perm[j], perm[i]
				if e := perm[i]; !used[e] {
					used[e] = true
					load[e*n/experts]++
				}
			}
		}
		sum += slices.Max(load)
	}
	return float64(sum) / trials
}

// distinctExperts is how many routed experts a batch of b tokens touches in
// one layer, with routing taken as uniform.
func (e estimator) distinctExperts(b int) float64 {
	if e.m.Experts == 0 {
		return 0
	}
	n, k := float64(e.m.Experts), float64(e.m.ExpertsPerToken)
	return n * (1 - math.Pow(1-k/n, float64(b)))
}

// allReduce is the time of one all-reduce of size bytes over n nodes: a ring's
// 2(n-1) steps of per-step latency α plus its 2(n-1)/n share of the bytes at
// bus bandwidth, α taken from the measured two-node small-message time.
func (e estimator) allReduce(n int, size float64) float64 {
	if n < 2 {
		return 0
	}
	bw := e.c.AllReduceBusBW.Value * 1e9
	alpha := (e.c.AllReduceLatency.Value*1e-6 - float64(e.c.LatencyBytes)/bw) / 2
	alpha = max(alpha, 0)
	steps := 2 * float64(n-1)
	return steps*alpha + steps/float64(n)*size/bw
}

// allReduces is how many all-reduces tensor parallelism adds per token: one
// after each mixer and one after each feed-forward block.
func (e estimator) allReduces() float64 {
	m := e.m
	return float64(m.FullAttentionLayers + m.SlidingLayers + m.LinearLayers + m.MambaLayers + m.DenseFFNLayers + m.MoELayers)
}

// expertRate is the tensor-core rate the routed experts' prefill share
// applies to: the 16-bit rate where the engine's routed-expert figure is a
// share of it (Of16Bit) or weight-only kernels widen the weights first
// (Marlin: IST-DASLab/marlin, "FP16xINT4" multiplies; vLLM's FP4 Marlin MoE
// kernels dequantise to 16 bits the same way), else the format's.
func (e estimator) expertRate() float64 {
	if e.sixteenBitExperts() {
		return e.c.BF16TFLOPS.Value * 1e12 * e.a.ComputeRatio["bf16"]
	}
	return e.computeRate()
}

// sixteenBitExperts is whether the routed experts' prefill share applies
// to the 16-bit rate rather than the format's.
func (e estimator) sixteenBitExperts() bool {
	return e.w.WeightOnlyExperts || e.preMoE.Of16Bit
}

// expertRateWords names the rate the routed experts' share applies to.
func (e estimator) expertRateWords() string {
	if e.sixteenBitExperts() {
		return "16-bit tensor-core rate"
	}
	return "format's tensor-core rate"
}

// expertRateSource is why the routed experts' share applies to the
// 16-bit rate.
func (e estimator) expertRateSource() string {
	marlin := "given with --weight-only-experts (vLLM's --moe-backend marlin): Marlin (IST-DASLab/marlin) multiplies FP16 x INT4, and vLLM's Marlin MoE kernels dequantise FP4 and INT4 weights to 16 bits the same way"
	if !e.preMoE.Of16Bit {
		return marlin
	}
	s := e.preMoE.Engine + "'s routed-expert prefill figure is a share of the 16-bit rate, for the experts in every format (its source is the figure's, below)"
	if e.w.WeightOnlyExperts {
		s += "; " + marlin
	}
	return s
}

func (e estimator) computeRate() float64 {
	return e.c.BF16TFLOPS.Value * 1e12 * e.a.ComputeRatio[e.f.Compute]
}

func (e estimator) option(tp, pp int) Option {
	o := Option{TP: tp, PP: pp}
	if e.m.Heads%tp != 0 {
		o.Note = fmt.Sprintf("TP %d does not divide %d attention heads", tp, e.m.Heads)
		return o
	}
	if e.m.Layers < pp {
		o.Note = fmt.Sprintf("PP %d exceeds %d layers", pp, e.m.Layers)
		return o
	}
	nodes := float64(tp * pp)
	weights := e.weightBytes() / nodes
	usable := e.c.MemoryGB.Value*1e9*e.w.GPUMemUtil - e.a.Efficiency.ReserveGiB*(1<<30)
	kvAvail := usable - weights
	ctx := float64(e.w.Input + e.w.Output)
	perSeq := e.kvSeq(tp, ctx)/float64(pp) + e.statePerSeq(tp)/float64(pp)
	o.WeightsGB = round(weights/1e9, 1)
	o.KVAvailableGB = round(kvAvail/1e9, 1)
	if kvAvail > 0 {
		if per := e.kvPerToken(tp) / float64(pp); per > 0 {
			o.KVTokens = int64(min(kvAvail/per, math.MaxInt32))
		}
		o.Sequences = int64(min(kvAvail/perSeq, math.MaxInt32))
	}
	o.Fits = o.Sequences >= 1
	if !o.Fits {
		o.ShortGB = round((perSeq-kvAvail)/1e9, 1)
		o.Note = fmt.Sprintf("does not fit: %.1f GB short per node", o.ShortGB)
	}

	// Prefill of one request.
	comp, mem, net := e.prefill(tp, pp)
	o.TTFTComputeMs, o.TTFTMemoryMs, o.TTFTNetworkMs = round(comp*1e3, 1), round(mem*1e3, 1), round(net*1e3, 1)
	o.TTFTms = round(e.ttft(tp, pp)*1e3, 1)

	mem1, comp1, net1 := e.decodeStep(tp, pp, 1)
	o.MemoryMs, o.ComputeMs, o.NetworkMs = round(mem1*1e3, 2), round(comp1*1e3, 2), round(net1*1e3, 2)
	step := max(mem1, comp1) + net1 + e.stepLaunches(1)
	o.TPOTms = round(step*1e3, 1)
	o.Dominant = dominant(mem1, comp1, net1)
	o.TokensPerSec = round(1/step, 1)
	b := e.w.Concurrency
	if o.Sequences > 0 && int64(b) > o.Sequences {
		b = int(o.Sequences)
	}
	memB, compB, netB := e.decodeStep(tp, pp, b)
	stepB := max(memB, compB) + netB + e.stepLaunches(b)
	o.ConcTPOTms = round(stepB*1e3, 1)
	o.ConcTokensPerS = round(float64(b)/stepB, 1)
	return o
}

// decodeStep is one decode step for b sequences at the workload's mean
// context: the bytes each node reads over its memory bandwidth (the
// feed-forward activations' round trips of the tokens it multiplies with
// them), the FLOPs over its compute rate, and the all-reduces (or pipeline
// hops) between nodes.
//
// With a multi-token-prediction draft of k tokens, a step verifies k+1
// tokens of each sequence in one pass (one read of the weights and the KV
// cache, the experts those tokens route to) and runs the prediction head k
// times to draft the next ones (draftPass); the step's terms are then per
// emitted token, over the tokens a step emits.
func (e estimator) decodeStep(tp, pp, b int) (memory, compute, network float64) {
	ctx := float64(e.w.Input) + float64(e.w.Output)/2
	n := b * (1 + e.w.Draft) // tokens the step multiplies
	experts := e.expertsPerNode(tp, n) * e.p.Expert * float64(e.m.MoELayers) * e.expertBytes()
	// Pipeline stages run one after another for a token, so a token's time
	// is the whole model's bytes over one node's bandwidth, split only by TP.
	bytes := e.denseBytes()/float64(tp) + experts + float64(b)*(e.kvSeq(tp, ctx)+e.statePerSeq(tp))
	bytes += float64(e.w.Draft) * e.draftPass(tp, b, ctx)
	memory = bytes/e.bandwidthFor(n) + e.activationTime(tp, n)
	compute = 2 * e.p.Active(e.m) * float64(n) / float64(tp) / (e.computeRate() * e.pre.Value)
	h := float64(e.m.Hidden)
	network = e.allReduces()*e.allReduce(tp, float64(n)*h*2) + e.hops(pp, float64(n)*h*2)
	if e.w.Draft > 0 {
		per := e.w.TokensPerStep
		memory, compute, network = memory/per, compute/per, network/per
	}
	return memory, compute, network
}

// draftPass is what one node reads for one pass of the model's
// multi-token-prediction head over b sequences: its decoder layer (full
// attention over its own KV cache at ctx, the feed-forward block with the
// experts b tokens route to, the projection of the embedding and hidden
// state into it) and the lm_head it shares with the model, whose logits
// every drafted token needs (vLLM's Qwen3NextMTP.compute_logits runs the
// shared lm_head; eagle.py shares it from the target).
func (e estimator) draftPass(tp, b int, ctx float64) float64 {
	m, h := e.m, float64(e.m.Hidden)
	layers := float64(m.MTPLayers)
	ffn := float64(m.FFNMatrices) * h * float64(m.Intermediate)
	var experts float64
	if m.Experts > 0 {
		ffn = float64(m.FFNMatrices)*h*float64(m.SharedIntermediate) + h*float64(m.Experts)
		experts = e.distinctExperts(b) * e.p.Expert * e.expertBytes()
	}
	layer := m.attentionParams()*e.mixerBytes() + (ffn+2*h*h)*e.ffnBytes() + experts
	return (layers*layer+e.p.head()*e.headBytes())/float64(tp) + layers*float64(b)*ctx*e.kvLayerToken(tp)
}

// bandwidth is the memory bandwidth one node achieves with this engine and format.
func (e estimator) bandwidth() float64 {
	return e.c.MemoryBandwidth.Value * 1e9 * e.dec.Value
}

// bandwidthFor is the memory bandwidth one node achieves in a step or pass
// that multiplies n tokens. A mixture of experts' decode figure (dec) is
// its experts read by the engine's vector kernels, one small batch of
// tokens at a time; where the engine hands a batch of more than moeMax
// tokens to the tiled kernels a dense prompt uses (llama.cpp's
// mul_mat_id), the pass reads at wide: the format's dense decode figure
// where that is higher, dec otherwise.
func (e estimator) bandwidthFor(n int) float64 {
	if e.m.Experts > 0 && e.moeMax > 0 && n > e.moeMax {
		return e.c.MemoryBandwidth.Value * 1e9 * e.wide.Value
	}
	return e.bandwidth()
}

// activationTime is the time a pass or step of n tokens spends moving its
// feed-forward activations (activationBytes). The kernels that write and
// read them stream whole contiguous tensors, as a dense model's multiplies
// stream whole weight rows, not the narrow expert rows a mixture of
// experts' decode figure prices: they move at wide, the format's dense
// figure (a dense model's decode figure is its own).
func (e estimator) activationTime(tp, n int) float64 {
	b := e.activationBytes(tp, n)
	if b == 0 {
		return 0
	}
	return b / (e.c.MemoryBandwidth.Value * 1e9 * e.wide.Value)
}

// activationBytes is what a pass or step of n tokens writes to one node's
// memory and reads back between its feed-forward multiplies (act): per
// token and block, each of these tensors once each way. For a block of
// width i taking inputs of width h with m matrices (three gated, two
// plain): the up (and gate) outputs and the activation function's output
// in float, the down projection's input copy (i each), the block input's
// copy for each of the up (and gate) multiplies and the down projection's
// float output (h each). A copy is quantised (Quantized bytes a value), or
// where the weights are 16-bit converted to 16-bit floats (Converted). A
// mixture of experts runs its block once per routed expert a token takes,
// in the latent width where it has one, and its shared expert once.
// Not counted: the residual stream, norms and attention; the routing; the
// weighting of the experts' outputs and their sum; expert biases added by
// kernels of their own (gpt-oss); a second elementwise kernel of an
// activation function run as two (squared ReLU unfused).
func (e estimator) activationBytes(tp, n int) float64 {
	a := e.act
	if a.Float == 0 && a.Quantized == 0 {
		return 0
	}
	q := a.Quantized
	if e.f.BytesPerParam >= 2 && a.Converted > 0 {
		q = a.Converted
	}
	m := float64(e.m.FFNMatrices)
	block := func(i, h int) float64 {
		if i == 0 {
			return 0
		}
		return 2*float64(i)*(a.Float*m+q) + 2*float64(h)*(q*(m-1)+a.Float)
	}
	b := float64(e.m.DenseFFNLayers) * block(e.m.Intermediate, e.m.Hidden)
	if e.m.Experts > 0 {
		b += float64(e.m.MoELayers) * (float64(e.m.ExpertsPerToken)*block(e.m.ExpertIntermediate, cmp.Or(e.m.LatentSize, e.m.Hidden)) +
			block(e.m.SharedIntermediate, e.m.Hidden))
	}
	return b * float64(n) / float64(tp)
}

// chunks calls f for each pass of the prompt: its first token and length.
func (e estimator) chunks(f func(start, n int)) {
	size := max(e.chunk, 1)
	for s := 0; s < e.w.Input; s += size {
		f(s, min(size, e.w.Input-s))
	}
}

// prefillPass is one pass of n prompt tokens after start others: the FLOPs
// over the format's rate, and one read of every weight the pass touches
// and of the KV cache before it, over the memory bandwidth. Even a short
// prompt reads every weight once. The routed experts' share of each is
// given apart (expertCompute, expertMemory, included in the totals).
func (e estimator) prefillPass(tp, start, n int, last bool) (compute, memory, expertCompute, expertMemory float64) {
	head := e.p.head()
	flops := 2 * (e.p.Active(e.m) - head) * float64(n)
	if last {
		flops += 2 * head
	}
	// Attention's score and value products, and the linear-attention and
	// Mamba-2 chunked scans' products, run on 16-bit operands whatever the
	// weights' format: only the weight multiplies use its rate. The
	// linear-attention scan runs at its own share of that rate (lin).
	r16 := e.c.BF16TFLOPS.Value * 1e12
	attn := (e.attentionFLOPs(float64(start), float64(n))+e.mambaFLOPs(float64(n)))/(r16*e.att.Value) + e.deltaFLOPs(float64(n))/(r16*e.lin.Value)
	// The routed experts' multiplies run in the engine's grouped per-expert
	// kernels, at their own share of the rate (preMoE).
	expertFLOPs := 2 * e.p.Expert * float64(e.m.ExpertsPerToken*e.m.MoELayers) * float64(n)
	expertCompute = expertFLOPs / (e.expertRate() * e.preMoE.Value) / float64(tp)
	compute = ((flops-expertFLOPs)/(e.computeRate()*e.pre.Value)+attn)/float64(tp) + expertCompute
	expertMemory = e.expertsPerNode(tp, n) * e.p.Expert * float64(e.m.MoELayers) * e.expertBytes() / e.bandwidthFor(n)
	memory = (e.denseBytes()/float64(tp)+e.kvSeq(tp, float64(start)))/e.bandwidthFor(n) + expertMemory
	return compute, memory, expertCompute, expertMemory
}

// passTime is one prefill pass's time. The routed experts' multiplies run
// apart from the rest (a grouped GEMM per layer), each expert on the
// n·k/E tokens routed to it: where that batch is small, reading the
// expert's weights takes longer than multiplying them, whatever the rest
// of the pass is bound by. So the experts and the rest are each bound by
// their own roofline, max(compute, weight reads), and the two add. The
// feed-forward activations the engine writes out and reads back between
// the multiplies (activationBytes) are moved by small kernels of their own
// that run between the multiplies, so their time adds too.
func (e estimator) passTime(tp, start, n int, last bool) float64 {
	c, m, ec, em := e.prefillPass(tp, start, n, last)
	return max(c-ec, m-em) + max(ec, em) + e.launches(n) + e.activationTime(tp, n)
}

// launches is what launching a pass's kernels one by one adds to a pass or
// decode step of n tokens. An engine that replays a captured CUDA graph for
// one-token steps only (llama.cpp: ggml-cuda's graph compatibility check
// turns graphs off for any batch of more than one token) launches every
// kernel of every layer from the CPU for anything larger; the small kernels
// (norms, rotary embedding, KV-cache copies, activation quantisation,
// residual adds) run shorter than their launch, so the GPU waits between
// them whatever the pass's large multiplies are bound by: a cost per layer,
// added to the roofline. A one-token step replays the graph and pays none.
func (e estimator) launches(n int) float64 {
	if n < 2 {
		return 0
	}
	return e.ungraphed * float64(e.m.Layers)
}

// stepLaunches is launches for a decode step of b sequences, per emitted
// token as decodeStep's terms are: the step multiplies b·(1+Draft) tokens
// and emits TokensPerStep of each sequence's.
func (e estimator) stepLaunches(b int) float64 {
	t := e.launches(b * (1 + e.w.Draft))
	if e.w.Draft > 0 {
		t /= e.w.TokensPerStep
	}
	return t
}

// prefill is the prompt's compute and memory time summed over its passes
// (the memory time with the feed-forward activations' round trips), and
// the time its activations spend between nodes.
func (e estimator) prefill(tp, pp int) (compute, memory, network float64) {
	e.chunks(func(start, n int) {
		c, m, _, _ := e.prefillPass(tp, start, n, start+n == e.w.Input)
		compute += c
		memory += m + e.activationTime(tp, n)
	})
	size := float64(e.w.Input) * float64(e.m.Hidden) * 2
	return compute, memory, e.allReduces()*e.allReduce(tp, size) + e.hops(pp, size)
}

// ttft is the time to the first token: each pass bound by its compute or
// its memory reads (passTime), and the network.
func (e estimator) ttft(tp, pp int) float64 {
	var t float64
	e.chunks(func(start, n int) {
		t += e.passTime(tp, start, n, start+n == e.w.Input)
	})
	_, _, net := e.prefill(tp, pp)
	return t + net
}

// attentionFLOPs is the score and value products of n prompt tokens after
// start others: causal full attention over n(start + n/2) pairs, a sliding
// window over at most window pairs per token.
func (e estimator) attentionFLOPs(start, n float64) float64 {
	d := float64(e.m.HeadDim)
	if a := e.m.MLA; a.KVLoraRank > 0 {
		d = float64(a.QKNopeDim+a.QKRopeDim+a.VHeadDim) / 2
	}
	per := 4 * float64(e.m.Heads) * d // multiply-adds of one query-key pair, scores and values
	full := float64(e.m.FullAttentionLayers) * n * (start + n/2)
	sliding := float64(e.m.SlidingLayers) * n * min(start+n/2, float64(e.m.SlidingWindow))
	return per * (full + sliding)
}

// deltaChunk is the chunk of Gated DeltaNet's prefill scan: vLLM's
// chunk_gated_delta_rule_fwd (vllm/model_executor/layers/fla/ops/chunk.py,
// from flash-linear-attention) works in chunks of 64 tokens.
const deltaChunk = 64

// deltaFLOPs is the products of the linear-attention (Gated DeltaNet)
// layers' chunked scan over n prompt tokens: linear in n, each token's
// share set by the chunk length C. Per value head and chunk (key width K,
// value width V; vLLM's fla ops): K·Kᵀ (2C²K, chunk_scaled_dot_kkt), the
// triangular solve (about ⅔C³, solve_tril), w and u (2C²K + 2C²V,
// recompute_w_u), the state's read and update (4CKV,
// chunk_gated_delta_rule_fwd_h), and the output from the state and within
// the chunk (2CKV + 2C²K + 2C²V, chunk_fwd_o).
func (e estimator) deltaFLOPs(n float64) float64 {
	l := e.m.Linear
	if l.ValueHeads <= 0 {
		return 0
	}
	c, k, v := float64(deltaChunk), float64(l.KeyDim), float64(l.ValueDim)
	perHead := c*(6*k+4*v) + 6*k*v + 2*c*c/3
	return float64(e.m.LinearLayers*l.ValueHeads) * perHead * n
}

// mambaFLOPs is the products of the Mamba-2 layers' chunked scan (SSD) over
// n prompt tokens, per head of width P and state N (chunk Q): the chunk's
// state Bᵀx and the output C·h (4NPQ), the chunk's C·Bᵀ per group of heads
// (2Q²N) and its product with x (2Q²P) (mamba_ssm ssd_combined:
// chunk_state, bmm_chunk, chunk_scan).
func (e estimator) mambaFLOPs(n float64) float64 {
	mb := e.m.Mamba
	if mb.Heads <= 0 {
		return 0
	}
	q, p, s := float64(cmp.Or(mb.ChunkSize, mambaChunk)), float64(mb.HeadDim), float64(mb.StateSize)
	perLayer := float64(mb.Heads)*(4*s*p+2*q*p) + float64(mb.Groups)*2*q*s
	return float64(e.m.MambaLayers) * perLayer * n
}

// scanFLOPs is both scans' products over n prompt tokens.
func (e estimator) scanFLOPs(n float64) float64 {
	return e.deltaFLOPs(n) + e.mambaFLOPs(n)
}

// hops is the time activations take between pipeline stages.
func (e estimator) hops(pp int, size float64) float64 {
	if pp < 2 {
		return 0
	}
	return float64(pp-1) * e.allReduce(2, size) / 2
}

func dominant(memory, compute, network float64) string {
	terms := []struct {
		name string
		v    float64
	}{{"memory", memory}, {"compute", compute}, {"network", network}}
	return slices.MaxFunc(terms, func(a, b struct {
		name string
		v    float64
	}) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	}).name
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
