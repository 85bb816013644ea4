package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"
	"slices"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// port0Pair is the pair of NVIDIA's performance guide: port 0 cabled, both
// twins addressed.
func port0Pair() []*facts.Node {
	return []*facts.Node{
		sparkNode("spark-1", []int{0}, map[string]string{"enp1s0f0np0": "192.168.200.12/24", "enP2p1s0f0np0": "192.168.201.12/24"}),
		sparkNode("spark-2", []int{0}, map[string]string{"enp1s0f0np0": "192.168.200.13/24", "enP2p1s0f0np0": "192.168.201.13/24"}),
	}
}

func session(t *testing.T, nodes []*facts.Node, o Options) *Session {
	t.Helper()
	p, err := NewPlan(nodes, o)
	if err != nil {
		t.Fatal(err)
	}
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	x := &Executor{T: standinHosts{nodes: nodes}, RunDir: filepath.Join(dir, "run"), Grace: time.Second}
	return &Session{Exec: x, Nodes: nodes, Plan: p, Set: set}
}

func judged(rec *Record) map[string]string {
	out := map[string]string{}
	for _, a := range rec.Analyses {
		for _, it := range a.Items {
			out[a.File+" "+it.Subject+" "+it.Metric] = strings.TrimRight(strings.TrimRight(jsonNum(it.Value), "0"), ".") + " " + it.Unit + " " + string(it.Verdict)
		}
		if len(a.Items) == 0 {
			out[a.File] = string(a.Status) + ": " + a.Error
		}
	}
	return out
}

func jsonNum(v float64) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// TestRDMAWithStandins runs the whole rdma plan of a healthy pair through
// stand-ins that replay NVIDIA's recorded ib_write_bw outputs, one per twin.
func TestRDMAWithStandins(t *testing.T) {
	bin := standins(t, nil, "ib_write_bw", "ib_write_lat")
	s := session(t, port0Pair(), Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: bin}, Duration: time.Second})
	rec := s.Run(context.Background())

	// NVIDIA's guide: 92.57 + 97.28 = 189.85 Gb/s over both twins.
	want := map[string]string{
		"rdma/rail0/ib_write_bw rail0: ib_write_bw on rocep1s0f0 BW average":                     "92.57 Gb/s ok",
		"rdma/rail0/ib_write_lat rail0: ib_write_lat on rocep1s0f1 t_avg":                        "1.47 us ok",
		"rdma/rail1/ib_write_bw rail1: ib_write_bw on roceP2p1s0f0 BW average":                   "97.28 Gb/s ok",
		"rdma/rail1/ib_write_lat rail1: ib_write_lat on rocep1s0f1 t_avg":                        "1.47 us ok",
		"rdma/all/ib_write_bw rail0+rail1: ib_write_bw on rocep1s0f0 BW average":                 "92.57 Gb/s ok",
		"rdma/all/ib_write_bw rail0+rail1: ib_write_bw on roceP2p1s0f0 BW average":               "97.28 Gb/s ok",
		"rdma/all/ib_write_bw rail0+rail1: ib_write_bw summed over 2 devices sum of BW averages": "189.85 Gb/s ok",
	}
	if d := cmp.Diff(want, judged(rec)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if rec.Status != report.VerdictOK {
		t.Errorf("status %s", rec.Status)
	}
	agg := rec.Bench.Steps[4]
	wantCmds := []string{
		bin + "/ib_write_bw -d rocep1s0f0 -i 1 -p 18515 -F -x 3 --report_gbits -q 1 -D 1",
		bin + "/ib_write_bw -d roceP2p1s0f0 -i 1 -p 18516 -F -x 3 --report_gbits -q 1 -D 1",
		bin + "/ib_write_bw -d rocep1s0f0 -i 1 -p 18515 -F -x 3 --report_gbits -q 1 -D 1 192.168.200.12",
		bin + "/ib_write_bw -d roceP2p1s0f0 -i 1 -p 18516 -F -x 3 --report_gbits -q 1 -D 1 192.168.201.12",
	}
	var got []string
	for _, c := range agg.Commands {
		got = append(got, c.Command)
	}
	if d := cmp.Diff(wantCmds, got); d != "" {
		t.Errorf("aggregate commands (-want +got):\n%s", d)
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, 18515, 18516) }); len(left) > 0 {
		t.Errorf("left behind after a clean run: %q", left)
	}
	if _, err := os.Stat(s.Exec.RunDir); err == nil {
		t.Errorf("scratch directory %s left behind", s.Exec.RunDir)
	}
}

