// Package plan says what a model will do on a cluster: whether its weights and
// KV cache fit per tensor-parallel size, the time to first token and per
// output token, and which term (memory, compute, network) dominates. It joins
// a Hugging Face config.json with the cluster's measured numbers (or the
// platform's expected ones) and the assumptions in assumptions.yaml; it does
// no I/O and downloads nothing.
package plan

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Model is the arithmetic of one decoder, from its config.json. Layers are
// counted by what they hold: softmax attention (full or sliding-window),
// linear attention (Gated DeltaNet) or Mamba-2 mixers, and dense or
// mixture-of-experts feed-forward blocks. A transformer layer has one mixer
// and one feed-forward block; a Nemotron-H layer has one or the other.
type Model struct {
	Name         string `json:"name"`
	Family       string `json:"model_type,omitempty"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden_size"`
	Heads        int    `json:"attention_heads"`
	KVHeads      int    `json:"kv_heads"`
	HeadDim      int    `json:"head_dim"`
	Vocab        int    `json:"vocab_size"`
	Intermediate int    `json:"intermediate_size,omitempty"` // dense FFN
	// FFNMatrices is 3 for a gated feed-forward block (SwiGLU, GeGLU) and 2
	// for a plain one (Nemotron-H's squared ReLU).
	FFNMatrices int `json:"ffn_matrices"`
	// Mixture of experts (zero when dense).
	Experts            int  `json:"experts,omitempty"`
	ExpertsPerToken    int  `json:"experts_per_token,omitempty"`
	ExpertIntermediate int  `json:"expert_intermediate_size,omitempty"`
	SharedIntermediate int  `json:"shared_expert_intermediate_size,omitempty"`
	TiedEmbeddings     bool `json:"tied_embeddings"`
	// GatedAttention: the query projection also produces an output gate
	// (Qwen3-Next, Qwen3.5), doubling its width.
	GatedAttention bool `json:"gated_attention,omitempty"`
	// FullAttentionLayers hold a KV cache that grows with the context;
	// SlidingLayers hold at most SlidingWindow tokens; LinearLayers
	// (Gated DeltaNet) and MambaLayers hold a fixed state per sequence.
	FullAttentionLayers int        `json:"full_attention_layers"`
	SlidingLayers       int        `json:"sliding_attention_layers,omitempty"`
	SlidingWindow       int        `json:"sliding_window,omitempty"`
	LinearLayers        int        `json:"linear_attention_layers,omitempty"`
	Linear              LinearAttn `json:"linear_attention,omitzero"`
	MambaLayers         int        `json:"mamba_layers,omitempty"`
	Mamba               Mamba      `json:"mamba,omitzero"`
	// DenseFFNLayers carry a dense feed-forward block of Intermediate,
	// MoELayers a routed one (DeepSeek and GLM keep the first
	// first_k_dense_replace layers dense).
	DenseFFNLayers int `json:"dense_ffn_layers"`
	MoELayers      int `json:"moe_layers,omitempty"`
	// MLA is DeepSeek's multi-head latent attention (zero otherwise).
	MLA MLA `json:"mla,omitzero"`
	// UnquantizedAttention: the checkpoint's quantisation config keeps the
	// attention projections in 16-bit (gpt-oss's MXFP4 checkpoints do).
	UnquantizedAttention bool `json:"unquantized_attention,omitempty"`
	// LatentSize is a latent mixture of experts' width (Nemotron-3's
	// moe_latent_size): each MoE layer projects the hidden state down to it,
	// the routed experts work in it, and it is projected back.
	LatentSize int `json:"moe_latent_size,omitempty"`
	// MTPLayers are multi-token-prediction layers the checkpoint carries
	// (num_nextn_predict_layers): held in memory, not read per token unless
	// the engine drafts with them.
	MTPLayers int `json:"mtp_layers,omitempty"`
	// Stored is the checkpoint's own precision per class of weight, where
	// its quantisation config names one per projection (mixed precision).
	Stored *Stored `json:"stored_precision,omitempty"`
	// Unread names config.json fields that look like sizes but the planner
	// does not read: the sizes it works out may be off by them.
	Unread []string `json:"unread_fields,omitempty"`
	// kinds is each layer's mixer and feed-forward block, in order.
	kinds []layerKind
	// quantRead: config.json has its own quantization_config.
	quantRead bool
}

