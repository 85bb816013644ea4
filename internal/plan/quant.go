package plan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Stored is what a checkpoint's own quantisation config says its weights
// take, by the classes the planner prices (bytes per weight, averaged over
// the class's projections by their sizes). A mixed-precision checkpoint
// (ModelOpt's MIXED_PRECISION, whose quantized_layers name each projection's
// algorithm) keeps some layers in 8 or 16 bits that a single --weights
// format would price at its own size.
type Stored struct {
	// Format is the routed experts' algorithm (the most weights' where
	// there are no experts), as the planner names formats ("nvfp4"): the
	// figures below apply where --weights names the same format.
	Format string  `json:"format"`
	Mixer  float64 `json:"mixer_bytes_per_param"`
	FFN    float64 `json:"ffn_bytes_per_param"`
	Expert float64 `json:"expert_bytes_per_param,omitempty"`
	Source string  `json:"source"`
	// Rule is how the figures were worked out from Source.
	Rule string `json:"rule"`
}

// The rules by which a checkpoint's stored bytes are worked out.
const (
	ruleListed  = "each listed projection at its algorithm's size, each left out in 16 bits"
	ruleUniform = "every quantised linear weight at the config's width with its scales and zero points, attention it leaves unconverted in 16 bits"
)

// layerKind is one layer's mixer ('*' attention, 'M' Mamba-2, 'L' linear
// attention, 0 none) and feed-forward block ('-' dense, 'E' experts, 0 none).
type layerKind struct{ mixer, ffn byte }

// quantLayer is one entry of quantized_layers.
type quantLayer struct {
	QuantAlgo string `json:"quant_algo"`
	GroupSize int    `json:"group_size"`
}

// hfQuantization is a config.json quantization_config, or the quantization
// object of ModelOpt's hf_quant_config.json.
type hfQuantization struct {
	QuantMethod         string                `json:"quant_method"`
	QuantAlgo           string                `json:"quant_algo"`
	ModulesToNotConvert []string              `json:"modules_to_not_convert"`
	Ignore              []string              `json:"ignore"`
	ExcludeModules      []string              `json:"exclude_modules"`
	QuantizedLayers     map[string]quantLayer `json:"quantized_layers"`
	// GPTQ, AWQ and AutoRound: the weights' width and the weights per
	// 16-bit scale (-1: one scale per output channel); AWQ's older names
	// w_bit and q_group_size too.
	Bits       int   `json:"bits"`
	WBit       int   `json:"w_bit"`
	GroupSize  *int  `json:"group_size"`
	QGroupSize *int  `json:"q_group_size"`
	ZeroPoint  *bool `json:"zero_point"`
	LMHead     *bool `json:"lm_head"`
	// FP8 with one 32-bit scale per block of weights (DeepSeek's, Qwen's).
	WeightBlockSize []int `json:"weight_block_size"`
	// Per-module overrides of the width or group (GPTQModel's dynamic,
	// AutoRound's extra_config) and a restricted set of quantised modules.
	Dynamic          map[string]json.RawMessage `json:"dynamic"`
	ExtraConfig      map[string]json.RawMessage `json:"extra_config"`
	ModulesInBlock   json.RawMessage            `json:"modules_in_block_to_quantize"`
	ConfigGroups     map[string]ctGroup         `json:"config_groups"`
	CompressedFormat string                     `json:"format"`
}

// ctGroup is one of compressed-tensors' config_groups: the scheme its
// target modules' weights are stored in.
type ctGroup struct {
	Weights *struct {
		NumBits   int    `json:"num_bits"`
		Type      string `json:"type"`
		GroupSize *int   `json:"group_size"`
		Strategy  string `json:"strategy"`
		Symmetric *bool  `json:"symmetric"`
	} `json:"weights"`
}

// algoBytes is what one weight takes under a ModelOpt quant_algo; false for
// an algorithm the planner does not know.
func algoBytes(q quantLayer) (float64, string, bool) {
	a := strings.ToUpper(q.QuantAlgo)
	group := func(def int) float64 {
		if q.GroupSize > 0 {
			return float64(q.GroupSize)
		}
		return float64(def)
	}
	switch a {
	case "FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_BLOCK_SCALES", "W8A16", "W8A8_SQ_PER_CHANNEL", "INT8_SQ":
		return 1, "fp8", true
	case "NVFP4":
		// E2M1 values with one FP8 scale per group (16).
		return 0.5 + 1/group(16), "nvfp4", true
	case "MXFP4":
		return 0.5 + 1/group(32), "mxfp4", true
	case "W4A16_AWQ", "W4A8_AWQ", "NVFP4_AWQ", "W4A8_NVFP4_FP8":
		// 4-bit weights with a 16-bit scale per group (128).
		return 0.5 + 2/group(128), "int4", true
	}
	return 0, "", false
}