// TestInterruptStopsEveryProcess cancels a run (Ctrl-C) while its client
// hangs: the server holding its port and the client must both be gone.
func TestInterruptStopsEveryProcess(t *testing.T) {
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_HANG": "client"}, "ib_write_bw", "ib_write_lat")
	s := session(t, port0Pair(), Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: bin}, Duration: time.Second, BasePort: 18615})
	ctx, cancel := context.WithCancel(context.Background())
	s.Progress = func(e Event) {
		if !e.Done && e.Index == 1 {
			time.AfterFunc(700*time.Millisecond, cancel)
		}
	}
	start := time.Now()
	rec := s.Run(ctx)
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("interrupted run took %s to return", el)
	}
	if st := rec.Bench.Steps[0].Status; st != StatusInterrupted {
		t.Errorf("first step %s, want interrupted", st)
	}
	for _, st := range rec.Bench.Steps[1:] {
		if st.Status != StatusInterrupted {
			t.Errorf("%s ran after the interrupt: %s", st.ID, st.Status)
		}
	}
	if !rec.Bench.Interrupted {
		t.Error("record does not say it was interrupted")
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, 18615) }); len(left) > 0 {
		t.Errorf("left behind after Ctrl-C: %q", left)
	}
}

// killedRunMain is a bench run the test kills: it prepares the scratch
// directory dir, says so, and runs a step that hangs.
func killedRunMain(dir string) int {
	x := &Executor{T: runner.Local{}, RunDir: dir, Grace: time.Second}
	if errs := x.Prepare(context.Background(), []string{"localhost"}); len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs)
		return 2
	}
	fmt.Println("prepared")
	x.Run(context.Background(), Step{ID: "hang", Timeout: time.Hour,
		Clients: []Cmd{{Host: "localhost", Role: RoleClient, Argv: []string{"sh", "-c", "sleep 300; : " + dir}}}})
	return 0
}

// TestKilledRunLeavesNothing SIGKILLs a running bench (no Cleanup runs):
// the hanging command and the scratch directory must both be gone.
func TestKilledRunLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sparkrig-bench-killed")
	cmd := exec.Command(os.Args[0], dir)
	cmd.Env = append(os.Environ(), "SPARKRIG_STANDIN=bench-killed")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if running := eventually(30*time.Second, func() []string {
		if len(leftovers(t, "sleep 300; : "+dir)) == 0 {
			return []string{"not yet"}
		}
		return nil
	}); len(running) > 0 {
		cmd.Process.Kill()
		t.Fatalf("the run never started: %s", out.String())
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no scratch directory while running: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if left := eventually(30*time.Second, func() []string { return leftovers(t, "sleep 300; : "+dir) }); len(left) > 0 {
		t.Errorf("left running after SIGKILL: %q", left)
	}
	if left := eventually(30*time.Second, func() []string {
		if _, err := os.Stat(dir); err == nil {
			return []string{dir}
		}
		return nil
	}); len(left) > 0 {
		t.Errorf("scratch directory %s left after SIGKILL", dir)
	}
}

