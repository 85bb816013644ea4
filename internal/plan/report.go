package plan

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Report is the plan as the report model carries it. modelArg is what the
// user named; launch the engines' command lines for the recommended layout.
func (p *Plan) Report(modelArg string, launch []Launch) report.Plan {
	w := p.Workload
	c := p.Cluster
	s := report.Plan{Model: p.Model.Name, ModelArg: modelArg, Weights: p.Format.Name, TotalParams: p.TotalParams, ActiveParams: p.ActiveParam,
		WeightsGB: p.WeightsGB, Platform: c.Platform, Nodes: c.Nodes, Concurrency: w.Concurrency, Layouts: []report.PlanRow{},
		Workload: fmt.Sprintf("%d in · %d out · %d concurrent · KV cache %s · gpu-memory-utilization %.2f",
			w.Input, w.Output, w.Concurrency, w.KVDType, w.GPUMemUtil)}
	number := func(name string, n Number, f string) report.PlanNumber {
		return report.PlanNumber{Name: name, Value: n.Value, Unit: n.Unit, Text: fmt.Sprintf(f, n.Value) + " " + n.Unit, Source: n.Source}
	}
	s.Numbers = []report.PlanNumber{
		number("memory per node", c.MemoryGB, "%.0f"),
		number("memory bandwidth", c.MemoryBandwidth, "%.0f"),
		number("16-bit GEMM", c.BF16TFLOPS, "%.1f"),
		number("all-reduce busbw", c.AllReduceBusBW, "%.2f"),
		{Name: "all-reduce latency", Value: c.AllReduceLatency.Value, Unit: c.AllReduceLatency.Unit,
			Text: fmt.Sprintf("%.2f us at %d B", c.AllReduceLatency.Value, c.LatencyBytes), Source: c.AllReduceLatency.Source},
	}
	for _, a := range p.Assumed {
		s.Assumed = append(s.Assumed, report.PlanNumber{Value: a.Value, Unit: a.Unit, Text: fmt.Sprintf("%g %s", a.Value, a.Unit), Source: a.Source})
	}
	if p.Recommended >= 0 && p.Recommended < len(p.Options) {
		s.Recommended = p.Options[p.Recommended].Layout()
	}
	for _, o := range p.Options {
		row := report.PlanRow{Layout: o.Layout(), Fits: o.Fits, WeightsGB: o.WeightsGB, Note: o.Note}
		if o.Fits {
			row.KVTokens, row.Sequences, row.TTFTms, row.TPOTms = o.KVTokens, o.Sequences, o.TTFTms, o.TPOTms
			row.TokensPerSec, row.ConcTokensPerS, row.Speedup, row.Bound = o.TokensPerSec, o.ConcTokensPerS, o.Speedup, o.Dominant
			row.MemoryMs, row.NetworkMs, row.ComputeMs = o.MemoryMs, o.NetworkMs, o.ComputeMs
		}
		s.Layouts = append(s.Layouts, row)
	}
	for _, l := range launch {
		s.Launch = append(s.Launch, report.PlanLaunch{Engine: l.Engine, Lines: l.Lines})
	}
	return s
}

// Layout names the option's parallel layout: "TP2", "PP3".
func (o Option) Layout() string {
	if o.PP > 1 {
		return fmt.Sprintf("PP%d", o.PP)
	}
	return fmt.Sprintf("TP%d", o.TP)
}
