package allpairs

import (
	"context"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// recording is a file of testdata/nccl-pair without its SOURCE line.
func recording(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/nccl-pair/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.HasPrefix(s, "# SOURCE:") {
		s = s[strings.IndexByte(s, '\n')+1:]
	}
	return s
}

// The values rank 0 printed on the H100 machine, read as qualify reads
// them: the out-of-place busbw of the largest message.
func TestCollectiveResultReadsRankZero(t *testing.T) {
	for _, c := range []struct {
		file    string
		gbs     float64
		version string
	}{{"socket.txt", 3.05, "2.28.3"}, {"socket-1thread.txt", 4.81, "2.28.3"}, {"p2p.txt", 298.25, "2.28.3"}} {
		r := collectiveResult(bench.CmdResult{Stdout: recording(t, c.file)})
		if r.Err != "" || r.BusGBs != c.gbs || r.Bytes != 256<<20 || r.NCCLVersion != c.version {
			t.Errorf("%s: %+v, want %.2f GB/s at 256M, NCCL %s", c.file, r, c.gbs, c.version)
		}
	}
	// a rank 0 that ended well with no table says so, never another pair's error
	if r := collectiveResult(bench.CmdResult{Stdout: "# nccl-tests version 2.17.6\n"}); r.Err != "no NCCL table in rank 0's output" {
		t.Errorf("no table: %+v", r)
	}
	// a rank that could not start: its own error, not a guess
	r := collectiveResult(bench.CmdResult{Stderr: recording(t, "nogpu.err"), Error: "exit status 3", ExitCode: 3})
	if want := "sparkrig: bench gpu collective: no CUDA driver found: cuInit: CUresult 100 (is the NVIDIA kernel module loaded and a GPU visible?)"; r.Err != want || r.BusGBs != 0 {
		t.Errorf("failed rank: %+v, want error %q", r, want)
	}
}

// replayRanks stands in for nodes with GPUs: it answers the rank-0
// command of each pair with a recorded rank 0 output (by the host it
// runs on), records every command line, and runs nothing.
type replayRanks struct {
	out   map[string]string // host → rank 0's stdout
	fail  map[string]string // host → its rank's stderr: it exits 3 at once
	delay time.Duration     // how long rank 0 runs before it prints, unless stopped
	mu    sync.Mutex
	cmd   []string
}

func (r *replayRanks) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	r.mu.Lock()
	r.cmd = append(r.cmd, host+": "+cmdline)
	r.mu.Unlock()
	if !strings.Contains(cmdline, "collective") {
		return nil // the pid-file kill of a stop
	}
	if e, ok := r.fail[host]; ok {
		io.WriteString(stderr, e)
		return &runner.ExitError{Host: host, Exit: 3}
	}
	if !strings.Contains(cmdline, " --rank 0 ") {
		return nil // rank 1 prints nothing
	}
	stopped := make(chan struct{})
	go func() { io.Copy(io.Discard, stdin); close(stopped) }()
	if r.out[host] != "" {
		select {
		case <-time.After(r.delay):
			io.WriteString(stdout, r.out[host])
			return nil
		case <-stopped:
			return &runner.ExitError{Host: host, Exit: 143}
		}
	}
	// a rank 0 whose peer never comes waits at the rendezvous until stopped
	<-stopped
	return &runner.ExitError{Host: host, Exit: 143}
}

func (r *replayRanks) String() string { return "replay" }

