package plan

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// fieldRow is one public DGX Spark measurement (testdata/field-measurements.yaml).
type fieldRow struct {
	ID          string  `yaml:"id"`
	Model       string  `yaml:"model"`
	Weights     string  `yaml:"weights"`
	Engine      string  `yaml:"engine"`
	Version     string  `yaml:"version"`
	Nodes       int     `yaml:"nodes"`
	TP          int     `yaml:"tp"`
	Input       int     `yaml:"input"`
	Output      int     `yaml:"output"`
	Concurrency int     `yaml:"concurrency"`
	KV          string  `yaml:"kv"`
	EP          bool    `yaml:"expert_parallel"`
	Metric      string  `yaml:"metric"`
	Measured    float64 `yaml:"measured"`
	Calibration bool    `yaml:"calibration"`
	KnownMiss   string  `yaml:"known_miss"`
	Source      string  `yaml:"source"`
}

func fieldRows(t *testing.T) []fieldRow {
	t.Helper()
	b, err := os.ReadFile("testdata/field-measurements.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Rows []fieldRow `yaml:"rows"`
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f.Rows
}

// predict plans one row on DGX Spark's platform numbers and reads its metric.
func predict(t *testing.T, r fieldRow) float64 {
	t.Helper()
	a, err := DefaultAssumptions()
	if err != nil {
		t.Fatal(err)
	}
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Format(r.Weights)
	if err != nil {
		t.Fatalf("%s: %v", r.ID, err)
	}
	c, err := PlatformCluster("dgx-spark", r.Nodes, a, set)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Estimate(load(t, r.Model), f, c, Workload{Input: r.Input, Output: r.Output, Concurrency: r.Concurrency,
		KVDType: r.KV, GPUMemUtil: 0.9, Engine: r.Engine, ExpertParallel: r.EP}, a)
	if err != nil {
		t.Fatalf("%s: %v", r.ID, err)
	}
	o := option(t, p, r.TP)
	switch r.Metric {
	case "decode_tokens_per_s":
		return o.TokensPerSec
	case "tokens_per_s_total":
		return o.ConcTokensPerS
	case "tpot_ms":
		return o.TPOTms
	case "ttft_ms":
		return o.TTFTms
	}
	t.Fatalf("%s: unknown metric %q", r.ID, r.Metric)
	return 0
}

// TestFieldMeasurements predicts every public DGX Spark measurement in the
// table from the platform's numbers, the model's config and the data file,
// and wants each within ±25 %. Calibration rows are the ones an engine factor
// was fitted on (the factor's source says which); a known miss stays in the
// table with its reason and must still miss, so a fix is noticed.
func TestFieldMeasurements(t *testing.T) {
	rows := fieldRows(t)
	if n := len(slices.DeleteFunc(slices.Clone(rows), func(r fieldRow) bool { return strings.HasPrefix(r.ID, "seed000") })); n < 12 {
		t.Errorf("%d field rows besides seed 000, want at least 12", n)
	}
	var errs, hits []float64
	for _, r := range rows {
		if r.Source == "" || r.Version == "" || r.Measured <= 0 {
			t.Errorf("%s: needs a source, an engine version and a measured value", r.ID)
			continue
		}
		got := predict(t, r)
		dev := got/r.Measured - 1
		t.Logf("%-38s %-10s predicted %9.2f  measured %9.2f  %+6.1f %%%s", r.ID, r.Metric, got, r.Measured, 100*dev, missNote(r))
		switch {
		case r.KnownMiss != "" && math.Abs(dev) <= 0.25:
			t.Errorf("%s is marked a known miss (%s) but is now within ±25 %% (%+.0f %%): drop the mark", r.ID, r.KnownMiss, 100*dev)
		case r.KnownMiss == "" && math.Abs(dev) > 0.25:
			t.Errorf("%s: predicted %.2f, measured %.2f (%+.0f %%, beyond ±25 %%)", r.ID, got, r.Measured, 100*dev)
		}
		if !r.Calibration {
			errs = append(errs, math.Abs(dev))
			if r.KnownMiss == "" {
				hits = append(hits, math.Abs(dev))
			}
		}
	}
	for _, e := range []struct {
		what string
		v    []float64
	}{{"all predicted rows", errs}, {"predicted rows but the known misses", hits}} {
		if len(e.v) > 0 {
			slices.Sort(e.v)
			t.Logf("%s: %d, median |error| %.1f %%, worst %.1f %%", e.what, len(e.v), 100*e.v[len(e.v)/2], 100*e.v[len(e.v)-1])
		}
	}
}

func missNote(r fieldRow) string {
	switch {
	case r.Calibration:
		return "  (calibration)"
	case r.KnownMiss != "":
		return "  (known miss)"
	}
	return ""
}

// TestFieldTable prints the README's table of predicted against measured
// (go test -run TestFieldTable -v ./internal/plan/).
func TestFieldTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| model, weights | engine | TP | in / out, users | metric | measured | predicted | error | source |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range fieldRows(t) {
		got := predict(t, r)
		name := strings.TrimSuffix(r.Model, ".json") + ", " + r.Weights
		errCell := fmt.Sprintf("%+.0f %%", 100*(got/r.Measured-1))
		switch {
		case r.Calibration:
			errCell += " (calibration)"
		case r.KnownMiss != "":
			errCell += " (known miss)"
		}
		src, _, _ := strings.Cut(r.Source, " ")
		if strings.HasPrefix(src, "http") {
			src = "[link](" + src + ")"
		} else {
			src = r.Source
		}
		fmt.Fprintf(&b, "| %s | %s %s | %d | %d / %d, %d | %s | %s | %s | %s | %s |\n", name, r.Engine, r.Version, r.TP, r.Input, r.Output,
			r.Concurrency, strings.ReplaceAll(r.Metric, "_", " "), trim(r.Measured), trim(got), errCell, src)
	}
	t.Log("\n" + b.String())
}

func trim(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