// TestTimeoutStopsEveryProcess lets a step run past its timeout: the step
// says so and nothing of it survives.
func TestTimeoutStopsEveryProcess(t *testing.T) {
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_HANG": "client"}, "ib_write_bw")
	p, err := NewPlan(port0Pair(), Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: bin}, BasePort: 18715})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Steps[0]
	st.Timeout = 5 * time.Second
	x := &Executor{T: runner.Local{}, RunDir: t.TempDir(), Grace: time.Second}
	res := x.Run(context.Background(), st)
	if res.Status != StatusTimeout || !strings.Contains(res.Error, "5s") {
		t.Errorf("status %s (%s), want timeout", res.Status, res.Error)
	}
	if len(res.Commands) != 2 || !strings.Contains(res.Commands[0].Stdout, "Waiting for client to connect") {
		t.Errorf("server output not kept: %+v", res.Commands)
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, 18715) }); len(left) > 0 {
		t.Errorf("left behind after a timeout: %q", left)
	}
}

// TestServerFailsEarly: a server that cannot start fails its step with its
// own message, and the next step still runs.
func TestServerFailsEarly(t *testing.T) {
	bin := standins(t, nil, "ib_write_bw", "ib_write_lat")
	s := session(t, port0Pair(), Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: bin}, Duration: time.Second, BasePort: 18815})
	os.Remove(filepath.Join(bin, "ib_write_lat"))
	os.WriteFile(filepath.Join(bin, "ib_write_lat"), []byte("#!/bin/sh\necho ' Couldn'\\''t listen on port' >&2\nexit 1\n"), 0o755)
	rec := s.Run(context.Background())
	lat := rec.Bench.Steps[1]
	if lat.Status != StatusFailed || !strings.Contains(lat.Error, "exited before listening: Couldn't listen on port") {
		t.Errorf("lat step: %s %q", lat.Status, lat.Error)
	}
	if bw := rec.Bench.Steps[2]; bw.Status != StatusOK {
		t.Errorf("the step after a failure did not run: %s %s", bw.Status, bw.Error)
	}
	if rec.Status != report.VerdictUnknown {
		t.Errorf("run status %s, want unknown", rec.Status)
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, 18815, 18816) }); len(left) > 0 {
		t.Errorf("left behind after a failed step: %q", left)
	}
}

// TestMissingToolIsNamedWithHowToGetIt: steps whose program a host lacks
// are skipped with the install hint; the others run.
func TestMissingToolIsNamedWithHowToGetIt(t *testing.T) {
	bin := standins(t, nil, "ib_write_bw")
	s := session(t, port0Pair(), Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: bin}, Duration: time.Second, BasePort: 18915})
	rec := s.Run(context.Background())
	lat := rec.Bench.Steps[1]
	if lat.Status != StatusSkipped || !strings.Contains(lat.Error, "ib_write_lat not found on spark-1: install perftest (Ubuntu/Debian: sudo apt install perftest)") {
		t.Errorf("lat step: %s %q", lat.Status, lat.Error)
	}
	if rec.Bench.Steps[0].Status != StatusOK {
		t.Errorf("bw step: %s %s", rec.Bench.Steps[0].Status, rec.Bench.Steps[0].Error)
	}
}

