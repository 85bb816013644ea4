package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/shell"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Event is a progress report: a step starting or ending.
type Event struct {
	Index, Total int
	Step         Step
	Done         bool
	Result       *report.AnalysisResult // set when Done
	Status       string
}

// Session runs a plan and makes its record.
type Session struct {
	Exec     *Executor
	Nodes    []*facts.Node
	Plan     *Plan
	Set      expect.Set
	Args     []string
	Now      func() time.Time
	Progress func(Event)
	// Tool is the program's version, recorded in the document.
	ToolVersion string
	// Force runs NCCL steps even when a GPU process started since the plan.
	Force bool
}

// Run checks the tools, runs every step (skipping those whose tool is
// missing), judges them and returns the record. Every process it started is
// gone when it returns, also when ctx was cancelled.
func (s *Session) Run(ctx context.Context) *Record {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	rec := &Record{Report: report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: s.ToolVersion,
		Command: "bench", GeneratedAt: start.UTC(), Hosts: []report.Host{}, Analyses: []report.AnalysisResult{}}}
	rec.Bench = RunDetails{ID: RunID(start, s.Plan.Hosts), Args: s.Args, Started: start.UTC(), Plan: s.Plan, Steps: []StepRecord{}}
	for _, n := range s.Nodes {
		rec.Bench.Nodes = append(rec.Bench.Nodes, Summarise(n))
	}
	defer s.Exec.Cleanup(s.Plan.Hosts)
	prepErr := s.Exec.Prepare(ctx, s.Plan.Hosts)
	rec.Bench.Missing = MissingTools(ctx, s.Exec.T, s.Plan, s.Exec.skipTool)
	jc := NewContext(s.Nodes, s.Plan)
	for i, st := range s.Plan.Steps {
		if s.Progress != nil {
			s.Progress(Event{Index: i + 1, Total: len(s.Plan.Steps), Step: st})
		}
		var res StepResult
		switch why := blocked(st, prepErr, rec.Bench.Missing); {
		case ctx.Err() != nil:
			res = skipped(st, StatusInterrupted, "interrupted before it started")
		case why != "":
			res = skipped(st, StatusSkipped, why)
		default:
			res = s.runStep(ctx, st)
		}
		parsed, an := Judge(res, jc, s.Set)
		if gated(st) && res.Status == StatusOK {
			ApplyValidity(&an, Gate(res.State))
		}
		if len(res.Counters) > 0 {
			an.Data.RailTraffic = trafficShare(s.Plan, &res)
			if fl := shareFlags(st, an.Data.RailTraffic); len(fl) > 0 {
				an.Flags = append(an.Flags, fl...)
				if an.Status == report.VerdictOK || an.Status == report.VerdictNone {
					an.Status = report.VerdictWarning
				}
			}
		}
		rec.Bench.Steps = append(rec.Bench.Steps, StepRecord{StepResult: res, Parsed: parsed})
		rec.Analyses = append(rec.Analyses, an)
		if s.Progress != nil {
			s.Progress(Event{Index: i + 1, Total: len(s.Plan.Steps), Step: st, Done: true, Result: &an, Status: res.Status})
		}
	}
	addFieldCauses(rec, s.Nodes)
	rec.Bench.Finished = now().UTC()
	rec.Bench.Interrupted = ctx.Err() != nil
	rec.BenchRun = rec.Outline()
	rec.Cluster = rec.qualified()
	rec.Status = Status(rec)
	return rec
}

// runStep runs one step; an NCCL step first looks at the nodes again, as
// the plan's facts may be minutes old by the time it allocates.
func (s *Session) runStep(ctx context.Context, st Step) StepResult {
	if st.Kind != KindNCCL {
		return s.withCounters(ctx, st, func() StepResult { return s.withState(ctx, st, func() StepResult { return s.Exec.Run(ctx, st) }) })
	}
	st, note, why := Recheck(st, s.Nodes, ReadLive(ctx, s.Exec.T, s.Nodes), s.Plan.MemFraction, s.Force)
	if note != nil {
		s.Plan.note(*note)
	}
	if why != "" {
		return skipped(st, StatusSkipped, why)
	}
	return s.withCounters(ctx, st, func() StepResult { return s.withState(ctx, st, func() StepResult { return s.Exec.Run(ctx, st) }) })
}

func skipped(st Step, status, why string) StepResult {
	return StepResult{ID: st.ID, Kind: st.Kind, Tool: st.Tool, Rails: st.Rails, Collective: st.Collective,
		Status: status, Error: why, Commands: []CmdResult{}}
}

// blocked says why a step cannot run: its host could not be prepared, or
// one of its tools is missing.
func blocked(st Step, prep map[string]error, missing []report.MissingTool) string {
	for _, c := range st.Commands() {
		if err := prep[c.Host]; err != nil {
			return err.Error()
		}
	}
	for _, m := range missing {
		for _, c := range st.Commands() {
			if c.Host == m.Host && c.Argv[0] == m.Tool || st.Kind == KindNCCL && stepUses(st, m.Tool) {
				return fmt.Sprintf("%s not found on %s: %s", m.Tool, m.Host, m.Hint)
			}
		}
	}
	return ""
}

func stepUses(st Step, tool string) bool {
	for _, c := range st.Commands() {
		for _, a := range c.Argv {
			if a == tool {
				return true
			}
		}
	}
	return false
}

// Status is the run's overall verdict, the report's one verdict
// (report.Overall: the worst step, a step that could not run unknown, the
// qualify findings counted); unknown when the plan has no step at all.
func Status(r *Record) report.Verdict {
	if r.Bench.Plan == nil || len(r.Bench.Plan.Steps) == 0 {
		return report.VerdictUnknown
	}
	return r.Overall()
}

// MissingTools asks every host whether the programs its commands run exist.
// For nccl-tests run through mpirun, the binary must exist on every node.
func MissingTools(ctx context.Context, t runner.Runner, p *Plan, skip func(string) bool) []report.MissingTool {
	need := map[string]map[string]bool{}
	add := func(host, tool string) {
		if skip != nil && skip(tool) {
			return
		}
		if need[host] == nil {
			need[host] = map[string]bool{}
		}
		need[host][tool] = true
	}
	for _, st := range p.Steps {
		for _, c := range st.Commands() {
			add(c.Host, c.Argv[0])
			if st.Kind == KindNCCL && len(p.Hosts) > 1 {
				for _, h := range p.Hosts {
					add(h, ncclBinary(c.Argv))
				}
			}
		}
	}
	var out []report.MissingTool
	for _, h := range p.Hosts {
		tools := sortedSet(need[h])
		if len(tools) == 0 {
			continue
		}
		script := `for t in ` + strings.Join(quoteAll(tools), " ") + `; do command -v "$t" >/dev/null 2>&1 || echo "$t"; done`
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		got, err := run(cctx, t, h, script)
		cancel()
		if err != nil {
			for _, tool := range tools {
				out = append(out, report.MissingTool{Host: h, Tool: tool, Hint: "could not check: " + err.Error()})
			}
			continue
		}
		for _, line := range strings.Fields(got) {
			out = append(out, report.MissingTool{Host: h, Tool: line, Hint: HowToGet(baseName(line))})
		}
	}
	return out
}

// ncclBinary is the nccl-tests program in an mpirun command line.
func ncclBinary(argv []string) string {
	for _, a := range argv {
		if strings.HasSuffix(baseName(a), "_perf") {
			return a
		}
	}
	return argv[0]
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shell.QuoteIfNeeded(s)
	}
	return out
}
