package allpairs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
)

// ToolNCCL names the 2-rank NCCL test of a pair.
const ToolNCCL = "NCCL all_reduce, 2 ranks"

// PairResult is one pair's 2-rank NCCL test: the bus bandwidth of its
// largest message (GB/s, nccl-tests' busbw, which for two ranks is the
// algorithm bandwidth), or why there is none.
type PairResult struct {
	Pair
	BusGBs      float64
	Bytes       int64  // the message size BusGBs is of
	NCCLVersion string // as rank 0 loaded it
	Err         string
}

// CollectiveMeasurer runs a 2-rank NCCL test on each pair of a round at
// once, one result per pair in the same order. No node is in two pairs.
type CollectiveMeasurer interface {
	Collectives(ctx context.Context, pairs []Pair) []PairResult
}

// Collectives is the NCCL part of a run.
type Collectives struct {
	Rounds    [][]Pair
	Results   []PairResult
	Judgement CollectiveJudgement
	Wall      time.Duration
}

// CollectiveRounds are the rounds of the schedule for n nodes kept to
// the pairs ok allows, empty rounds dropped.
func CollectiveRounds(s Schedule, n int, ok func(Pair) bool) [][]Pair {
	all := Circle(n)
	if s == Ring {
		all = RingPhases(n)
	}
	var out [][]Pair
	for _, round := range all {
		var keep []Pair
		for _, p := range round {
			if ok(p) {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			out = append(out, keep)
		}
	}
	return out
}

// RunCollectives runs the rounds and judges them. An interrupted run
// returns what it measured, judged, with ctx's error: the pairs the
// interrupt stopped are left out, not failed.
func RunCollectives(ctx context.Context, m CollectiveMeasurer, names []string, rounds [][]Pair, r Rules) (*Collectives, error) {
	c := &Collectives{Rounds: rounds}
	start := time.Now()
	for _, round := range rounds {
		if ctx.Err() != nil {
			break
		}
		got := m.Collectives(ctx, round)
		for i, p := range round {
			res := PairResult{Pair: p, Err: "no result"}
			if i < len(got) {
				res = got[i]
				res.Pair = p
			}
			if res.Err != "" && ctx.Err() != nil {
				continue // stopped by the interrupt: not a failure of the pair
			}
			c.Results = append(c.Results, res)
		}
	}
	c.Wall = time.Since(start)
	c.Judgement = JudgeCollectives(names, c.Results, r)
	return c, ctx.Err()
}

// CollectiveJudgement is the verdict over the pairs' NCCL tests: each
// pair's bus bandwidth against the best pairs' (diagnose.LinkRef, the one
// rule of the directions too), each node's pass ratio, and the suspects: a
// node failing fewer than LowRatio of its pairs (with two or more), and a
// failing pair whose two ends pass elsewhere.
type CollectiveJudgement struct {
	Reference float64 // the best pairs' bus bandwidth (GB/s); 0: none credible
	Floor     float64
	// Unjudged says why there is no credible reference (no two pairs
	// agree on a rate): no pair passes then, and none is named.
	Unjudged string
	Pass     []bool // by result
	Suspects []Suspect
}

// JudgeCollectives judges the results.
func JudgeCollectives(names []string, results []PairResult, r Rules) CollectiveJudgement {
	var j CollectiveJudgement
	var ran []float64
	for _, res := range results {
		if res.Err == "" {
			ran = append(ran, res.BusGBs)
		}
	}
	ref := diagnose.MeasuredReference(ran)
	j.Reference, j.Floor, j.Unjudged = ref.Gbps, ref.Floor(), ref.Why
	pass, tests := make([]int, len(names)), make([]int, len(names))
	judged := make([]bool, len(results))
	for i, res := range results {
		v := ref.Judge(res.BusGBs, res.Err == "")
		ok := v == diagnose.LinkPass
		judged[i] = v != diagnose.LinkUnjudged
		j.Pass = append(j.Pass, ok)
		if !judged[i] {
			continue
		}
		for _, n := range []int{res.A, res.B} {
			if n >= 0 && n < len(names) {
				tests[n]++
				if ok {
					pass[n]++
				}
			}
		}
	}
	bad := make([]bool, len(names))
	for n := range names {
		if tests[n] >= 2 && ratio(pass[n], tests[n]) < r.LowRatio {
			bad[n] = true
			s := Suspect{Kind: SuspectNode, Node: n, Status: "suspect"}
			for i, res := range results {
				if judged[i] && !j.Pass[i] && (res.A == n || res.B == n) {
					s.Evidence = append(s.Evidence, j.describe(names, res))
				}
			}
			s.Evidence = append(s.Evidence, fmt.Sprintf("%s passed %d of its %d NCCL pairs", names[n], pass[n], tests[n]))
			j.Suspects = append(j.Suspects, s)
		}
	}
	for i, res := range results {
		if j.Pass[i] || !judged[i] || res.A >= len(names) || res.B >= len(names) || bad[res.A] || bad[res.B] {
			continue
		}
		j.Suspects = append(j.Suspects, Suspect{Kind: SuspectPair, Node: res.A, Peer: res.B, Status: "suspect",
			Evidence: []string{j.describe(names, res)}})
	}
	slices.SortStableFunc(j.Suspects, func(a, b Suspect) int { return a.Node - b.Node })
	return j
}

func (j CollectiveJudgement) describe(names []string, res PairResult) string {
	if res.Err != "" {
		return fmt.Sprintf("%s ↔ %s: no NCCL result: %s", names[res.A], names[res.B], res.Err)
	}
	return fmt.Sprintf("%s ↔ %s: %.1f GB/s busbw at %s, under %.1f GB/s (%.0f %% of the best pairs' %.1f GB/s)",
		names[res.A], names[res.B], res.BusGBs, bench.SizeString(res.Bytes), j.Floor, 100*diagnose.PassFraction, j.Reference)
}

// Report is the NCCL part as the report model holds it, skipped the pairs
// not tested, and a finding for each suspect: wrong results fail (the data
// arrived corrupted), a slow node or pair warns.
func (c *Collectives) Report(names []string, skipped []string) (*report.AllPairsNCCL, []report.Finding) {
	out := &report.AllPairsNCCL{Tool: ToolNCCL, Skipped: skipped, Pairs: []report.AllPairsNCCLPair{}, Suspects: []report.AllPairsSuspect{}}
	if c == nil {
		return out, nil
	}
	j := c.Judgement
	out.Rounds, out.WallSeconds, out.Reference, out.Floor = len(c.Rounds), c.Wall.Round(time.Millisecond).Seconds(), j.Reference, j.Floor
	var fs []report.Finding
	if j.Unjudged != "" && len(c.Results) > 0 {
		why := "no NCCL pair was judged: " + j.Unjudged + " (each pair is judged against the best pairs')"
		out.Skipped = append(out.Skipped, why)
		fs = append(fs, report.Finding{ID: "allpairs.nccl-no-reference", Severity: report.NotEvaluated, Subject: "NCCL",
			Title: "the pairs' NCCL tests are judged against a credible rate", Observed: j.Unjudged,
			Expected: "two or more pairs agreeing on the best bus bandwidth", Source: RulesSource,
			Why: "a pair's bus bandwidth is judged against what the best pairs reach: with fewer than two agreeing, a slow pair cannot be told from a normal one"})
	}
	for i, r := range c.Results {
		out.Pairs = append(out.Pairs, report.AllPairsNCCLPair{A: names[r.A], B: names[r.B], BusGBs: r.BusGBs, Bytes: r.Bytes,
			NCCLVersion: r.NCCLVersion, Pass: j.Pass[i], Error: r.Err})
	}
	for _, s := range j.Suspects {
		rs := report.AllPairsSuspect{Kind: s.Kind, Node: names[s.Node], Status: s.Status, Evidence: s.Evidence}
		f := report.Finding{ID: "allpairs.nccl-" + s.Kind, Severity: report.Warn, Host: names[s.Node], Subject: "NCCL",
			Observed: strings.Join(s.Evidence, "; "), Source: RulesSource,
			Expected: fmt.Sprintf("at least %.1f GB/s busbw (%.0f %% of the best pairs' %.1f GB/s)", j.Floor, 100*diagnose.PassFraction, j.Reference)}
		if s.Kind == SuspectNode {
			rs.Name = names[s.Node] + " in its NCCL pairs"
			f.Title = "the node's 2-rank NCCL tests reach the pairs' bus bandwidth"
			f.Why = "most NCCL tests with this node are slow or fail while the other pairs are not: its GPU, its NIC or the path NCCL takes from it (see its error)"
			f.Remedy = report.Manual(report.ActionInspect, "run the doctor on the node, and the NCCL test alone with NCCL_DEBUG=INFO: check which transport NCCL chose (NET/IB or NET/Socket) and the GPU's clocks")
		} else {
			rs.Peer, rs.Name = names[s.Peer], "the NCCL pair "+names[s.Node]+" ↔ "+names[s.Peer]
			f.Host, f.Subject = "", rs.Name
			f.Title = "every pair's 2-rank NCCL test reaches the pairs' bus bandwidth"
			f.Why = "this pair alone is slow or fails while both its nodes do well with others: the path between them, or what NCCL chose for it"
			f.Remedy = report.Manual(report.ActionInspect, "run the NCCL test of this pair alone with NCCL_DEBUG=INFO and compare its transport with a good pair's; check the path between the two ports")
		}
		if corrupt(c.Results, s) {
			f.Severity = report.Fail
			f.Why = "the all_reduce's results were wrong: data was corrupted between the GPUs (a NIC, a cable, GPU memory)"
		}
		out.Suspects = append(out.Suspects, rs)
		fs = append(fs, f)
	}
	return out, fs
}

// corrupt reports whether a result the suspect names had wrong results.
func corrupt(rs []PairResult, s Suspect) bool {
	for _, r := range rs {
		names := r.A == s.Node || r.B == s.Node
		if s.Kind == SuspectPair {
			names = r.A == s.Node && r.B == s.Peer
		}
		if names && strings.Contains(r.Err, "wrong results") {
			return true
		}
	}
	return false
}