// TestNCCLThroughMPIRunStandin runs all_gather through an mpirun stand-in
// replaying a real two-Spark run, and checks the environment mpirun got.
func TestNCCLThroughMPIRunStandin(t *testing.T) {
	traceDir := t.TempDir()
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_TRACE": traceDir}, "mpirun", "all_gather_perf")
	s := session(t, healthyPair(), Options{Kinds: []string{KindNCCL}, Collectives: []string{"all_gather"},
		Tools: Tools{MPIRun: bin + "/mpirun", NCCLTests: bin}, MinBytes: 1 << 30, MaxBytes: 1 << 30})
	rec := s.Run(context.Background())
	want := map[string]string{"nccl/all_gather all_gather, 2 ranks on 2 nodes busbw plateau": "21.99 GB/s ok"}
	if d := cmp.Diff(want, judged(rec)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if n := rec.Bench.Steps[0].Parsed.NCCL; n == nil || n.Log.Network != "IB" {
		t.Errorf("NCCL log not parsed to NET/IB: %+v", n)
	}
	traces, _ := filepath.Glob(filepath.Join(traceDir, "mpirun-*.json"))
	if len(traces) != 1 {
		t.Fatalf("mpirun ran %d times", len(traces))
	}
	b, _ := os.ReadFile(traces[0])
	var tr struct {
		Args []string
		Env  map[string]string
	}
	json.Unmarshal(b, &tr)
	wantEnv := map[string]string{
		"NCCL_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1",
		"UCX_NET_DEVICES": "rocep1s0f1:1,roceP2p1s0f1:1", "OMPI_MCA_btl_tcp_if_include": "enp1s0f1np1",
		"OMPI_MCA_oob_tcp_if_include": "enp1s0f1np1", "GLOO_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
	}
	if d := cmp.Diff(wantEnv, tr.Env); d != "" {
		t.Errorf("mpirun's environment (-want +got):\n%s", d)
	}
	args := strings.Join(tr.Args, " ")
	for _, w := range []string{"-np 2 -H 192.168.100.10:1,192.168.100.11:1", "-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1",
		bin + "/all_gather_perf -g 1 -b 1G -e 1G -f 2"} {
		if !strings.Contains(args, w) {
			t.Errorf("mpirun args lack %q:\n%s", w, args)
		}
	}
}

func TestMemoryCapAndBusyGPU(t *testing.T) {
	nodes := healthyPair()
	avail := uint64(40 << 30)
	nodes[1].Memory.AvailableBytes = &avail
	nodes[0].GPUs[0].Processes = 2
	p, err := NewPlan(nodes, Options{Kinds: []string{KindNCCL}})
	if err != nil {
		t.Fatal(err)
	}
	// 50 % of 40 GiB is 20 GiB; all_gather on 2 ranks takes 2.5× its size,
	// all_reduce 3×.
	for _, st := range p.Steps {
		argv := strings.Join(st.Clients[0].Argv, " ")
		want := map[string]string{"all_gather": "-b 32M -e 8G", "all_reduce": "-b 32M -e 4G"}[st.Collective]
		if !strings.Contains(argv, want) {
			t.Errorf("%s: %s, want %s", st.ID, argv, want)
		}
	}
	var capped []string
	for _, n := range p.Notes {
		if n.ID == "bench.size-capped" {
			capped = append(capped, n.Detail)
		}
	}
	wantCapped := []string{
		"all_gather capped at -e 8G (asked 16G): a rank may take at most 50% of MemAvailable 40.0 GiB on spark-2",
		"all_reduce capped at -e 4G (asked 16G): a rank may take at most 50% of MemAvailable 40.0 GiB on spark-2",
	}
	if d := cmp.Diff(wantCapped, capped); d != "" {
		t.Errorf("cap notes (-want +got):\n%s", d)
	}
	wantRef := []Refusal{{Host: "spark-1", Forceable: true, Reason: "GPU 0 (NVIDIA GB10) already runs 2 process(es); stop them or pass --force"}}
	if d := cmp.Diff(wantRef, p.Refusals); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}

	tiny := uint64(100 << 20)
	nodes[1].Memory.AvailableBytes = &tiny
	p, _ = NewPlan(nodes, Options{Kinds: []string{KindNCCL}, Collectives: []string{"all_reduce"}})
	if len(p.Steps) != 0 || len(p.Refusals) != 2 || p.Refusals[1].Forceable {
		t.Errorf("a node with 100 MiB free still gets a run: steps %d, refusals %+v", len(p.Steps), p.Refusals)
	}
}

