package triage

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"
)

// recorded is one node's sample made of a recording: the RAS answers in
// both forms, the GPUs and the processes the recording names.
func recorded(t *testing.T, host, name string, pids ...int) Sample {
	t.Helper()
	s := Sample{Host: host, Addrs: []string{"127.0.0.1/8"}}
	for _, p := range pids {
		s.Procs = append(s.Procs, Process{PID: p, Libs: []string{"/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"}})
	}
	ex := recording(t, name+".txt")
	for i, e := range ex {
		if e.answer == nil || e.cmd != "VERBOSE STATUS" {
			continue
		}
		f := "text"
		if i > 0 && ex[i-1].cmd == "SET FORMAT json" {
			f = "json"
		}
		s.RAS = append(s.RAS, RASAnswer{Client: "protocol", Format: f, Raw: e.answer})
	}
	gs, err := ParseGPUs(fixture.Blocks(fixture.Read(t, "testdata/ras/"+name+".smi.txt"))[0])
	if err != nil {
		t.Fatal(err)
	}
	s.GPUs = gs
	return s
}

func ids(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func TestDiagnoseHealthyJobProgresses(t *testing.T) {
	d := Diagnose([]Sample{recorded(t, "gpu1", "healthy-1", 495, 496, 497)}, []Sample{recorded(t, "gpu1", "healthy-2", 495, 496, 497)}, 15*time.Second)
	if d.Verdict != VerdictProgressing || d.FirstRank != -1 || len(d.Findings) != 0 || d.Version != "2.28.9" {
		t.Fatalf("%+v", d)
	}
	if d.Evidence[0] != "operation counts moved in 15s (rank 0: 60→460, rank 1: 60→460, rank 2: 60→460)" {
		t.Fatalf("%q", d.Evidence)
	}
	if len(d.Ranks) != 3 || d.Ranks[2].Node != "gpu1" || d.Ranks[2].PID != 497 {
		t.Fatalf("%+v", d.Ranks)
	}
}

func TestDiagnoseStoppedRankIsMissing(t *testing.T) {
	d := Diagnose([]Sample{recorded(t, "gpu1", "healthy-2", 495, 496, 497)}, []Sample{recorded(t, "gpu1", "stopped-2", 495, 496, 497)}, 60*time.Second)
	if d.Verdict != VerdictRankMissing || d.FirstRank != 2 || d.FirstNode != "gpu1" {
		t.Fatalf("%+v", d)
	}
	if !reflect.DeepEqual(ids(d.Findings), []string{"triage.rank-missing"}) {
		t.Fatalf("%q", ids(d.Findings))
	}
	if d.Evidence[0] != "rank 2 (pid 497 on gpu1) is missing from RAS's answer" {
		t.Fatalf("%q", d.Evidence)
	}
}

func TestDiagnoseKilledRankFromTextAlone(t *testing.T) {
	// a node whose client gives text only (ncclras before 2.28.7)
	k1, k2 := recorded(t, "gpu1", "killed-1", 495, 496), recorded(t, "gpu1", "killed-2", 495, 496)
	k1.RAS, k2.RAS = k1.RAS[:1], k2.RAS[:1]
	if k1.RAS[0].Format != "text" {
		t.Fatal("the first answer of the recording is the text one")
	}
	d := Diagnose([]Sample{k1}, []Sample{k2}, 15*time.Second)
	if d.Verdict != VerdictRankMissing || d.FirstRank != 2 {
		t.Fatalf("%+v", d)
	}
	// rank 0 reports the remote error the dead rank caused
	if !reflect.DeepEqual(ids(d.Findings), []string{"triage.rank-error", "triage.rank-missing"}) ||
		!strings.Contains(d.Findings[0].Observed, "rank 0 (pid 495) reports Remote process error") {
		t.Fatalf("%+v", d.Findings)
	}
}

func TestDiagnoseHungHostThreadIsOutOfSync(t *testing.T) {
	d := Diagnose([]Sample{recorded(t, "gpu1", "hung-1", 661, 662, 663)}, []Sample{recorded(t, "gpu1", "hung-2", 661, 662, 663)}, 15*time.Second)
	if d.Verdict != VerdictOutOfSync || d.FirstRank != 2 || d.FirstNode != "gpu1" {
		t.Fatalf("%+v", d)
	}
	const want = "counts frozen for 15s but different: rank 2 (pid 663 on gpu1) launched AllReduce operations up to 100, others up to 120 (communicator 0x996598793777fcd4)"
	if d.Evidence[0] != want {
		t.Fatalf("%q", d.Evidence)
	}
	// the same from the text answers alone
	h1, h2 := recorded(t, "gpu1", "hung-1", 661, 662, 663), recorded(t, "gpu1", "hung-2", 661, 662, 663)
	h1.RAS, h2.RAS = h1.RAS[:1], h2.RAS[:1]
	d = Diagnose([]Sample{h1}, []Sample{h2}, 15*time.Second)
	if d.Verdict != VerdictOutOfSync || d.FirstRank != 2 || d.FirstNode != "gpu1" ||
		d.Evidence[0] != want {
		t.Fatalf("%+v", d)
	}
}

func TestDiagnoseOneSampleCannotTell(t *testing.T) {
	d := Diagnose([]Sample{recorded(t, "gpu1", "hung-2", 661, 662, 663)}, nil, 0)
	if d.Verdict != VerdictUnknown || d.Evidence[0] != "one sample only: frozen and slow cannot be told apart" {
		t.Fatalf("%+v", d)
	}
}

// The frozen-and-equal and spinning rules have no recording of their own:
// these samples are values in the recordings' shape.
func TestDiagnoseFrozenEqualIsStuckAndSpinning(t *testing.T) {
	st := func(ops int64) []RASAnswer {
		js := `{"nccl_version": "2.28.9", "communicators": [{"hash": "0x1", "size": 2, "ranks": [` +
			`{"rank": 0, "host": "10.0.0.1", "pid": 10, "collective_counts": {"AllReduce": ` + itoa(ops) + `}},` +
			`{"rank": 1, "host": "10.0.0.2", "pid": 20, "collective_counts": {"AllReduce": ` + itoa(ops) + `}}], "missing_ranks": []}]}`
		return []RASAnswer{{Format: "json", Raw: []byte(js)}}
	}
	spark := func(host, addr string, pid int, ras []RASAnswer) Sample {
		return Sample{Host: host, Addrs: []string{addr + "/24"}, Procs: []Process{{PID: pid}}, RAS: ras,
			GPUs: []GPU{{Index: 0, Name: "NVIDIA GB10", Util: 96, Power: 19.5, PowerLimit: -1}}}
	}
	first := []Sample{spark("s1", "10.0.0.1", 10, st(1100000)), spark("s2", "10.0.0.2", 20, nil)}
	second := []Sample{spark("s1", "10.0.0.1", 10, st(1100000)), spark("s2", "10.0.0.2", 20, nil)}
	d := Diagnose(first, second, 30*time.Second)
	if d.Verdict != VerdictStuck || d.FirstRank != -1 {
		t.Fatalf("%+v", d)
	}
	if !reflect.DeepEqual(ids(d.Findings), []string{"triage.stuck", "triage.spinning", "triage.spinning"}) {
		t.Fatalf("%q", ids(d.Findings))
	}
	if d.Findings[1].Observed != "96 % utilisation at 19.5 W (idle power: under 30 W)" || d.Ranks[1].Node != "s2" {
		t.Fatalf("%+v %+v", d.Findings[1], d.Ranks)
	}
	// the H100 recording of a hung host thread: 100 % at 121 W; with the
	// H100 SXM's 700 W limit that is a spinning kernel, at 600 W drawn not
	h := recorded(t, "gpu1", "hung-2", 661, 662, 663)
	h.GPUs[0].PowerLimit = 700
	var dd Diagnosis
	if !dd.spinning([]Sample{h}) {
		t.Fatal("121 W of 700 W at 100 % is spinning")
	}
	h.GPUs[0].Power = 600
	if dd.spinning([]Sample{h}) {
		t.Fatal("600 W is work")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
