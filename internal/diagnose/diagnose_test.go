package diagnose

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

func f(v float64) *float64 { return &v }

func ids(cs []report.Cause) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.ID+":"+c.Likelihood)
	}
	return strings.Join(s, " ")
}

// sparkTable is the DGX Spark all_gather 16 GiB row (NVIDIA/dgx-spark-playbooks
// issue #25) with its busbw scaled to what a cause produces.
func sparkTable(oop, ip float64) *results.NCCLTable {
	t := &results.NCCLTable{Collective: "all_gather", Ranks: 2, Nodes: 2, NCCLVersion: "2.28.3",
		Rows: []results.NCCLRow{{SizeBytes: 17179869184, OOP: results.Timing{BusBWGBs: f(oop)}, IP: results.Timing{BusBWGBs: f(ip)}}}}
	t.FinishPeak()
	return t
}

func TestSocketTenth(t *testing.T) {
	log := &results.NCCLLog{InfoLines: 40, Network: "Socket", Transports: map[string]int64{"NET/Socket/0": 4},
		NetNotes: []string{"NET/IB : No device found."}}
	in := Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.1, Verdict: report.VerdictCritical,
		Table: sparkTable(2.1, 2.2), Log: log, NCCLMin: "2.28.3"}
	got := Causes(in)
	if ids(got) != "net-socket:likely" {
		t.Fatalf("causes %s", ids(got))
	}
	if got[0].Evidence[0] != "the log says 'Using network Socket' and 4 channel connections via NET/Socket" || got[0].Evidence[1] != "and why: \"NET/IB : No device found.\" (no RDMA device visible to the job)" {
		t.Errorf("evidence %q", got[0].Evidence)
	}
}

func TestTenthWithoutLog(t *testing.T) {
	in := Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.138, Verdict: report.VerdictCritical, Table: sparkTable(3.04, 3.04)}
	got := Causes(in)
	if ids(got) != "net-socket:possible" || !strings.Contains(got[0].Evidence[0], "no NCCL INFO lines in the file to confirm") {
		t.Errorf("causes %s %q", ids(got), got[0].Evidence)
	}
}

func TestHalfWith100GLink(t *testing.T) {
	log := &results.NCCLLog{InfoLines: 40, Network: "IB", Transports: map[string]int64{"NET/IB/0": 2, "NET/IB/1": 2},
		IBDevices: []results.NCCLNetDevice{{Name: "rocep1s0f1", SpeedMbps: 100000}, {Name: "roceP2p1s0f1", SpeedMbps: 100000}}}
	in := Input{Platform: "dgx-spark", Topology: "switch", Measure: "nccl-busbw", Ratio: 0.5, Verdict: report.VerdictCritical,
		Table: sparkTable(10.9, 11), Log: log, NCCLMin: "2.28.3"}
	if got := ids(Causes(in)); got != "link-100g:likely net-socket:ruled-out one-twin-unused:ruled-out nccl-build:ruled-out" {
		t.Errorf("causes %s", got)
	}
}

func TestWrongResultsEvenWhenFast(t *testing.T) {
	tb := sparkTable(22, 22)
	tb.Rows[0].OOP.WrongErrs = new(int64)
	*tb.Rows[0].OOP.WrongErrs = 12
	tb.FinishPeak()
	in := Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 1.0, Verdict: report.VerdictOK, Table: tb}
	got := Causes(in)
	if ids(got) != "wrong-results:likely" || got[0].Evidence[0] != "#wrong reports 12 wrong elements" {
		t.Errorf("causes %s", ids(got))
	}
}

func TestP2PDisabledSingleNode(t *testing.T) {
	log := &results.NCCLLog{Env: map[string]string{"NCCL_P2P_DISABLE": "1"}}
	in := Input{Platform: "a100", Topology: "single-node", Measure: "nccl-busbw", Ratio: 0.02, Verdict: report.VerdictCritical, Log: log}
	if got := ids(Causes(in)); got != "p2p-disabled:likely" {
		t.Errorf("causes %s", got)
	}
}

func TestMTUFromPerftest(t *testing.T) {
	p := &results.PerftestRun{Kind: "bw", Verb: "write", Device: "rocep1s0f1", MTU: 1024}
	in := Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "rdma-bw", Ratio: 0.93, Verdict: report.VerdictWarning, Perftest: p}
	got := Causes(in)
	if ids(got) != "mtu-1500:likely" || len(got[0].Evidence) != 2 {
		t.Errorf("causes %s %q", ids(got), got[0].Evidence)
	}
}

func TestOldNCCLBuild(t *testing.T) {
	// the community report: a build older than 2.28.3 over NET/IB at ~1/7 of
	// the expected busbw (3.04 GB/s)
	tb := sparkTable(3.04, 3.04)
	tb.NCCLVersion = "2.25.1+cuda12.8"
	log := &results.NCCLLog{InfoLines: 40, Network: "IB", Transports: map[string]int64{"NET/IB/0": 2, "NET/IB/1": 2}}
	in := Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.138, Verdict: report.VerdictCritical,
		Table: tb, Log: log, NCCLMin: "2.28.3"}
	got := Causes(in)
	if ids(got) != "nccl-build:likely net-socket:ruled-out" {
		t.Fatalf("causes %s", ids(got))
	}
	if got[0].Evidence[0] != "NCCL 2.25.1+cuda12.8 is older than the required 2.28.3" {
		t.Errorf("evidence %q", got[0].Evidence)
	}
}