// LinearAttn is the shape of a Gated DeltaNet layer.
type LinearAttn struct {
	KeyHeads, ValueHeads, KeyDim, ValueDim, ConvKernel int
}

// mambaChunk is Mamba-2's scan chunk where config.json gives none: the
// Mamba2 module's default (state-spaces/mamba mamba_ssm/modules/mamba2.py,
// chunk_size=256).
const mambaChunk = 256

// Mamba is the shape of a Mamba-2 mixer; ChunkSize is the length of the
// chunks its prefill scan works in (config.json chunk_size).
type Mamba struct {
	Heads, HeadDim, StateSize, Groups, ConvKernel, ChunkSize int
}

// MLA is the shape of multi-head latent attention; the Index fields are
// DeepSeek V3.2's sparse-attention indexer.
type MLA struct {
	QLoraRank, KVLoraRank, QKNopeDim, QKRopeDim, VHeadDim int
	IndexHeads, IndexHeadDim                              int
}

// ErrNotTransformer marks a config.json sparkrig cannot read as a decoder.
var ErrNotTransformer = errors.New("not a transformer config")

// hfConfig is the subset of Hugging Face config.json keys the planner reads.
// Multimodal configs nest the language model under text_config.
type hfConfig struct {
	ModelType             string          `json:"model_type"`
	Architectures         []string        `json:"architectures"`
	NumHiddenLayers       int             `json:"num_hidden_layers"`
	HiddenSize            int             `json:"hidden_size"`
	NumAttentionHeads     int             `json:"num_attention_heads"`
	NumKeyValueHeads      int             `json:"num_key_value_heads"`
	HeadDim               int             `json:"head_dim"`
	VocabSize             int             `json:"vocab_size"`
	IntermediateSize      int             `json:"intermediate_size"`
	HiddenAct             string          `json:"hidden_act"`
	MLPHiddenAct          string          `json:"mlp_hidden_act"`
	NumExperts            int             `json:"num_experts"`
	NumLocalExperts       int             `json:"num_local_experts"`
	NRoutedExperts        int             `json:"n_routed_experts"`
	NumExpertsPerTok      int             `json:"num_experts_per_tok"`
	ExpertsPerToken       int             `json:"experts_per_token"`
	MoEIntermediateSize   int             `json:"moe_intermediate_size"`
	SharedExpertInterm    int             `json:"shared_expert_intermediate_size"`
	MoESharedExpertInterm int             `json:"moe_shared_expert_intermediate_size"`
	NSharedExperts        int             `json:"n_shared_experts"`
	FirstKDenseReplace    int             `json:"first_k_dense_replace"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	LayerTypes            []string        `json:"layer_types"`
	SlidingWindow         *int            `json:"sliding_window"`
	UseSlidingWindow      *bool           `json:"use_sliding_window"`
	SlidingWindowPattern  int             `json:"sliding_window_pattern"`
	SlidingPatternPrivate int             `json:"_sliding_window_pattern"`
	FullAttentionInterval int             `json:"full_attention_interval"`
	AttnOutputGate        *bool           `json:"attn_output_gate"`
	LinearNumKeyHeads     int             `json:"linear_num_key_heads"`
	LinearNumValueHeads   int             `json:"linear_num_value_heads"`
	LinearKeyHeadDim      int             `json:"linear_key_head_dim"`
	LinearValueHeadDim    int             `json:"linear_value_head_dim"`
	LinearConvKernelDim   int             `json:"linear_conv_kernel_dim"`
	QLoraRank             *int            `json:"q_lora_rank"`
	KVLoraRank            int             `json:"kv_lora_rank"`
	QKNopeHeadDim         int             `json:"qk_nope_head_dim"`
	QKRopeHeadDim         int             `json:"qk_rope_head_dim"`
	VHeadDim              int             `json:"v_head_dim"`
	IndexNHeads           int             `json:"index_n_heads"`
	IndexHeadDim          int             `json:"index_head_dim"`
	HybridOverridePattern string          `json:"hybrid_override_pattern"`
	MambaNumHeads         int             `json:"mamba_num_heads"`
	MambaHeadDim          int             `json:"mamba_head_dim"`
	SSMStateSize          int             `json:"ssm_state_size"`
	NGroups               int             `json:"n_groups"`
	MambaNumGroups        int             `json:"mamba_num_groups"`
	ConvKernel            int             `json:"conv_kernel"`
	ChunkSize             int             `json:"chunk_size"`
	LayersBlockType       []string        `json:"layers_block_type"`
	MoELatentSize         int             `json:"moe_latent_size"`
	NumNextNPredict       int             `json:"num_nextn_predict_layers"`
	MTPNumHiddenLayers    int             `json:"mtp_num_hidden_layers"`
	Quantization          *hfQuantization `json:"quantization_config"`
	TextConfig            json.RawMessage `json:"text_config"`
}

// maxDim bounds every size read from a config, so the arithmetic stays finite
// whatever the file says (real configs are far below it).
const maxDim = 1 << 24

// ParseConfig reads a Hugging Face config.json. A config without the fields a
// decoder needs is an error naming the first one missing.
func ParseConfig(b []byte, name string) (Model, error) {
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return Model{}, fmt.Errorf("%w: not JSON (%v)", ErrNotTransformer, err)
	}
	if c.NumHiddenLayers == 0 && len(c.TextConfig) > 0 {
		var tc hfConfig
		if err := json.Unmarshal(c.TextConfig, &tc); err != nil {
			return Model{}, fmt.Errorf("%w: text_config: %v", ErrNotTransformer, err)
		}
		if tc.TieWordEmbeddings == nil {
			tc.TieWordEmbeddings = c.TieWordEmbeddings
		}
		if tc.Quantization == nil {
			tc.Quantization = c.Quantization
		}
		if tc.ModelType == "" {
			tc.ModelType = c.ModelType
		}
		c = tc
	}
	m := Model{Name: name, Family: c.ModelType, Layers: c.NumHiddenLayers, Hidden: c.HiddenSize, Heads: c.NumAttentionHeads,
		KVHeads: c.NumKeyValueHeads, HeadDim: c.HeadDim, Vocab: c.VocabSize, Intermediate: c.IntermediateSize,
		ExpertsPerToken: max(c.NumExpertsPerTok, c.ExpertsPerToken), FFNMatrices: 3}
	m.Experts = max(c.NumExperts, c.NumLocalExperts, c.NRoutedExperts)
	for _, req := range []struct {
		v    int
		name string
	}{{m.Layers, "num_hidden_layers"}, {m.Hidden, "hidden_size"}, {m.Heads, "num_attention_heads"}, {m.Vocab, "vocab_size"}} {
		if req.v <= 0 {
			return Model{}, fmt.Errorf("%w: no %s", ErrNotTransformer, req.name)
		}
	}
	for _, v := range []int{m.Layers, m.Hidden, m.Heads, m.KVHeads, m.HeadDim, m.Vocab, m.Intermediate, m.Experts,
		c.MoEIntermediateSize, c.SharedExpertInterm, c.MoESharedExpertInterm, c.KVLoraRank, c.MambaNumHeads, c.SSMStateSize,
		c.MoELatentSize, c.NumNextNPredict, c.MTPNumHiddenLayers} {
		if v < 0 || v > maxDim {
			return Model{}, fmt.Errorf("%w: a size of %d is out of range", ErrNotTransformer, v)
		}
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if m.HeadDim == 0 {
		m.HeadDim = m.Hidden / m.Heads
	}
	if act := strings.ToLower(c.MLPHiddenAct + c.HiddenAct); strings.Contains(act, "relu2") {
		m.FFNMatrices = 2
	}
	m.TiedEmbeddings = c.TieWordEmbeddings != nil && *c.TieWordEmbeddings
	if c.TieWordEmbeddings == nil && strings.HasPrefix(c.ModelType, "gemma") {
		m.TiedEmbeddings = true // Gemma's configs leave the default, which ties
	}
	m.GatedAttention = c.AttnOutputGate != nil && *c.AttnOutputGate
	m.LatentSize, m.MTPLayers = c.MoELatentSize, max(c.NumNextNPredict, c.MTPNumHiddenLayers)
	m.Unread = unreadSizes(b)
	if err := m.layerKinds(&c); err != nil {
		return Model{}, err
	}
	if err := m.feedForward(c); err != nil {
		return Model{}, err
	}
	if c.KVLoraRank > 0 {
		m.MLA = MLA{KVLoraRank: c.KVLoraRank, QKNopeDim: c.QKNopeHeadDim, QKRopeDim: c.QKRopeHeadDim, VHeadDim: c.VHeadDim,
			IndexHeads: c.IndexNHeads, IndexHeadDim: c.IndexHeadDim}
		if c.QLoraRank != nil {
			m.MLA.QLoraRank = *c.QLoraRank
		}
		if m.MLA.QKNopeDim <= 0 || m.MLA.QKRopeDim <= 0 || m.MLA.VHeadDim <= 0 {
			return Model{}, fmt.Errorf("%w: latent attention (kv_lora_rank) without qk_nope_head_dim, qk_rope_head_dim and v_head_dim", ErrNotTransformer)
		}
	}
	m.layerOrder(c)
	if q := c.Quantization; q != nil {
		m.quantRead = true
		m.exclusions(q, "config.json quantization_config")
		m.storedPrecision(q, "config.json quantization_config.quantized_layers")
		m.uniformPrecision(q, "config.json quantization_config")
	}
	return m, nil
}

// layerKinds sorts the layers by mixer: full or sliding-window attention,
// Gated DeltaNet, Mamba-2.
func (m *Model) layerKinds(c *hfConfig) error {
	window := 0
	if c.SlidingWindow != nil && (c.UseSlidingWindow == nil || *c.UseSlidingWindow) {
		window = *c.SlidingWindow
	}
	m.FullAttentionLayers = m.Layers
	if c.HybridOverridePattern == "" && len(c.LayersBlockType) > 0 {
		// Newer Nemotron-H configs list the layers by name.
		var p strings.Builder
		for _, t := range c.LayersBlockType {
			switch t {
			case "mamba":
				p.WriteByte('M')
			case "attention":
				p.WriteByte('*')
			case "mlp":
				p.WriteByte('-')
			case "moe":
				p.WriteByte('E')
			default:
				return fmt.Errorf("%w: layers_block_type has %q (want mamba, attention, mlp, moe)", ErrNotTransformer, t)
			}
		}
		c.HybridOverridePattern = p.String()
	}
	switch {
	case c.HybridOverridePattern != "":
		// Nemotron-H: one character per layer, M Mamba-2, * attention,
		// - dense MLP, E mixture of experts.
		p := c.HybridOverridePattern
		if len(p) != m.Layers {
			return fmt.Errorf("%w: hybrid_override_pattern has %d layers, num_hidden_layers %d", ErrNotTransformer, len(p), m.Layers)
		}
		m.FullAttentionLayers = strings.Count(p, "*")
		m.MambaLayers = strings.Count(p, "M")
		m.DenseFFNLayers = strings.Count(p, "-")
		m.MoELayers = strings.Count(p, "E")
		if m.FullAttentionLayers+m.MambaLayers+m.DenseFFNLayers+m.MoELayers != m.Layers {
			return fmt.Errorf("%w: hybrid_override_pattern has characters other than M, *, - and E", ErrNotTransformer)
		}
		m.Mamba = Mamba{Heads: c.MambaNumHeads, HeadDim: c.MambaHeadDim, StateSize: c.SSMStateSize,
			Groups: max(c.NGroups, c.MambaNumGroups), ConvKernel: c.ConvKernel, ChunkSize: cmp.Or(c.ChunkSize, mambaChunk)}
		if m.MambaLayers > 0 && (m.Mamba.Heads <= 0 || m.Mamba.HeadDim <= 0 || m.Mamba.StateSize <= 0 || m.Mamba.Groups <= 0) {
			return fmt.Errorf("%w: Mamba layers without mamba_num_heads, mamba_head_dim, ssm_state_size and n_groups", ErrNotTransformer)
		}
		return nil
	case len(c.LayerTypes) > 0:
		m.FullAttentionLayers = 0
		for _, t := range c.LayerTypes {
			switch {
			case strings.Contains(t, "linear"):
				m.LinearLayers++
			case strings.Contains(t, "sliding"):
				m.SlidingLayers++
			default:
				m.FullAttentionLayers++
			}
		}
	case c.FullAttentionInterval > 0:
		m.FullAttentionLayers = m.Layers / c.FullAttentionInterval
		m.LinearLayers = m.Layers - m.FullAttentionLayers
	case window > 0 && max(c.SlidingWindowPattern, c.SlidingPatternPrivate) > 0:
		// Every n-th layer global, the others local (Gemma 3).
		n := max(c.SlidingWindowPattern, c.SlidingPatternPrivate)
		m.FullAttentionLayers = m.Layers / n
		m.SlidingLayers = m.Layers - m.FullAttentionLayers
	case window > 0 && c.ModelType == "gemma2":
		// Gemma 2 alternates local and global layers.
		m.FullAttentionLayers = m.Layers / 2
		m.SlidingLayers = m.Layers - m.FullAttentionLayers
	}
	if m.SlidingLayers > 0 {
		if window <= 0 {
			return fmt.Errorf("%w: sliding-attention layers without sliding_window", ErrNotTransformer)
		}
		m.SlidingWindow = window
	}
	if m.LinearLayers > 0 {
		m.Linear = LinearAttn{KeyHeads: c.LinearNumKeyHeads, ValueHeads: c.LinearNumValueHeads,
			KeyDim: c.LinearKeyHeadDim, ValueDim: c.LinearValueHeadDim, ConvKernel: c.LinearConvKernelDim}
		if m.Linear.KeyHeads <= 0 || m.Linear.ValueHeads <= 0 || m.Linear.KeyDim <= 0 || m.Linear.ValueDim <= 0 {
			return fmt.Errorf("%w: linear-attention layers without linear_num_key_heads, linear_num_value_heads, linear_key_head_dim and linear_value_head_dim", ErrNotTransformer)
		}
	}
	return nil
}

// feedForward sizes the dense and routed feed-forward blocks. Experts are
// sized by moe_intermediate_size, or by intermediate_size where the config
// has no separate expert size (gpt-oss, Mixtral).
func (m *Model) feedForward(c hfConfig) error {
	if m.Experts == 0 {
		if c.HybridOverridePattern == "" {
			m.DenseFFNLayers = m.Layers
		}
		if m.DenseFFNLayers > 0 && m.Intermediate <= 0 {
			return fmt.Errorf("%w: no intermediate_size", ErrNotTransformer)
		}
		if m.MoELayers > 0 {
			return fmt.Errorf("%w: mixture-of-experts layers without n_routed_experts", ErrNotTransformer)
		}
		return nil
	}
	m.ExpertIntermediate = c.MoEIntermediateSize
	if m.ExpertIntermediate == 0 {
		m.ExpertIntermediate = m.Intermediate
	}
	if m.ExpertsPerToken <= 0 || m.ExpertIntermediate <= 0 {
		return fmt.Errorf("%w: a mixture of experts needs num_experts_per_tok and moe_intermediate_size (or intermediate_size)", ErrNotTransformer)
	}
	if m.ExpertsPerToken > m.Experts {
		return fmt.Errorf("%w: %d experts per token of %d", ErrNotTransformer, m.ExpertsPerToken, m.Experts)
	}
	m.SharedIntermediate = max(c.SharedExpertInterm, c.MoESharedExpertInterm, c.NSharedExperts*c.MoEIntermediateSize)
	if c.HybridOverridePattern == "" {
		k := min(max(c.FirstKDenseReplace, 0), m.Layers)
		m.DenseFFNLayers, m.MoELayers = k, m.Layers-k
		if k > 0 && m.Intermediate <= 0 {
			return fmt.Errorf("%w: first_k_dense_replace without intermediate_size", ErrNotTransformer)
		}
	}
	return nil
}

// layerOrder records each layer's kind: a Nemotron-H pattern as written;
// otherwise attention (or linear attention) with a feed-forward block, the
// first first_k_dense_replace of them dense.
func (m *Model) layerOrder(c hfConfig) {
	m.kinds = make([]layerKind, m.Layers)
	if p := c.HybridOverridePattern; p != "" {
		for i := range m.kinds {
			switch p[i] {
			case 'M', '*':
				m.kinds[i].mixer = p[i]
			default:
				m.kinds[i].ffn = p[i]
			}
		}
		return
	}
	for i := range m.kinds {
		k := layerKind{mixer: '*', ffn: '-'}
		switch {
		case len(c.LayerTypes) == m.Layers && strings.Contains(c.LayerTypes[i], "linear"):
			k.mixer = 'L'
		case len(c.LayerTypes) == 0 && c.FullAttentionInterval > 0 && (i+1)%c.FullAttentionInterval != 0:
			k.mixer = 'L'
		}
		if m.Experts > 0 && i >= m.DenseFFNLayers {
			k.ffn = 'E'
		}
		m.kinds[i] = k
	}
}

// Params counts weights by where they live.
type Params struct {
	Embedding float64 // input embedding table
	LMHead    float64 // output projection (0 when tied)
	// Mixer is the attention, linear-attention and Mamba weights of every layer.
	Mixer float64
	// FFN is the other per-token weights of every layer: dense feed-forward
	// blocks, shared experts and routers.
	FFN float64
	// Expert is one routed expert of one layer.
	Expert float64
	// MTP is the multi-token-prediction layers. Engines load them only to
	// draft tokens (speculative decoding), so they are not in Total.
	MTP float64
}

// Total is every weight of the main model (the MTP layers aside, as model
// cards count them).
func (p Params) Total(m Model) float64 {
	return p.Embedding + p.LMHead + p.Mixer + p.FFN + p.Expert*float64(m.Experts*m.MoELayers)
}

// Active is the weights one token multiplies: every layer's mixer and dense
// weights, its routed experts and the lm_head.
func (p Params) Active(m Model) float64 {
	return p.Mixer + p.FFN + p.Expert*float64(m.ExpertsPerToken*m.MoELayers) + p.head()
}

func (p Params) head() float64 {
	if p.LMHead > 0 {
		return p.LMHead
	}
	return p.Embedding
}

// Count works out the parameters from the architecture.
func (m Model) Count() Params {
	h := float64(m.Hidden)
	attn := m.attentionParams()
	var linear float64
	if l := m.Linear; l.KeyHeads > 0 {
		k, v := float64(l.KeyHeads*l.KeyDim), float64(l.ValueHeads*l.ValueDim)
		// q, k, v, the output gate z, the per-head a and b, then the output projection.
		linear = h*(2*k+2*v+2*float64(l.ValueHeads)) + v*h
	}
	var mamba float64
	if s := m.Mamba; s.Heads > 0 {
		inner := float64(s.Heads * s.HeadDim)
		conv := inner + float64(2*s.Groups*s.StateSize)
		// in_proj (z, x, B, C, dt), the causal convolution, out_proj, then
		// the per-head A, D and dt bias and the gated norm.
		mamba = h*(inner+conv+float64(s.Heads)) + conv*float64(s.ConvKernel) + inner*h + 3*float64(s.Heads) + inner
	}
	ffn := func(inter int) float64 { return float64(m.FFNMatrices) * h * float64(inter) }
	p := Params{Embedding: float64(m.Vocab) * h}
	if !m.TiedEmbeddings {
		p.LMHead = float64(m.Vocab) * h
	}
	attnLayers := m.FullAttentionLayers + m.SlidingLayers
	p.Mixer = float64(attnLayers)*attn + float64(m.LinearLayers)*linear + float64(m.MambaLayers)*mamba
	p.FFN = float64(m.DenseFFNLayers) * ffn(m.Intermediate)
	if m.Experts > 0 {
		p.FFN += float64(m.MoELayers) * (ffn(m.SharedIntermediate) + h*float64(m.Experts))
		p.Expert = ffn(m.ExpertIntermediate)
		if m.LatentSize > 0 {
			// LatentMoE: the experts work in the latent width; every MoE layer
			// projects down to it and back up.
			l := float64(m.LatentSize)
			p.Expert = float64(m.FFNMatrices) * l * float64(m.ExpertIntermediate)
			p.FFN += float64(m.MoELayers) * 2 * h * l
		}
	}
	if m.MTPLayers > 0 {
		// One attention layer and one feed-forward block per prediction layer
		// (every expert of it held), and the projection of the embedding and
		// hidden state into it.
		block := ffn(m.Intermediate)
		if m.Experts > 0 {
			block = ffn(m.SharedIntermediate) + h*float64(m.Experts) + p.Expert*float64(m.Experts)
		}
		p.MTP = float64(m.MTPLayers) * (attn + block + 2*h*h)
	}
	return p
}

// attentionParams is one softmax-attention layer's projections.
func (m Model) attentionParams() float64 {
	h := float64(m.Hidden)
	heads := float64(m.Heads)
	if a := m.MLA; a.KVLoraRank > 0 {
		qk := float64(a.QKNopeDim + a.QKRopeDim)
		q := h * heads * qk
		if a.QLoraRank > 0 {
			q = h*float64(a.QLoraRank) + float64(a.QLoraRank)*heads*qk
		}
		kv := h*float64(a.KVLoraRank+a.QKRopeDim) + float64(a.KVLoraRank)*heads*float64(a.QKNopeDim+a.VHeadDim)
		o := heads * float64(a.VHeadDim) * h
		var index float64
		if a.IndexHeads > 0 {
			// The indexer's query (from the query latent), key and head weights.
			index = float64(max(a.QLoraRank, 0)*a.IndexHeads*a.IndexHeadDim) + h*float64(a.IndexHeadDim) + h*float64(a.IndexHeads)
		}
		return q + kv + o + index
	}
	q := float64(m.Heads * m.HeadDim)
	if m.GatedAttention {
		q *= 2
	}
	kv := float64(2 * m.KVHeads * m.HeadDim)
	return h*(q+kv) + float64(m.Heads*m.HeadDim)*h
}

// sizeWords mark a config key that sets a size; readKeys are the keys the
// planner reads (hfConfig's) and keys that set no weight's size.
var sizeWords = []string{"size", "num_", "n_", "_dim", "rank", "experts", "heads", "layers"}

var notSizes = map[string]bool{
	"max_position_embeddings": true, "max_window_layers": true, "num_logits_to_keep": true, "chunk_size": true,
	"n_group": true, "topk_group": true, "bos_token_id": true, "eos_token_id": true, "pad_token_id": true,
	"index_topk": true, "original_max_position_embeddings": true, "attention_chunk_size": true,
	"time_step_rank": true, "num_labels": true, "mtp_layers_block_type": true, "mtp_hybrid_override_pattern": true,
	"rope_scaling": true, "rope_parameters": true, "partial_rotary_factor": true, "max_length": true,
	"expand": true, "mamba_d_conv": true, "no_rope_layers": true, "full_attn_idxs": true,
}

// unreadSizes names the keys of a config.json (its text_config where the
// decoder is nested) that look like sizes and are not read. A key whose
// value keeps the default shape (decoder_sparse_step 1, an empty
// mlp_only_layers) is not named.
func unreadSizes(b []byte) []string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return nil
	}
	if _, ok := raw["num_hidden_layers"]; !ok {
		if tc, ok := raw["text_config"]; ok {
			var inner map[string]json.RawMessage
			if json.Unmarshal(tc, &inner) == nil {
				raw = inner
			}
		}
	}
	known := map[string]bool{}
	t := reflect.TypeFor[hfConfig]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	var out []string
	for k, v := range raw {
		if known[k] || notSizes[k] || !slices.ContainsFunc(sizeWords, func(w string) bool { return strings.Contains(k, w) }) {
			continue
		}
		var n float64
		var list []any
		switch {
		case json.Unmarshal(v, &n) == nil:
			if n == 0 || (n == 1 && (strings.HasSuffix(k, "_step") || strings.HasSuffix(k, "_freq"))) {
				continue
			}
		case json.Unmarshal(v, &list) == nil:
			if len(list) == 0 {
				continue
			}
		default:
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
