// Package expect holds what benchmarks should give on each platform and
// topology, and the wire limits, as an embedded data file
// (expectations.yaml) where every number carries its source. It answers
// "what fits this result?" and says so when nothing does.
package expect

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/topology"
)

//go:embed expectations.yaml
var data []byte

// Platforms and topologies sparkrig knows.
var (
	Platforms  = []string{"dgx-spark", "h100", "h200", "a100"}
	Topologies = topologyNames()
)

// Measures.
const (
	NCCLBusBW      = "nccl-busbw"
	RDMABW         = "rdma-bw"
	RDMABWAggr     = "rdma-bw-aggregate"
	RDMALat        = "rdma-lat"
	TCPBW          = "tcp-bw"
	NVBandwidthVal = "nvbandwidth"
)

// Expectation is one expected value and the conditions it holds under.
type Expectation struct {
	ID         string     `yaml:"id" json:"id"`
	Platform   string     `yaml:"platform" json:"platform"`
	Topology   string     `yaml:"topology" json:"topology"`
	Measure    string     `yaml:"measure" json:"measure"`
	Conditions Conditions `yaml:"conditions" json:"conditions"`
	Value      float64    `yaml:"value" json:"value"`
	Unit       string     `yaml:"unit" json:"unit"`
	Better     string     `yaml:"better" json:"better"`
	Warn       float64    `yaml:"warn" json:"warn"`
	Pass       float64    `yaml:"pass" json:"pass"`
	Source     string     `yaml:"source" json:"source"`
}

// Conditions narrow an expectation; zero values match anything.
type Conditions struct {
	Collective string `yaml:"collective,omitempty" json:"collective,omitempty"`
	MinSize    int64  `yaml:"min_size,omitempty" json:"min_size,omitempty"`
	MaxSize    int64  `yaml:"max_size,omitempty" json:"max_size,omitempty"`
	Ranks      int    `yaml:"ranks,omitempty" json:"ranks,omitempty"`
	NCCLMin    string `yaml:"nccl_min,omitempty" json:"nccl_min,omitempty"`
	Verb       string `yaml:"verb,omitempty" json:"verb,omitempty"`
	Devices    int    `yaml:"devices,omitempty" json:"devices,omitempty"`
	Protocol   string `yaml:"protocol,omitempty" json:"protocol,omitempty"`
}

// Wire is what a link can carry, per direction.
type Wire struct {
	ID       string  `yaml:"id" json:"id"`
	Platform string  `yaml:"platform" json:"platform"`
	Applies  string  `yaml:"applies" json:"applies"`
	Name     string  `yaml:"name" json:"name"`
	Value    float64 `yaml:"value" json:"value"`
	Unit     string  `yaml:"unit" json:"unit"`
	Source   string  `yaml:"source" json:"source"`
}

// Set is the whole data file.
type Set struct {
	Expectations []Expectation `yaml:"expectations"`
	Wires        []Wire        `yaml:"wires"`
}

var (
	loadOnce sync.Once
	loaded   Set
	loadErr  error
)

// Default returns the embedded expectations. The data file is checked by the
// package tests, so an error here means a broken build.
func Default() (Set, error) {
	loadOnce.Do(func() {
		if fresh(data, expectationsGenLen, expectationsGenCRC) {
			loaded, loadErr = checkSet(generatedExpectations)
			return
		}
		loaded, loadErr = Parse(data)
	})
	return loaded, loadErr
}

// Parse reads and validates an expectations file.
func Parse(b []byte) (Set, error) {
	var s Set
	if err := yaml.Unmarshal(b, &s); err != nil {
		return Set{}, fmt.Errorf("expectations: %w", err)
	}
	return checkSet(s)
}

// checkSet validates an expectations file as read.
func checkSet(s Set) (Set, error) {
	seen := map[string]bool{}
	for _, e := range s.Expectations {
		if err := e.validate(); err != nil {
			return Set{}, err
		}
		if seen[e.ID] {
			return Set{}, fmt.Errorf("expectation %s: duplicate id", e.ID)
		}
		seen[e.ID] = true
	}
	for _, w := range s.Wires {
		if w.ID == "" || w.Value <= 0 || w.Source == "" {
			return Set{}, fmt.Errorf("wire %q: needs id, value and source", w.ID)
		}
	}
	return s, nil
}