var layerKey = regexp.MustCompile(`(?:^|\.)layers\.(\d+)\.(.+)$`)
var expertKey = regexp.MustCompile(`(?:^|\.)experts\.\d+\.([a-z0-9_]+)$`)

// projKey names a quantized_layers entry by what it is in its layer:
// "expert.up_proj" (any routed expert), "shared.down_proj", "q_proj",
// "in_proj", "fc1_latent_proj".
func projKey(rest string) string {
	if m := expertKey.FindStringSubmatch(rest); m != nil && !strings.Contains(rest, "shared_expert") {
		return "expert." + m[1]
	}
	last := rest[strings.LastIndexByte(rest, '.')+1:]
	if strings.Contains(rest, "shared_expert") {
		return "shared." + last
	}
	return last
}

// sized is one projection of a layer: its key and its weights.
type sized struct {
	key    string
	params float64
}

// projections lists the weights of layer kind k by class, with the names
// quantized_layers gives them; rest is the layer's other weights of the
// class (convolutions, norms, routers), kept in 16 bits by every
// quantiser.
func (m Model) projections(k layerKind) (mixer, ffn, expert []sized, mixerRest, ffnRest float64) {
	h := float64(m.Hidden)
	switch k.mixer {
	case '*':
		q := float64(m.Heads * m.HeadDim)
		if m.GatedAttention {
			q *= 2
		}
		kv := float64(m.KVHeads * m.HeadDim)
		mixer = []sized{{"q_proj", h * q}, {"k_proj", h * kv}, {"v_proj", h * kv}, {"o_proj", float64(m.Heads*m.HeadDim) * h}}
	case 'M':
		s := m.Mamba
		inner := float64(s.Heads * s.HeadDim)
		conv := inner + float64(2*s.Groups*s.StateSize)
		mixer = []sized{{"in_proj", h * (inner + conv + float64(s.Heads))}, {"out_proj", inner * h}}
		mixerRest = conv*float64(s.ConvKernel) + 3*float64(s.Heads) + inner
	}
	mats := func(prefix string, in, inter float64) []sized {
		out := []sized{{prefix + "up_proj", in * inter}, {prefix + "down_proj", inter * in}}
		if m.FFNMatrices == 3 {
			out = append(out, sized{prefix + "gate_proj", in * inter})
		}
		return out
	}
	switch k.ffn {
	case '-':
		ffn = mats("", h, float64(m.Intermediate))
	case 'E':
		if m.SharedIntermediate > 0 {
			ffn = mats("shared.", h, float64(m.SharedIntermediate))
		}
		width := h
		if m.LatentSize > 0 {
			width = float64(m.LatentSize)
			ffn = append(ffn, sized{"fc1_latent_proj", h * width}, sized{"fc2_latent_proj", width * h})
		}
		ffnRest = h * float64(m.Experts) // the router
		expert = mats("expert.", width, float64(m.ExpertIntermediate))
	}
	return mixer, ffn, expert, mixerRest, ffnRest
}

