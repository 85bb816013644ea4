package render

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/sparkrig/sparkrig/internal/results"
)

// A bench step names its rails before each subject; the rail bars still
// find their expectation.
func TestPerftestRailsExpectation(t *testing.T) {
	a := analysedSamples(t)[3]
	for _, prefix := range []string{"", "rocep1s0f0+roceP2p1s0f0: "} {
		for i := range a.Items {
			a.Items[i].Subject = prefix + a.Items[i].Subject
		}
		rails := perftestRails(&a, "run")
		if len(rails) != 2 || rails[0].Rail != "rocep1s0f0" || rails[0].ExpectedGbps != 96 || rails[1].ExpectedGbps != 96 {
			t.Errorf("prefix %q: %+v", prefix, rails)
		}
	}
}

// TestRefLabelsDoNotOverlap: the expected and wire-limit labels of a busbw
// plot stay a label's height apart when the two lines are close (an
// expectation of 24 GB/s under a 25 GB/s wire), and both sit above their
// lines when they are far apart.
func TestRefLabelsDoNotOverlap(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	table := &results.NCCLTable{Rows: []results.NCCLRow{
		{SizeBytes: 1 << 20, OOP: results.Timing{BusBWGBs: v(5)}},
		{SizeBytes: 1 << 30, OOP: results.Timing{BusBWGBs: v(21.9)}},
	}}
	labelY := regexp.MustCompile(`<text class="reflabel (\w+)" x="[0-9.]+" y="([0-9.]+)"`)
	lineY := regexp.MustCompile(`<line class="(expected|wire)" x1="[0-9.]+" y1="([0-9.]+)"`)
	for _, tt := range []struct {
		exp, wire float64
		below     string // the label drawn under its line, "" for none
	}{
		{exp: 24, wire: 25, below: "expected"},
		{exp: 25, wire: 24.5, below: "wire"},
		{exp: 12, wire: 25},
	} {
		svg, _ := busbwSVG([]ncclRun{{Run: "a", Table: table, ExpectedGBs: tt.exp, WireGBs: tt.wire}})
		labels, lines := map[string]float64{}, map[string]float64{}
		for _, m := range labelY.FindAllStringSubmatch(string(svg), -1) {
			labels[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		for _, m := range lineY.FindAllStringSubmatch(string(svg), -1) {
			lines[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		if len(labels) != 2 || len(lines) != 2 {
			t.Fatalf("exp %g wire %g: labels %v lines %v", tt.exp, tt.wire, labels, lines)
		}
		if d := math.Abs(labels["expected"] - labels["wire"]); d < refLabelGap {
			t.Errorf("exp %g wire %g: labels %.1f px apart, want at least %g", tt.exp, tt.wire, d, refLabelGap)
		}
		for _, k := range []string{"expected", "wire"} {
			if under := labels[k] > lines[k]; under != (k == tt.below) {
				t.Errorf("exp %g wire %g: %s label at y %.1f, its line at %.1f", tt.exp, tt.wire, k, labels[k], lines[k])
			}
		}
	}
}