func (e Expectation) validate() error {
	switch {
	case e.ID == "" || e.Source == "" || e.Unit == "":
		return fmt.Errorf("expectation %q: needs id, unit and source", e.ID)
	case e.Better != "higher" && e.Better != "lower":
		return fmt.Errorf("expectation %s: better must be higher or lower", e.ID)
	case e.Better == "higher" && !(e.Pass <= e.Warn && e.Warn <= e.Value):
		return fmt.Errorf("expectation %s: need pass <= warn <= value", e.ID)
	case e.Better == "lower" && !(e.Pass >= e.Warn && e.Warn >= e.Value):
		return fmt.Errorf("expectation %s: need pass >= warn >= value", e.ID)
	}
	return nil
}

// Query describes a measured result.
type Query struct {
	Platform   string
	Topology   string
	Measure    string
	Collective string
	// MaxSize is the largest message size in the result; an expectation fits
	// when the result has sizes within its range.
	Sizes    []int64
	Ranks    int
	Verb     string
	Devices  int
	Protocol string
}

// Find returns the expectations that fit q, most specific (largest minimum
// size) first. An empty result means "no expectation".
func (s Set) Find(q Query) []Expectation {
	var out []Expectation
	for _, e := range s.Expectations {
		if e.fits(q) {
			out = append(out, e)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Conditions.MinSize > out[j-1].Conditions.MinSize; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (e Expectation) fits(q Query) bool {
	c := e.Conditions
	if e.Platform != q.Platform || e.Measure != q.Measure || !topologyFits(e.Topology, q.Topology) {
		return false
	}
	if c.Collective != "" && c.Collective != q.Collective || c.Ranks != 0 && c.Ranks != q.Ranks {
		return false
	}
	if c.Verb != "" && c.Verb != q.Verb || c.Devices != 0 && c.Devices != q.Devices || c.Protocol != "" && c.Protocol != q.Protocol {
		return false
	}
	if c.MinSize > 0 || c.MaxSize > 0 {
		return len(e.SizesIn(q.Sizes)) > 0
	}
	return true
}

// SizesIn returns the sizes that fall within the expectation's size range.
func (e Expectation) SizesIn(sizes []int64) []int64 {
	var in []int64
	for _, s := range sizes {
		if s >= e.Conditions.MinSize && (e.Conditions.MaxSize == 0 || s <= e.Conditions.MaxSize) {
			in = append(in, s)
		}
	}
	return in
}

func topologyFits(want, got string) bool {
	switch want {
	case "any":
		return true
	case "any-multi-node":
		return got != "single-node" && got != ""
	}
	return want == got
}

// Verdict judges a value against e: "ok", "warning" or "critical".
func (e Expectation) Verdict(v float64) string {
	worse := func(a, b float64) bool {
		if e.Better == "lower" {
			return a > b
		}
		return a < b
	}
	switch {
	case worse(v, e.Pass):
		return "critical"
	case worse(v, e.Warn):
		return "warning"
	}
	return "ok"
}

// Wire returns the wire limit of a platform for what it applies to ("network",
// "nvlink", "host-link", "pcie-gen5", "nic-200"...), trying the platform first,
// then "any".
func (s Set) Wire(platform, applies string) (Wire, bool) {
	for _, p := range []string{platform, "any"} {
		for _, w := range s.Wires {
			if w.Platform == p && w.Applies == applies {
				return w, true
			}
		}
	}
	return Wire{}, false
}

// NCCLMin is the newest nccl_min among a platform's expectations: the NCCL
// release its numbers need ("" when none says).
func (s Set) NCCLMin(platform string) string {
	least := ""
	for _, e := range s.Expectations {
		if v := e.Conditions.NCCLMin; e.Platform == platform && v != "" && (least == "" || !VersionAtLeast(least, v)) {
			least = v
		}
	}
	return least
}

// VersionAtLeast compares dotted versions such as "2.28.9+cuda13.0" and
// "2.28.3"; a build suffix after "+" is ignored.
func VersionAtLeast(have, want string) bool {
	have, _, _ = strings.Cut(have, "+")
	want, _, _ = strings.Cut(want, "+")
	return facts.CompareVersions(have, want) >= 0
}

// topologyNames are the layouts expectations are filed under, by their one name.
func topologyNames() []string {
	var out []string
	for _, k := range topology.Known {
		if k != topology.NoDataLinks && k != topology.Other {
			out = append(out, string(k))
		}
	}
	return out
}