// storedPrecision prices each class of weight from a mixed-precision
// config's quantized_layers: a listed projection takes its algorithm's
// bytes, one left out is not quantised (16 bits); a layer's routed experts
// take the algorithm listed for any of them. An algorithm the planner does
// not know is named in Unread and its class is left to --weights.
func (m *Model) storedPrecision(q *hfQuantization, source string) {
	if q == nil || len(q.QuantizedLayers) == 0 || len(m.kinds) != m.Layers {
		return
	}
	byLayer := map[int]map[string]quantLayer{}
	var unknown []string
	for name, ql := range q.QuantizedLayers {
		mm := layerKey.FindStringSubmatch(name)
		if mm == nil {
			continue
		}
		if _, _, ok := algoBytes(ql); !ok && !slices.Contains(unknown, ql.QuantAlgo) {
			unknown = append(unknown, ql.QuantAlgo)
		}
		i, err := strconv.Atoi(mm[1])
		if err != nil || i >= m.Layers {
			continue
		}
		if byLayer[i] == nil {
			byLayer[i] = map[string]quantLayer{}
		}
		byLayer[i][projKey(mm[2])] = ql
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		for _, u := range unknown {
			m.Unread = append(m.Unread, fmt.Sprintf("%s quant_algo %q (priced as --weights)", source, u))
		}
		return
	}
	const unq = 2.0
	var sum [3]struct{ params, bytes float64 }
	counts := map[string]float64{}
	add := func(class, layer int, list []sized, rest float64) {
		sum[class].params += rest
		sum[class].bytes += rest * unq
		for _, s := range list {
			b := unq
			if ql, ok := byLayer[layer][s.key]; ok {
				var name string
				b, name, _ = algoBytes(ql)
				counts[name] += s.params
			} else {
				counts["bf16"] += s.params
			}
			sum[class].params += s.params
			sum[class].bytes += s.params * b
		}
	}
	var expertFormat string
	for i, k := range m.kinds {
		mixer, ffn, expert, mixerRest, ffnRest := m.projections(k)
		add(0, i, mixer, mixerRest)
		add(1, i, ffn, ffnRest)
		add(2, i, expert, 0)
		for _, s := range expert {
			if ql, ok := byLayer[i][s.key]; ok && expertFormat == "" {
				_, expertFormat, _ = algoBytes(ql)
			}
		}
	}
	st := Stored{Format: expertFormat, Source: source, Rule: ruleListed}
	if st.Format == "" {
		var most float64
		for name, n := range counts {
			if name != "bf16" && (n > most || (n == most && name < st.Format)) {
				st.Format, most = name, n
			}
		}
	}
	avg := func(c int) float64 {
		if sum[c].params == 0 {
			return 0
		}
		return sum[c].bytes / sum[c].params
	}
	st.Mixer, st.FFN, st.Expert = avg(0), avg(1), avg(2)
	if m.LinearLayers > 0 || m.MLA.KVLoraRank > 0 {
		st.Mixer = 0 // projections named otherwise: left to --weights
	}
	m.Stored = &st
}

