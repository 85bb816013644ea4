package bench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/bench/probe"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// Parsed is what the parsers read from a step's outputs.
type Parsed struct {
	Perftest []results.PerftestRun  `json:"perftest,omitempty"`
	Iperf3   []results.Iperf3Result `json:"iperf3,omitempty"`
	Probe    []probe.Result         `json:"probe,omitempty"`
	NCCL     *results.NCCLOutput    `json:"nccl,omitempty"`
}

// Context is what judging needs to pick expectations.
type Context struct {
	Platform string // expect platform, "" when unknown
	Topology string
	Ranks    int
}

// NewContext names the platform and topology of a run.
func NewContext(nodes []*facts.Node, p *Plan) Context {
	c := Context{Topology: p.Topology}
	if c.Topology == "" {
		c.Topology = topology(nodes, p.Rails)
	}
	for _, n := range nodes {
		c.Ranks += max(1, len(n.GPUs))
	}
	if len(nodes) > 0 {
		c.Platform = platform.Of(nodes[0])
	}
	return c
}

// topology names the cabling the way expect does: two nodes over one cable
// use one physical port's twins (at most two rails), over two cables more.
func topology(nodes []*facts.Node, rails []Rail) string {
	switch {
	case len(nodes) <= 1:
		return "single-node"
	case len(nodes) == 3 && len(rails) >= 6:
		return "three-node-ring"
	case len(nodes) > 2:
		return "switch"
	case len(rails) > 2:
		return "two-nodes-two-cables"
	}
	return "two-nodes-one-cable"
}

// Judge parses a step's outputs and judges every number it gives, as the
// analysis of one input in the report model.
func Judge(s StepResult, c Context, set expect.Set) (Parsed, report.AnalysisResult) {
	var p Parsed
	var errs []string
	clients := 0
	for _, cr := range s.Commands {
		if cr.Role == RoleServer || cr.Role == RolePeer {
			continue
		}
		clients++
		switch {
		case strings.HasPrefix(s.Tool, "ib_"):
			runs, err := results.ParsePerftest(strings.NewReader(cr.Stdout))
			if err != nil || len(runs) == 0 {
				errs = append(errs, fmt.Sprintf("%s on %s: no perftest result in the output", s.Tool, cr.Host))
			}
			p.Perftest = append(p.Perftest, runs...)
		case s.Tool == "iperf3":
			r, err := results.ParseIperf3([]byte(cr.Stdout))
			if err != nil {
				errs = append(errs, fmt.Sprintf("iperf3 on %s: %v", cr.Host, err))
				continue
			}
			p.Iperf3 = append(p.Iperf3, r)
		case s.Tool == "sparkrig-probe":
			r, err := probe.Parse([]byte(cr.Stdout))
			if err != nil {
				errs = append(errs, fmt.Sprintf("probe on %s: %v", cr.Host, err))
				continue
			}
			p.Probe = append(p.Probe, r)
		case s.Kind == KindNCCL:
			out, err := parseNCCL(cr)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s on %s: %v", s.Tool, cr.Host, err))
			}
			p.NCCL = &out
		}
	}
	if s.Status != StatusOK {
		a := report.AnalysisResult{File: s.ID, Format: format(s), Platform: c.Platform, Topology: c.Topology,
			Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}, Notes: errs, Status: report.VerdictUnknown, Error: s.Error}
		return p, a
	}
	a := analyze.Judge(s.ID, analyzeInput(s, p), analyze.Options{Platform: c.Platform, Topology: c.Topology, Expect: &set})
	railSubjects(&a, s)
	a.Notes = append(a.Notes, errs...)
	if len(errs) > 0 && len(a.Items) == 0 {
		a.Status, a.Error = report.VerdictUnknown, strings.Join(errs, "; ")
	}
	return p, a
}

// analyzeInput hands what the step's parsers read to the analysis every
// sparkrig command shares.
func analyzeInput(s StepResult, p Parsed) analyze.Parsed {
	in := analyze.Parsed{Format: format(s), NCCL: p.NCCL, Perftest: p.Perftest}
	if len(p.Iperf3) > 0 {
		in.Iperf3 = &p.Iperf3[0]
	}
	for _, r := range p.Probe {
		in.TCPProbe = append(in.TCPProbe, results.TCPProbeResult{Streams: r.Streams, DurationS: r.DurationS, Gbps: r.Gbps,
			RTTSamples: r.RTT.Samples, RTTMinUS: r.RTT.Min, RTTAvgUS: r.RTT.Avg, RTTP99US: r.RTT.P99})
	}
	return in
}

// railSubjects names the rails a step ran on in its items' subjects.
func railSubjects(a *report.AnalysisResult, s StepResult) {
	if len(s.Rails) == 0 {
		return
	}
	prefix := strings.Join(s.Rails, "+") + ": "
	for i := range a.Items {
		a.Items[i].Subject = prefix + a.Items[i].Subject
	}
}

func format(s StepResult) string {
	switch {
	case strings.HasPrefix(s.Tool, "ib_"):
		return "perftest"
	case s.Kind == KindNCCL:
		return "nccl-tests"
	}
	return s.Tool
}

// parseNCCL reads the text output (tables and NCCL INFO lines) and, when
// nccl-tests wrote -J JSON, takes the tables from it instead.
func parseNCCL(cr CmdResult) (results.NCCLOutput, error) {
	out, err := results.ParseNCCLTests(strings.NewReader(cr.Stdout + "\n" + cr.Stderr))
	for _, f := range sortedKeys(cr.Files) {
		if t, jerr := results.ParseNCCLTestsJSON([]byte(cr.Files[f])); jerr == nil && len(t.Rows) > 0 {
			out.Tables = []results.NCCLTable{t}
			continue
		}
		// sparkrig's own collectives write the tables themselves.
		var own []results.NCCLTable
		if json.Unmarshal([]byte(cr.Files[f]), &own) == nil && len(own) > 0 && len(own[0].Rows) > 0 {
			out.Tables = own
		}
	}
	if err == nil && len(out.Tables) == 0 {
		err = fmt.Errorf("no result table in the output")
	}
	return out, err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
