// Package plan says what a model will do on a cluster: whether its weights and
// KV cache fit per tensor-parallel size, the time to first token and per
// output token, and which term (memory, compute, network) dominates. It joins
// a Hugging Face config.json with the cluster's measured numbers (or the
// platform's expected ones) and the assumptions in assumptions.yaml; it does
// no I/O and downloads nothing.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Model is the arithmetic of one transformer, from its config.json.
type Model struct {
	Name         string `json:"name"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden_size"`
	Heads        int    `json:"attention_heads"`
	KVHeads      int    `json:"kv_heads"`
	HeadDim      int    `json:"head_dim"`
	Vocab        int    `json:"vocab_size"`
	Intermediate int    `json:"intermediate_size,omitempty"` // dense FFN
	// Mixture of experts (zero when dense).
	Experts            int  `json:"experts,omitempty"`
	ExpertsPerToken    int  `json:"experts_per_token,omitempty"`
	ExpertIntermediate int  `json:"expert_intermediate_size,omitempty"`
	SharedIntermediate int  `json:"shared_expert_intermediate_size,omitempty"`
	TiedEmbeddings     bool `json:"tied_embeddings"`
	// GatedAttention: the query projection also produces an output gate
	// (Qwen3-Next, Qwen3.5), doubling its width.
	GatedAttention bool `json:"gated_attention,omitempty"`
	// FullAttentionLayers hold a KV cache; the others are linear-attention
	// (Gated DeltaNet) layers with a fixed-size state per sequence.
	FullAttentionLayers int        `json:"full_attention_layers"`
	Linear              LinearAttn `json:"linear_attention,omitzero"`
}

// LinearAttn is the shape of a Gated DeltaNet layer.
type LinearAttn struct {
	KeyHeads, ValueHeads, KeyDim, ValueDim, ConvKernel int
}