// ApplyQuantConfig reads a checkpoint's hf_quant_config.json (ModelOpt's:
// {"quantization": {"quant_algo": ..., "quantized_layers": ...}}) into m,
// as if config.json's quantization_config said the same.
func (m *Model) ApplyQuantConfig(b []byte) error {
	var f struct {
		Quantization *hfQuantization `json:"quantization"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("hf_quant_config.json: not JSON (%v)", err)
	}
	if f.Quantization == nil {
		return fmt.Errorf("hf_quant_config.json: no quantization object")
	}
	m.exclusions(f.Quantization, "hf_quant_config.json")
	m.storedPrecision(f.Quantization, "hf_quant_config.json quantized_layers")
	return nil
}

// exclusions reads a single-format config's lists of modules left
// unconverted: attention kept in 16 bits is priced so; the embeddings,
// lm_head and routers are 16-bit already; any other module is named, as
// its weights are priced at the --weights format.
func (m *Model) exclusions(q *hfQuantization, source string) {
	for _, mod := range slices.Concat(q.ModulesToNotConvert, q.Ignore, q.ExcludeModules) {
		l := strings.ToLower(mod)
		switch {
		case strings.Contains(l, "self_attn") && !strings.Contains(l, "self_attn."):
			m.UnquantizedAttention = true
		case strings.Contains(l, "lm_head"), strings.Contains(l, "embed"), strings.Contains(l, "router"),
			strings.HasSuffix(l, "mlp.gate"), strings.HasSuffix(l, ".gate"), strings.Contains(l, "norm"):
		default:
			m.Unread = append(m.Unread, fmt.Sprintf("%s excludes %q (kept unquantised by the checkpoint, priced as --weights)", source, mod))
		}
	}
}

// groupBytes is what one weight takes stored at bits wide with a 16-bit
// scale per group of group weights, and a zero point of the same width per
// group where zeros (GPTQ's qzeros, AWQ's zero_point): bits/8 + (2 +
// bits/8)/group. A group of -1 is one scale per output channel, taken over
// the model's hidden width.
func groupBytes(bits, group, hidden int, zeros bool) float64 {
	g := float64(group)
	if group <= 0 {
		g = float64(max(hidden, 16))
	}
	b := float64(bits) / 8
	per := 2.0
	if zeros {
		per += b
	}
	return b + per/g
}

// intFormats names the planner's format for an integer weight width.
var intFormats = map[int]string{4: "int4", 8: "int8"}

// uniformPrecision prices a single-scheme quantisation config from its own
// fields: GPTQ, AWQ and AutoRound by bits and group_size (scales and zero
// points included), FP8 by weight_block_size (a 32-bit scale per block),
// compressed-tensors by its one weight scheme. Every quantised linear
// layer takes those bytes; attention the config leaves unconverted stays
// 16-bit. A field that changes the size and is not read (per-module
// overrides, a width no format has, an unknown quant_method) is named in
// Unread, and the checkpoint is priced as --weights.
func (m *Model) uniformPrecision(q *hfQuantization, source string) {
	if q == nil || len(q.QuantizedLayers) > 0 || m.Stored != nil {
		return
	}
	named := 0
	name := func(what string) {
		m.Unread = append(m.Unread, fmt.Sprintf("%s %s (priced as --weights)", source, what))
		named++
	}
	for _, o := range []struct {
		field string
		n     int
	}{{"dynamic", len(q.Dynamic)}, {"extra_config", len(q.ExtraConfig)}} {
		if o.n > 0 {
			name(fmt.Sprintf("%s: per-module overrides of %d module(s)", o.field, o.n))
		}
	}
	if len(q.ModulesInBlock) > 0 && string(q.ModulesInBlock) != "null" && string(q.ModulesInBlock) != "[]" {
		name("modules_in_block_to_quantize: only the listed modules quantised")
	}
	if q.LMHead != nil && *q.LMHead {
		name("lm_head: true (the output layer quantised too)")
	}
	var format string
	var bytes float64
	method := strings.ToLower(q.QuantMethod)
	switch method {
	case "gptq", "awq", "auto-round", "autoround", "intel/auto-round":
		bits := max(q.Bits, q.WBit)
		group := 128
		for _, g := range []*int{q.GroupSize, q.QGroupSize} {
			if g != nil {
				group = *g
			}
		}
		f, ok := intFormats[bits]
		if !ok || (group != -1 && group < 16) {
			name(fmt.Sprintf("bits %d, group_size %d: no format the planner has", bits, group))
			return
		}
		zeros := method != "awq" || q.ZeroPoint == nil || *q.ZeroPoint
		format, bytes = f, groupBytes(bits, group, m.Hidden, zeros)
	case "fp8":
		format, bytes = "fp8", 1
		if b := q.WeightBlockSize; len(b) > 0 {
			n := 1
			for _, d := range b {
				n *= max(d, 1)
			}
			if len(b) != 2 || n < 16 {
				name(fmt.Sprintf("weight_block_size %v: not a block of weights", b))
				return
			}
			bytes += 4 / float64(n)
		}
	case "compressed-tensors":
		var ok bool
		if format, bytes, ok = m.compressedScheme(q.ConfigGroups); !ok {
			name(fmt.Sprintf("config_groups (format %q): no single weight scheme the planner has", q.CompressedFormat))
			return
		}
	case "", "mxfp4", "modelopt":
		return // the --weights format's own bytes, or quantized_layers
	default:
		name(fmt.Sprintf("quant_method %q", q.QuantMethod))
		return
	}
	if named > 0 {
		return
	}
	st := Stored{Format: format, Mixer: bytes, FFN: bytes, Expert: bytes, Source: source, Rule: ruleUniform}
	if m.UnquantizedAttention {
		st.Mixer = 2
	}
	m.Stored = &st
}

// compressedScheme is the one weight scheme of compressed-tensors'
// config_groups as a planner format and its bytes per weight: integers by
// width and group (a zero point where not symmetric), FP8 (per channel or
// tensor: scales negligible), NVFP4 (4-bit floats, an FP8 scale per 16).
func (m *Model) compressedScheme(groups map[string]ctGroup) (string, float64, bool) {
	var format string
	var bytes float64
	for _, g := range groups {
		w := g.Weights
		if w == nil {
			return "", 0, false
		}
		group := -1
		if w.GroupSize != nil && w.Strategy != "channel" && w.Strategy != "tensor" {
			group = *w.GroupSize
		}
		var f string
		var b float64
		switch {
		case w.Type == "int" && intFormats[w.NumBits] != "" && (group == -1 || group >= 16):
			f, b = intFormats[w.NumBits], groupBytes(w.NumBits, group, m.Hidden, w.Symmetric != nil && !*w.Symmetric)
		case w.Type == "float" && w.NumBits == 8:
			f, b = "fp8", 1
		case w.Type == "float" && w.NumBits == 4 && group == 16:
			f, b = "nvfp4", 0.5625
		default:
			return "", 0, false
		}
		if format != "" && (f != format || b != bytes) {
			return "", 0, false
		}
		format, bytes = f, b
	}
	return format, bytes, format != ""
}