// causesEvalAll is Causes as it was before a result that met its
// expectation skipped the evaluation of the causes it does not keep:
// every cause evaluated, then filtered.
func causesEvalAll(in Input) []report.Cause {
	var out []scored
	for _, k := range catalogue {
		c := scored{Cause: report.Cause{ID: k.id, Title: k.title, Confirm: k.confirm, Fix: k.fix, Source: k.source}}
		k.eval(in, &c)
		if c.score <= 0 && len(c.Against) == 0 {
			continue
		}
		if in.Verdict == report.VerdictOK && k.id != "wrong-results" && k.id != "size-collapse" {
			continue
		}
		c.Likelihood = likelihood(c.score)
		out = append(out, c)
	}
	return ranked(out)
}

// Property: Causes gives what evaluating every cause and then keeping
// those a verdict keeps gives, for every verdict over inputs of every
// measure, ratio, platform, topology, log and table the tests above use
// and random ones: the evaluation it skips changes nothing.
func TestCausesSkipAsEvalAll(t *testing.T) {
	wrong := sparkTable(22, 22)
	wrong.Rows[0].OOP.WrongErrs = new(int64)
	*wrong.Rows[0].OOP.WrongErrs = 12
	wrong.FinishPeak()
	old := sparkTable(3.04, 3.04)
	old.NCCLVersion = "2.25.1+cuda12.8"
	collapse := &results.NCCLTable{Collective: "all_reduce", Ranks: 2, Nodes: 2, Rows: []results.NCCLRow{
		{SizeBytes: 1 << 20, OOP: results.Timing{BusBWGBs: f(10)}, IP: results.Timing{BusBWGBs: f(10)}},
		{SizeBytes: 2 << 20, OOP: results.Timing{BusBWGBs: f(2)}, IP: results.Timing{BusBWGBs: f(2)}},
		{SizeBytes: 4 << 20, OOP: results.Timing{BusBWGBs: f(11)}, IP: results.Timing{BusBWGBs: f(11)}}}}
	collapse.FinishPeak()
	tables := []*results.NCCLTable{nil, sparkTable(22, 22), sparkTable(2.1, 2.2), sparkTable(10.9, 11), wrong, old, collapse}
	logs := []*results.NCCLLog{nil,
		{InfoLines: 40, Network: "Socket", Transports: map[string]int64{"NET/Socket/0": 4}, NetNotes: []string{"NET/IB : No device found."}},
		{InfoLines: 40, Network: "IB", Transports: map[string]int64{"NET/IB/0": 2, "NET/IB/1": 2},
			IBDevices: []results.NCCLNetDevice{{Name: "rocep1s0f1", SpeedMbps: 100000}, {Name: "roceP2p1s0f1", SpeedMbps: 100000}}},
		{InfoLines: 40, Network: "IB", Transports: map[string]int64{"NET/IB/0": 2}, IBDevices: []results.NCCLNetDevice{{Name: "rocep1s0f1"}, {Name: "roceP2p1s0f1"}}},
		{Env: map[string]string{"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}, P2PRefused: 3, NNodes: 1},
		{InfoLines: 12, Version: "2.21.5", Hosts: []string{"a"}, Transports: map[string]int64{"P2P/IPC": 4}}}
	perftests := []*results.PerftestRun{nil, {Kind: "bw", Verb: "write", Device: "rocep1s0f1", MTU: 1024}}
	measures := []string{"nccl-busbw", "rdma-bw", "rdma-lat", "tcp-bw", ""}
	verdicts := []report.Verdict{report.VerdictOK, report.VerdictWarning, report.VerdictCritical, report.VerdictUnknown, ""}
	rng := rand.New(rand.NewPCG(36, 6))
	n := 0
	for range 3000 {
		in := Input{Platform: []string{"dgx-spark", "a100", ""}[rng.IntN(3)],
			Topology: []string{"two-nodes-one-cable", "switch", "single-node", ""}[rng.IntN(4)],
			Measure:  measures[rng.IntN(len(measures))], Ratio: []float64{0, 0.02, 0.1, 0.138, 0.5, 0.93, 1, 1.2}[rng.IntN(8)],
			Table: tables[rng.IntN(len(tables))], Log: logs[rng.IntN(len(logs))], Perftest: perftests[rng.IntN(len(perftests))],
			NCCLMin: []string{"", "2.28.3"}[rng.IntN(2)]}
		for _, v := range verdicts {
			in.Verdict = v
			got, want := Causes(in), causesEvalAll(in)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v: causes %s, evaluating every one %s", in, ids(got), ids(want))
			}
			if len(want) > 0 {
				n++
			}
		}
	}
	if n < 3000 {
		t.Fatalf("only %d inputs with a cause", n)
	}
}