// ErrNotTransformer marks a config.json sparkrig cannot read as a decoder-only transformer.
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
	NumExperts            int             `json:"num_experts"`
	NumLocalExperts       int             `json:"num_local_experts"`
	NRoutedExperts        int             `json:"n_routed_experts"`
	NumExpertsPerTok      int             `json:"num_experts_per_tok"`
	MoEIntermediateSize   int             `json:"moe_intermediate_size"`
	SharedExpertInterm    int             `json:"shared_expert_intermediate_size"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	LayerTypes            []string        `json:"layer_types"`
	FullAttentionInterval int             `json:"full_attention_interval"`
	AttnOutputGate        *bool           `json:"attn_output_gate"`
	LinearNumKeyHeads     int             `json:"linear_num_key_heads"`
	LinearNumValueHeads   int             `json:"linear_num_value_heads"`
	LinearKeyHeadDim      int             `json:"linear_key_head_dim"`
	LinearValueHeadDim    int             `json:"linear_value_head_dim"`
	LinearConvKernelDim   int             `json:"linear_conv_kernel_dim"`
	TextConfig            json.RawMessage `json:"text_config"`
}

// ParseConfig reads a Hugging Face config.json. A config without the fields a
// decoder-only transformer needs is an error naming the first one missing.
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
		c = tc
	}
	m := Model{Name: name, Layers: c.NumHiddenLayers, Hidden: c.HiddenSize, Heads: c.NumAttentionHeads,
		KVHeads: c.NumKeyValueHeads, HeadDim: c.HeadDim, Vocab: c.VocabSize, Intermediate: c.IntermediateSize,
		ExpertsPerToken: c.NumExpertsPerTok, ExpertIntermediate: c.MoEIntermediateSize, SharedIntermediate: c.SharedExpertInterm}
	m.Experts = max(c.NumExperts, c.NumLocalExperts, c.NRoutedExperts)
	for _, req := range []struct {
		v    int
		name string
	}{{m.Layers, "num_hidden_layers"}, {m.Hidden, "hidden_size"}, {m.Heads, "num_attention_heads"}, {m.Vocab, "vocab_size"}} {
		if req.v <= 0 {
			return Model{}, fmt.Errorf("%w: no %s", ErrNotTransformer, req.name)
		}
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if m.HeadDim == 0 {
		m.HeadDim = m.Hidden / m.Heads
	}
	if m.Experts > 0 {
		if m.ExpertsPerToken <= 0 || m.ExpertIntermediate <= 0 {
			return Model{}, fmt.Errorf("%w: a mixture of experts needs num_experts_per_tok and moe_intermediate_size", ErrNotTransformer)
		}
	} else if m.Intermediate <= 0 {
		return Model{}, fmt.Errorf("%w: no intermediate_size", ErrNotTransformer)
	}
	m.TiedEmbeddings = c.TieWordEmbeddings != nil && *c.TieWordEmbeddings
	m.GatedAttention = c.AttnOutputGate != nil && *c.AttnOutputGate
	m.FullAttentionLayers = m.Layers
	switch {
	case len(c.LayerTypes) > 0:
		m.FullAttentionLayers = 0
		for _, t := range c.LayerTypes {
			if !strings.Contains(t, "linear") {
				m.FullAttentionLayers++
			}
		}
	case c.FullAttentionInterval > 0:
		m.FullAttentionLayers = m.Layers / c.FullAttentionInterval
	}
	if m.FullAttentionLayers < m.Layers {
		m.Linear = LinearAttn{KeyHeads: c.LinearNumKeyHeads, ValueHeads: c.LinearNumValueHeads,
			KeyDim: c.LinearKeyHeadDim, ValueDim: c.LinearValueHeadDim, ConvKernel: c.LinearConvKernelDim}
		if m.Linear.KeyHeads <= 0 || m.Linear.ValueHeads <= 0 || m.Linear.KeyDim <= 0 || m.Linear.ValueDim <= 0 {
			return Model{}, fmt.Errorf("%w: linear-attention layers without linear_num_key_heads, linear_num_value_heads, linear_key_head_dim and linear_value_head_dim", ErrNotTransformer)
		}
	}
	return m, nil
}

// Params counts weights by where they live.
type Params struct {
	Embedding float64 // input embedding table
	LMHead    float64 // output projection (0 when tied)
	// Dense: per-token weights of every layer (attention, dense FFN, shared
	// expert, router).
	Dense float64
	// Expert is one routed expert of one layer.
	Expert float64
}

// Total is every weight in the checkpoint.
func (p Params) Total(m Model) float64 {
	return p.Embedding + p.LMHead + p.Dense + p.Expert*float64(m.Experts*m.Layers)
}

// Active is the weights one token multiplies: dense, its routed experts and the lm_head.
func (p Params) Active(m Model) float64 {
	return p.Dense + p.Expert*float64(m.ExpertsPerToken*m.Layers) + p.head()
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
	q := float64(m.Heads * m.HeadDim)
	if m.GatedAttention {
		q *= 2
	}
	kv := float64(2 * m.KVHeads * m.HeadDim)
	full := h*(q+kv) + float64(m.Heads*m.HeadDim)*h
	var linear float64
	if l := m.Linear; l.KeyHeads > 0 {
		k, v := float64(l.KeyHeads*l.KeyDim), float64(l.ValueHeads*l.ValueDim)
		// q, k, v, the output gate z, the per-head a and b, then the output projection.
		linear = h*(2*k+2*v+2*float64(l.ValueHeads)) + v*h
	}
	ffn := func(inter int) float64 { return 3 * h * float64(inter) }
	perLayer := ffn(m.Intermediate)
	var expert float64
	if m.Experts > 0 {
		perLayer = ffn(m.SharedIntermediate) + h*float64(m.Experts)
		expert = ffn(m.ExpertIntermediate)
	}
	p := Params{Embedding: float64(m.Vocab) * h, Expert: expert}
	if !m.TiedEmbeddings {
		p.LMHead = float64(m.Vocab) * h
	}
	linearLayers := m.Layers - m.FullAttentionLayers
	p.Dense = float64(m.Layers)*perLayer + float64(m.FullAttentionLayers)*full + float64(linearLayers)*linear
	return p
}
