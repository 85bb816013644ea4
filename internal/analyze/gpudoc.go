package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// gpuAnalysis reads a `bench gpu memory` or `bench gpu info` document (or
// its bare output of earlier versions): each copy's bandwidth as a result,
// with the rated peak where the document names one, and the stack in one
// line. Nothing here has an expectation to judge it by.
func gpuAnalysis(name string, g *report.GPU) report.AnalysisResult {
	a := report.AnalysisResult{File: name, Format: FormatSparkrigReport, Status: report.VerdictNone,
		Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}}
	dev := func(i int) string {
		if i < 0 {
			return "host"
		}
		return fmt.Sprintf("gpu%d", i)
	}
	for _, c := range g.Copies {
		it := report.AnalysisItem{Subject: fmt.Sprintf("%s %s→%s", c.Name, dev(c.Src), dev(c.Dst)), Metric: "copy bandwidth",
			Value: c.GBs, Unit: "GB/s", AtSize: c.Bytes, Verdict: report.VerdictNone,
			NoExpectation: "sparkrig holds no expectation for copy bandwidth"}
		if c.Method != "" {
			it.Summary = c.Method
		}
		if p := c.Peak; p != nil {
			it.Notes = append(it.Notes, fmt.Sprintf("rated %s: %g %s (%s)", p.Name, p.Value, p.Unit, p.Source))
		}
		a.Items = append(a.Items, it)
	}
	if len(g.Copies) > 0 {
		a.Measured = fmt.Sprintf("bench gpu memory: %d copies", len(g.Copies))
	}
	if in := g.Info; in != nil {
		var parts []string
		for _, kv := range [][2]string{{"driver", in.Driver}, {"CUDA runtime", in.Runtime}, {"NCCL", in.NCCL}, {"cuBLAS", in.CUBLAS}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+" "+kv[1])
			}
		}
		names := map[string]int{}
		var order []string
		for _, d := range in.Devices {
			if names[d.Name] == 0 {
				order = append(order, d.Name)
			}
			names[d.Name]++
		}
		for _, n := range order {
			parts = append(parts, fmt.Sprintf("%d× %s", names[n], n))
		}
		a.Measured = "bench gpu info: " + strings.Join(parts, ", ")
		a.Notes = append(a.Notes, "a stack inventory: nothing in it is measured, so nothing is judged (sparkrig doctor judges the driver and NCCL versions of a node)")
	}
	return a
}