// Collectives starts both ranks of every pair of a round at once, keeps
// NCCL to the pair's segment netdev (and its RDMA port where both ends
// have one), and reads each pair's rank 0.
func TestCollectivesRunsBothRanksOfEveryPair(t *testing.T) {
	rr := &replayRanks{out: map[string]string{"n0": recording(t, "p2p.txt"), "n2": recording(t, "socket.txt")}}
	hosts := []string{"n0", "n1", "n2", "n3"}
	ep := func(h, dev, rdma string) bench.Endpoint {
		e := bench.Endpoint{Host: h, NetDev: dev, GIDIndex: -1}
		if rdma != "" {
			e.RDMADev, e.Port = rdma, 1
		}
		return e
	}
	m := &Remote{X: &bench.Executor{T: rr, RunDir: t.TempDir()}, Hosts: hosts, Probe: "/opt/sparkrig",
		Addr: func(node, peer int) string { return "10.0.0." + string(rune('1'+node)) },
		Rails: map[Pair]bench.Rail{
			{0, 1}: {A: ep("n0", "enp1s0f0np0", "rocep1s0f0"), B: ep("n1", "enp1s0f0np0", "rocep1s0f0")},
			{2, 3}: {A: ep("n2", "eth1", ""), B: ep("n3", "eth1", "mlx5_0")},
		},
		NCCL: NCCLTest{MaxBytes: 256 << 20, Port: 18716, LibDirs: []string{"/opt/venv/nvidia/nccl/lib"}}}
	got := m.Collectives(context.Background(), []Pair{{0, 1}, {2, 3}})
	want := []PairResult{{Pair: Pair{0, 1}, BusGBs: 298.25, Bytes: 256 << 20, NCCLVersion: "2.28.3"},
		{Pair: Pair{2, 3}, BusGBs: 3.05, Bytes: 256 << 20, NCCLVersion: "2.28.3"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results %+v\nwant %+v", got, want)
	}
	var ranks []string
	for _, c := range rr.cmd {
		if strings.Contains(c, "collective") {
			ranks = append(ranks, c)
		}
	}
	if len(ranks) != 4 {
		t.Fatalf("%d rank commands, want 4:\n%s", len(ranks), strings.Join(rr.cmd, "\n"))
	}
	for _, w := range []string{
		"n0: .*NCCL_SOCKET_IFNAME==enp1s0f0np0 NCCL_IB_HCA==rocep1s0f0:1 /opt/sparkrig bench gpu --lib-dir /opt/venv/nvidia/nccl/lib collective --op all_reduce -b 32M -e 256M -f 2 --nranks 2 --rank 0 --device 0 --rendezvous 10.0.0.1:18716",
		"n1: .*NCCL_SOCKET_IFNAME==enp1s0f0np0 NCCL_IB_HCA==rocep1s0f0:1 .* --rank 1 --device 0 --rendezvous 10.0.0.1:18716",
		// one end without RDMA: both ranks keep to sockets on the segment
		"n2: .*NCCL_SOCKET_IFNAME==eth1 NCCL_IB_DISABLE=1 .* --rank 0 --device 0 --rendezvous 10.0.0.3:18716",
		"n3: .*NCCL_SOCKET_IFNAME==eth1 NCCL_IB_DISABLE=1 .* --rank 1 --device 0 --rendezvous 10.0.0.3:18716",
	} {
		if !matchAny(w, ranks) {
			t.Errorf("no rank command matches %q in\n%s", w, strings.Join(ranks, "\n"))
		}
	}
}

// A rank that fails stops its own pair at once, with its error as the
// pair's, and the pair beside it in the round runs on.
func TestCollectivesFailingRankStopsOnlyItsPair(t *testing.T) {
	rr := &replayRanks{out: map[string]string{"n0": recording(t, "p2p.txt")}, fail: map[string]string{"n3": recording(t, "nogpu.err")},
		delay: 500 * time.Millisecond}
	hosts := []string{"n0", "n1", "n2", "n3"}
	m := &Remote{X: &bench.Executor{T: rr, RunDir: t.TempDir(), Grace: time.Second}, Hosts: hosts, Probe: "/opt/sparkrig",
		Addr: func(node, peer int) string { return "10.0.0.1" }, NCCL: NCCLTest{MaxBytes: 256 << 20, Port: 18716}}
	start := time.Now()
	got := m.Collectives(context.Background(), []Pair{{0, 1}, {2, 3}})
	if took := time.Since(start); took > NCCLTimeout/2 {
		t.Errorf("the round took %s: rank 0 of the failed pair was not stopped", took)
	}
	if got[0].Err != "" || got[0].BusGBs != 298.25 {
		t.Errorf("the healthy pair: %+v", got[0])
	}
	if want := "n3: sparkrig: bench gpu collective: no CUDA driver found: cuInit: CUresult 100 (is the NVIDIA kernel module loaded and a GPU visible?)"; got[1].Err != want {
		t.Errorf("the failed pair: %q, want %q", got[1].Err, want)
	}
}

func matchAny(pattern string, lines []string) bool {
	parts := strings.Split(pattern, ".*")
	for _, l := range lines {
		l = strings.ReplaceAll(l, "'", "")
		at, ok := 0, true
		for i, p := range parts {
			k := strings.Index(l[at:], p)
			if k < 0 || i == 0 && k != 0 {
				ok = false
				break
			}
			at += k + len(p)
		}
		if ok {
			return true
		}
	}
	return false
}

// The judgement over real rates: the pairs of one node measure at the
// rate of NCCL's sockets (3.05 GB/s) while the others reach NVLink's
// (298.25 GB/s); then a single pair at 4.81 GB/s among fast ones; then a
// pair whose rank could not start.
func TestJudgeCollectives(t *testing.T) {
	names := []string{"n0", "n1", "n2", "n3"}
	all := func(rate func(Pair) (float64, string)) []PairResult {
		var rs []PairResult
		for _, round := range Circle(4) {
			for _, p := range round {
				g, err := rate(p)
				rs = append(rs, PairResult{Pair: p, BusGBs: g, Bytes: 256 << 20, Err: err})
			}
		}
		return rs
	}
	// node 2's pairs slow: node 2 alone is named, its three pairs as evidence
	j := JudgeCollectives(names, all(func(p Pair) (float64, string) {
		if p.A == 2 || p.B == 2 {
			return 3.05, ""
		}
		return 298.25, ""
	}), DefaultRules)
	if j.Reference != 298.25 || len(j.Suspects) != 1 || j.Suspects[0].Kind != SuspectNode || j.Suspects[0].Node != 2 || len(j.Suspects[0].Evidence) != 4 {
		t.Fatalf("node 2 slow: %+v", j)
	}
	if e := j.Suspects[0].Evidence[3]; e != "n2 passed 0 of its 3 NCCL pairs" {
		t.Errorf("evidence %q", e)
	}
	// one pair slow, both its nodes fine with the others: the pair
	j = JudgeCollectives(names, all(func(p Pair) (float64, string) {
		if p == (Pair{0, 1}) {
			return 4.81, ""
		}
		return 298.25, ""
	}), DefaultRules)
	if len(j.Suspects) != 1 || j.Suspects[0].Kind != SuspectPair || j.Suspects[0].Node != 0 || j.Suspects[0].Peer != 1 {
		t.Fatalf("pair 0-1 slow: %+v", j.Suspects)
	}
	if want := "n0 ↔ n1: 4.8 GB/s busbw at 256M, under 208.8 GB/s (70 % of the best pairs' 298.2 GB/s)"; j.Suspects[0].Evidence[0] != want {
		t.Errorf("evidence %q, want %q", j.Suspects[0].Evidence[0], want)
	}
	// a rank that did not start fails its pair, with its error
	const noGPU = "sparkrig: bench gpu collective: no CUDA driver found: cuInit: CUresult 100 (is the NVIDIA kernel module loaded and a GPU visible?)"
	j = JudgeCollectives(names, all(func(p Pair) (float64, string) {
		if p == (Pair{1, 3}) {
			return 0, noGPU
		}
		return 298.25, ""
	}), DefaultRules)
	if len(j.Suspects) != 1 || j.Suspects[0].Kind != SuspectPair || j.Suspects[0].Evidence[0] != "n1 ↔ n3: no NCCL result: "+noGPU {
		t.Fatalf("pair 1-3 failed: %+v", j.Suspects)
	}
}

// The report holds every pair and a finding per suspect, and says which
// pairs were not tested; a run with no pair tested says only why.
func TestCollectivesReport(t *testing.T) {
	names := []string{"n0", "n1", "n2"}
	c := &Collectives{Rounds: CollectiveRounds(AllPairs, 3, func(Pair) bool { return true }),
		Results: []PairResult{{Pair: Pair{0, 1}, BusGBs: 298.25, Bytes: 256 << 20}, {Pair: Pair{0, 2}, BusGBs: 3.05, Bytes: 256 << 20}, {Pair: Pair{1, 2}, BusGBs: 298.25, Bytes: 256 << 20}}}
	c.Judgement = JudgeCollectives(names, c.Results, DefaultRules)
	n, fs := c.Report(names, nil)
	if len(n.Pairs) != 3 || n.Pairs[1].Pass || !n.Pairs[0].Pass || len(fs) != 1 || fs[0].ID != "allpairs.nccl-pair" || fs[0].Severity != report.Warn {
		t.Fatalf("report %+v, findings %+v", n, fs)
	}
	if fs[0].Remedy == nil || fs[0].Remedy.Kind != report.RemedyManual {
		t.Errorf("finding without a manual remedy: %+v", fs[0])
	}
	var none *Collectives
	n, fs = none.Report(names, []string{"no pair was NCCL-tested: the test needs a GPU and NCCL on both nodes", "n0 has no GPU"})
	if len(n.Pairs) != 0 || len(fs) != 0 || len(n.Skipped) != 2 {
		t.Fatalf("nothing tested: %+v %+v", n, fs)
	}
}

// interruptedPairs measures every pair at 298.25 GB/s until round cut:
// there Ctrl-C comes mid-round, the first pair has finished and the
// others' ranks are stopped, failing as a stopped process does.
type interruptedPairs struct {
	cut    int
	cancel context.CancelFunc
	rounds int
}

func (m *interruptedPairs) Collectives(_ context.Context, pairs []Pair) []PairResult {
	m.rounds++
	var out []PairResult
	for i, p := range pairs {
		r := PairResult{Pair: p, BusGBs: 298.25, Bytes: 256 << 20}
		if m.rounds == m.cut && i > 0 {
			r = PairResult{Pair: p, Err: "exit status 143"}
		}
		out = append(out, r)
	}
	if m.rounds == m.cut {
		m.cancel()
	}
	return out
}

// An interrupted run keeps what it measured; the pairs the interrupt cut
// short are not failures: no pair or node is named for them.
func TestRunCollectivesInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	names := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	m := &interruptedPairs{cut: 2, cancel: cancel}
	c, err := RunCollectives(ctx, m, names, CollectiveRounds(AllPairs, 6, func(Pair) bool { return true }), DefaultRules)
	if err == nil {
		t.Fatal("an interrupted run says so")
	}
	if len(c.Results) != 4 || m.rounds != 2 {
		t.Errorf("%d results over %d rounds, want round 1's three pairs and the one pair of round 2 that finished", len(c.Results), m.rounds)
	}
	if len(c.Judgement.Suspects) != 0 {
		t.Errorf("suspects named for the pairs the interrupt stopped: %+v", c.Judgement.Suspects)
	}
}
