package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/report"
)

func TestGate(t *testing.T) {
	// A healthy GB10 under load: about 2400 MHz sustained (the throttle
	// checker's "expected ~2400 MHz"), rated 3003 MHz, tens of watts.
	ok := StateSample{Host: "spark1", SMClockMHz: 2405, MaxSMClockMHz: 3003, PowerW: 38, UtilPct: 96, ActiveMTU: map[string]int{"rocep1s0f1": 4096}}
	with := func(f func(*StateSample)) StateSample { s := ok; f(&s); return s }
	tests := []struct {
		name    string
		samples []StateSample
		want    []string
	}{
		{"healthy", []StateSample{ok, ok}, nil},
		{"low-clock state (890 MHz)", []StateSample{ok, with(func(s *StateSample) { s.SMClockMHz = 890 })},
			[]string{"spark1 GPU 0 at 890 MHz under 96% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)"}},
		{"695 MHz at half load", []StateSample{with(func(s *StateSample) { s.SMClockMHz, s.UtilPct = 695, 55 })},
			[]string{"spark1 GPU 0 at 695 MHz under 55% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)"}},
		{"idle at a low clock is no finding", []StateSample{with(func(s *StateSample) { s.SMClockMHz, s.UtilPct, s.PowerW = 208, 0, 4 })}, nil},
		{"capped at 2200 MHz", []StateSample{with(func(s *StateSample) { s.SMClockMHz = 2200 }), with(func(s *StateSample) { s.SMClockMHz = 2100 })},
			[]string{"spark1 GPU 0 held at 2200 MHz or less under full load (rated 3003 MHz): a clock cap (nvidia-smi -rgc resets a locked clock)"}},
		{"one sample above the cap: not capped", []StateSample{with(func(s *StateSample) { s.SMClockMHz = 2200 }), ok}, nil},
		{"low-power state under load (14 W)", []StateSample{with(func(s *StateSample) { s.PowerW = 14 })},
			[]string{"spark1 GPU 0 drew 14 W at 96% utilisation: a low-power state or a spinning kernel, not work"}},
		{"power unknown ([N/A])", []StateSample{with(func(s *StateSample) { s.PowerW = -1 })}, nil},
		{"active_mtu 1024", []StateSample{with(func(s *StateSample) { s.ActiveMTU = map[string]int{"rocep1s0f1": 1024} })},
			[]string{"spark1 rocep1s0f1 at active_mtu 1024 (RoCE runs at 4096 with a port MTU of 4200 or more)"}},
		{"HW slowdown and SW power cap", []StateSample{with(func(s *StateSample) { s.Reasons = 0x8 | 0x4 })},
			[]string{"spark1 GPU 0: HW slowdown active"}},
		{"SW power cap alone is normal under load", []StateSample{with(func(s *StateSample) { s.Reasons = 0x4 })}, nil},
		// Recorded on an NVIDIA H100 80GB running a bf16 matmul loop: held
		// at 1110 of 1980 MHz by its power cap at 664 W. Not a bad state.
		{"H100 under its power cap", ParseState("h100", "gpu,0, 1110, 1980, 663.76, 100, 0x0000000000000004\n"), nil},
		{"rating unknown: the absolute floor", []StateSample{with(func(s *StateSample) { s.SMClockMHz, s.MaxSMClockMHz = 890, -1 })},
			[]string{"spark1 GPU 0 at 890 MHz under 96% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Gate(tt.samples)
			if d := cmp.Diff(tt.want, v.Reasons); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if v.Valid != (len(tt.want) == 0) || !v.Sampled {
				t.Errorf("valid %v sampled %v", v.Valid, v.Sampled)
			}
		})
	}
	if v := Gate(nil); !v.Valid || v.Sampled {
		t.Errorf("no samples: %+v", v)
	}
}

// An invalid result is never judged: its verdicts become unknown, the
// expectation and causes go, and the reason stays.
func TestApplyValidity(t *testing.T) {
	ratio := 0.5
	a := report.AnalysisResult{Status: report.VerdictCritical, Items: []report.AnalysisItem{{Subject: "all_gather", Value: 10.5,
		Expectation: &report.ExpectationRef{ID: "spark-2n1c-all-gather-large", Value: 21.99}, Ratio: &ratio, Verdict: report.VerdictCritical,
		Causes: []report.Cause{{ID: "one-twin"}}}}}
	ApplyValidity(&a, Gate([]StateSample{{Host: "spark2", SMClockMHz: 890, MaxSMClockMHz: 3003, PowerW: 14, UtilPct: 96}}))
	it := a.Items[0]
	if a.Status != report.VerdictUnknown || it.Verdict != report.VerdictUnknown || it.Expectation != nil || it.Ratio != nil || it.Causes != nil {
		t.Fatalf("%+v", a)
	}
	const want = "measured in a bad state: spark2 GPU 0 at 890 MHz under 96% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute); spark2 GPU 0 drew 14 W at 96% utilisation: a low-power state or a spinning kernel, not work"
	if it.NoExpectation != want || len(a.Notes) != 1 || a.Notes[0] != want {
		t.Errorf("%q\n%q", it.NoExpectation, a.Notes)
	}
	b := report.AnalysisResult{Status: report.VerdictOK}
	ApplyValidity(&b, Gate(nil))
	if b.Status != report.VerdictOK || len(b.Notes) != 1 {
		t.Errorf("unsampled: %+v", b)
	}
}

// nvidia-smi --query-gpu ... --format=csv,noheader,nounits prints one
// comma-separated line per GPU and [N/A] for what a GPU lacks. Stand-in
// lines in that format; the mtu lines are stateScript's awk output.
func TestParseState(t *testing.T) {
	// Recorded on an idle NVIDIA H100 80GB with stateScript's query.
	if d := cmp.Diff([]StateSample{{Host: "h100", SMClockMHz: 345, MaxSMClockMHz: 1980, PowerW: 75.83, Reasons: 1}},
		ParseState("h100", "gpu,0, 345, 1980, 75.83, 0, 0x0000000000000001\n")); d != "" {
		t.Errorf("H100 idle (-want +got):\n%s", d)
	}
	out := "gpu,0, 2405, 3003, 38.52, 96, 0x0000000000000004\n" +
		"gpu,1, [N/A], [N/A], [N/A], [N/A], [N/A]\n" +
		"mtu,rocep1s0f1,4096\nmtu,roceP2p1s0f1,1024\nmtu,rocep1s0f0,oops\n"
	got := ParseState("spark1", out)
	want := []StateSample{
		{Host: "spark1", GPU: 0, SMClockMHz: 2405, MaxSMClockMHz: 3003, PowerW: 38.52, UtilPct: 96, Reasons: 0x4,
			ActiveMTU: map[string]int{"rocep1s0f1": 4096, "roceP2p1s0f1": 1024}},
		{Host: "spark1", GPU: 1, SMClockMHz: -1, MaxSMClockMHz: -1, PowerW: -1, UtilPct: -1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := ParseState("h", "mtu,mlx5_0,2048\n"); len(got) != 1 || got[0].GPU != -1 || got[0].ActiveMTU["mlx5_0"] != 2048 {
		t.Errorf("RDMA only: %+v", got)
	}
	if got := ParseState("h", "garbage\n\n"); len(got) != 0 {
		t.Errorf("garbage: %+v", got)
	}
}

func FuzzParseState(f *testing.F) {
	f.Add("gpu,0, 2405, 3003, 38.52, 96, 0x0000000000000004\nmtu,rocep1s0f1,4096\n")
	f.Fuzz(func(t *testing.T, s string) {
		Gate(ParseState("h", s))
	})
}