// TestNCCLBelowExpectationNamesCauses replays the 16 GiB all_gather two
// Sparks gave with MTU 1500 (18.94/20.95 GB/s): below NVIDIA's 21.875 GB/s
// mark, so the verdict is a warning and the known causes are attached.
func TestNCCLBelowExpectationNamesCauses(t *testing.T) {
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_NCCL": "standin-all_gather_perf.mtu1500.txt"}, "mpirun", "all_gather_perf")
	s := session(t, healthyPair(), Options{Kinds: []string{KindNCCL}, Collectives: []string{"all_gather"},
		Tools: Tools{MPIRun: bin + "/mpirun", NCCLTests: bin}, MinBytes: 16 << 30, MaxBytes: 16 << 30})
	rec := s.Run(context.Background())
	want := map[string]string{"nccl/all_gather all_gather, 2 ranks on 2 nodes busbw plateau": "20.95 GB/s warning"}
	if d := cmp.Diff(want, judged(rec)); d != "" {
		t.Fatalf("results (-want +got):\n%s", d)
	}
	it := rec.Analyses[0].Items[0]
	if it.Expectation == nil || it.Expectation.ID != "spark-2n1c-all-gather-large" || len(it.Causes) == 0 {
		t.Errorf("expectation %+v, causes %+v", it.Expectation, it.Causes)
	}
	if rec.Status != report.VerdictWarning {
		t.Errorf("status %s, want warning", rec.Status)
	}
}

// TestWrapperOutlivesADeadSparkrig replays the moment a killed run can hit
// between starting a command and recording its pid: sparkrig is gone (the
// wrapper's stdin at EOF, its stderr a pipe nobody reads) and the keeper has
// already removed the scratch directory, so the pid file cannot be written.
// The wrapper must still stop the command rather than die of SIGPIPE or of
// the failed redirection and leave it running.
func TestWrapperOutlivesADeadSparkrig(t *testing.T) {
	marker := fmt.Sprintf("sparkrig-wrapper-test-%d", os.Getpid())
	script := Script(Cmd{Host: "localhost", Role: RoleClient, Argv: []string{"sh", "-c", "sleep 300; : " + marker}},
		filepath.Join(t.TempDir(), "removed", "1-client.pid"))
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdinW.Close() // sparkrig's end of the session is gone
	errR.Close()   // and nobody reads what the wrapper says
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdin, cmd.Stderr = stdinR, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	errW.Close()
	t.Cleanup(func() { exec.Command("pkill", "-KILL", "-f", marker).Run() })
	werr := cmd.Wait()
	if left := eventually(30*time.Second, func() []string { return leftovers(t, marker) }); len(left) > 0 {
		t.Errorf("the command outlived its wrapper (wrapper: %v): %q", werr, left)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
		t.Errorf("the wrapper died of %v", ee.ProcessState.Sys().(syscall.WaitStatus).Signal())
	}
}

// TestLeftOutBenchmarkIsNotEvaluated: a benchmark asked for that the plan
// can run no step of (nccl on nodes without a GPU) leaves the run unknown,
// however well the rest passed, and the report says which; the same run
// asked for rdma alone is ok.
func TestLeftOutBenchmarkIsNotEvaluated(t *testing.T) {
	bin := standins(t, nil, "ib_write_bw", "ib_write_lat")
	nodes := port0Pair()
	nodes[1].GPUs, nodes[1].Driver = nil, facts.GPUDriver{} // the doctor's no-gpu profile
	s := session(t, nodes, Options{Kinds: []string{KindRDMA, KindNCCL}, Tools: Tools{Perftest: bin}, Duration: time.Second})
	rec := s.Run(context.Background())
	for _, a := range rec.Analyses {
		if a.Status != report.VerdictOK {
			t.Fatalf("%s: %s, want every rdma result ok", a.File, a.Status)
		}
	}
	if got := rec.BenchRun.LeftOut; !slices.Equal(got, []string{KindNCCL}) {
		t.Errorf("left out %q, want [nccl]", got)
	}
	if rec.Status != report.VerdictUnknown || rec.Overall() != report.VerdictUnknown {
		t.Errorf("status %s (overall %s), want unknown: nccl was asked for and not run", rec.Status, rec.Overall())
	}
}
