package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLive(t *testing.T) {
	kb, four := uint64(115343360)<<10, 4
	for _, c := range []struct {
		out  string
		want Live
	}{
		{"115343360\n4\n", Live{AvailableBytes: &kb, GPUProcesses: &four}},
		{"115343360\n-\n", Live{AvailableBytes: &kb}},
		{"\n-\n", Live{}},
		{"\n4\n", Live{GPUProcesses: &four}},
		{"", Live{}},
		{"x\n-3\n", Live{}},
	} {
		if d := cmp.Diff(c.want, ParseLive(c.out)); d != "" {
			t.Errorf("%q (-want +got):\n%s", c.out, d)
		}
	}
}

func FuzzParseLive(f *testing.F) {
	f.Add("115343360\n4\n")
	f.Add("115343360\n-\n")
	f.Fuzz(func(t *testing.T, s string) {
		l := ParseLive(s)
		if l.GPUProcesses != nil && *l.GPUProcesses < 0 {
			t.Errorf("negative process count from %q", s)
		}
	})
}

// TestLiveScriptHere runs the live check on this machine: MemAvailable is
// read, and without nvidia-smi the GPU processes are unknown, not zero.
func TestLiveScriptHere(t *testing.T) {
	out, err := run(context.Background(), runner.Local{}, "localhost", liveScript)
	if err != nil {
		t.Fatal(err)
	}
	l := ParseLive(out)
	if l.AvailableBytes == nil || *l.AvailableBytes == 0 {
		t.Errorf("no MemAvailable in %q", out)
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil && l.GPUProcesses != nil {
		t.Errorf("no nvidia-smi here, yet %d GPU processes from %q", *l.GPUProcesses, out)
	}
}

// TestRecheckBeforeNCCL: free memory that fell since the facts lowers -e
// when the step starts; a GPU process that started since refuses the step
// unless forced.
func TestRecheckBeforeNCCL(t *testing.T) {
	bin := standins(t, nil, "mpirun", "all_gather_perf")
	o := Options{Kinds: []string{KindNCCL}, Collectives: []string{"all_gather"},
		Tools: Tools{MPIRun: bin + "/mpirun", NCCLTests: bin}, MinBytes: 32 << 20, MaxBytes: 1 << 30}
	four, one := uint64(4<<30), 1

	s := session(t, healthyPair(), o)
	s.Exec.T = standinHosts{nodes: s.Nodes, live: map[string]Live{"spark-2": {AvailableBytes: &four}}}
	rec := s.Run(context.Background())
	st := rec.Bench.Steps[0]
	// 50 % of 4 GiB on one rank is 2 GiB; all_gather on 2 ranks takes 2.5× its size.
	if argv := strings.Join(st.Commands[0].Argv, " "); st.Status != StatusOK || !strings.Contains(argv, "all_gather_perf -g 1 -b 32M -e 512M -f 2") {
		t.Errorf("%s %s: %s", st.Status, st.Error, argv)
	}
	want := Note{ID: "bench.size-capped", Host: "spark-2",
		Detail: "all_gather lowered to -e 512M (planned 1G): free memory fell to MemAvailable 4.0 GiB on spark-2 since the facts were captured"}
	if d := cmp.Diff([]Note{want}, rec.Bench.Plan.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}

	for _, force := range []bool{false, true} {
		s := session(t, healthyPair(), o)
		s.Force = force
		s.Exec.T = standinHosts{nodes: s.Nodes, live: map[string]Live{"spark-1": {GPUProcesses: &one}}}
		st := s.Run(context.Background()).Bench.Steps[0]
		wantStatus, wantErr := StatusSkipped, "spark-1: the GPUs now run 1 compute process(es); stop them or pass --force"
		if force {
			wantStatus, wantErr = StatusOK, ""
		}
		if st.Status != wantStatus || st.Error != wantErr {
			t.Errorf("force=%v: %s %q, want %s %q", force, st.Status, st.Error, wantStatus, wantErr)
		}
	}
}

func TestHaveTool(t *testing.T) {
	ctx := context.Background()
	if !HaveTool(ctx, runner.Local{}, "localhost", "sh") {
		t.Error("sh not found")
	}
	if HaveTool(ctx, runner.Local{}, "localhost", "/nonexistent/all_gather_perf") {
		t.Error("a missing path found")
	}
}

// TestDesktopIsNotBusy: nvidia-smi -q lists a Spark's Xorg and gnome-shell
// as GPU processes (graphics, type G), which the facts count. Read live,
// only compute processes refuse the run.
func TestDesktopIsNotBusy(t *testing.T) {
	zero, one := 0, 1
	for _, c := range []struct {
		live []Live
		want []Refusal
	}{
		{nil, []Refusal{{Host: "spark-1", Forceable: true, Reason: "GPU 0 (NVIDIA GB10) already runs 2 process(es); stop them or pass --force"}}},
		{[]Live{{GPUProcesses: &zero}, {GPUProcesses: &zero}}, nil},
		{[]Live{{GPUProcesses: &one}, {}}, []Refusal{{Host: "spark-1", Forceable: true, Reason: "the GPUs already run 1 compute process(es); stop them or pass --force"}}},
	} {
		nodes := healthyPair()
		nodes[0].GPUs[0].Processes = 2 // Xorg, gnome-shell
		p, err := NewPlan(nodes, Options{Kinds: []string{KindTCP}, Live: c.live})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, p.Refusals); d != "" {
			t.Errorf("live %v: refusals (-want +got):\n%s", c.live, d)
		}
	}
}
