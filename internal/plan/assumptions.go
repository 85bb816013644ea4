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
	Source                 string  `yaml:"source" json:"source"`
}

// PlatformNumbers are one platform's per-node figures and where they come from.
type PlatformNumbers struct {
	Name                   string  `yaml:"name"`
	MemoryGB               float64 `yaml:"memory_gb"`
	MemorySource           string  `yaml:"memory_source"`
	MemoryBandwidthWire    string  `yaml:"memory_bandwidth_wire"`
	BF16TFLOPS             float64 `yaml:"bf16_tflops"`
	BF16Source             string  `yaml:"bf16_source"`
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

// Engine is one serving engine's factors between peak and achieved rates.
type Engine struct {
	Name                  string   `yaml:"name"`
	Aliases               []string `yaml:"aliases"`
	DecodeBandwidth       float64  `yaml:"decode_bandwidth"`
	DecodeBandwidthSource string   `yaml:"decode_bandwidth_source"`
	PrefillCompute        float64  `yaml:"prefill_compute"`
	PrefillComputeSource  string   `yaml:"prefill_compute_source"`
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
		if p.MemoryGB <= 0 || p.MemorySource == "" || p.BF16TFLOPS <= 0 || p.BF16Source == "" || p.AllReduceLatencyUS <= 0 || p.AllReduceLatencySource == "" {
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
		if e.DecodeBandwidth <= 0 || e.DecodeBandwidth > 1 || e.PrefillCompute <= 0 || e.PrefillCompute > 1 ||
			e.DecodeBandwidthSource == "" || e.PrefillComputeSource == "" {
			return a, fmt.Errorf("plan assumptions: engine %q: efficiencies must lie in (0, 1] and carry their sources", e.Name)
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
