package triage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// fakeNode is one node's answers to the sample script, one per call.
type fakeNode struct {
	outputs []string // the last one repeats
}

// fakeRunner answers the sample script from canned outputs and counts the
// calls each host gets.
type fakeRunner struct {
	mu    sync.Mutex
	nodes map[string]*fakeNode
	calls map[string]int
}

func (f *fakeRunner) Exec(_ context.Context, host, _ string, _ io.Reader, stdout, _ io.Writer) error {
	f.mu.Lock()
	n := f.calls[host]
	f.calls[host]++
	f.mu.Unlock()
	node, ok := f.nodes[host]
	if !ok {
		return fmt.Errorf("%w: %s", runner.ErrUnreachable, host)
	}
	_, err := io.WriteString(stdout, node.outputs[min(n, len(node.outputs)-1)])
	return err
}

// scriptOutput is what the sample script prints on a node running the
// given NCCL processes, with one RAS answer (exit 0) in the given form.
func scriptOutput(host string, pids []int, format, ras string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s host\n%s\n%s addrs\n127.0.0.1/8\n%s procs\n", marker, host, marker, marker)
	for _, p := range pids {
		fmt.Fprintf(&b, "pid %d\ncmd python3 train.py\nlib /usr/lib/x86_64-linux-gnu/libnccl.so.2\n", p)
	}
	fmt.Fprintf(&b, "%s gpus\nindex, uuid, utilization.gpu [%%], power.draw [W]\n0, GPU-1, 100 %%, 121.41 W\n", marker)
	if format != "" {
		fmt.Fprintf(&b, "%s ras protocol %s\n%s%s ras-exit 0\n", marker, format, ras, marker)
	} else {
		fmt.Fprintf(&b, "%s ras protocol json\n%s ras-exit 7\n", marker, marker)
	}
	fmt.Fprintf(&b, "%s end\n", marker)
	return b.String()
}

// ncclText renders a communicator's RAS text answer as NCCL 2.26 and later
// print it (NVIDIA/nccl src/ras/client_support.cc, v2.30.7-1
// :1206-1660): MISMATCH count groups most frequent first, then the highest
// count first; a group's ranks listed when it is an outlier
// (rasCountIsOutlier :2169, VERBOSE STATUS).
func ncclText(hash uint64, counts []int64, host func(int) string) string {
	n := len(counts)
	var b strings.Builder
	b.WriteString("NCCL version 2.28.9 compiled with CUDA 13.0\nCUDA runtime version 13000, driver version 13000\n\nJob summary\n===========\n\n")
	b.WriteString("  Nodes  Processes         GPUs  Processes     GPUs\n(total)   per node  per process    (total)  (total)\n")
	fmt.Fprintf(&b, "%7d  %9d  %11d  %9d  %7d\n\nCommunicators... (0.001s)\n=============\n\n", n, 1, 1, n, n)
	b.WriteString("Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n")
	vals := map[int64][]int{}
	for r, v := range counts {
		vals[v] = append(vals[v], r)
	}
	e := "OK"
	if len(vals) > 1 {
		e = "MISMATCH"
	}
	fmt.Fprintf(&b, "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n\nErrors\n======\n\nWarnings\n========\n\n", 0, 1, n, "1", n, n, "RUNNING", e)
	if len(vals) < 2 {
		return b.String()
	}
	fmt.Fprintf(&b, "#0-0 (%016x) MISMATCH\n  Communicator ranks have different AllReduce operation counts\n", hash)
	type vc struct {
		v     int64
		ranks []int
	}
	var gs []vc
	for v, rs := range vals {
		gs = append(gs, vc{v, rs})
	}
	sort.Slice(gs, func(i, j int) bool {
		if len(gs[i].ranks) != len(gs[j].ranks) {
			return len(gs[i].ranks) > len(gs[j].ranks)
		}
		return gs[i].v > gs[j].v
	})
	for _, g := range gs {
		if len(g.ranks) > 1 {
			fmt.Fprintf(&b, "  %d ranks have launched up to operation %d\n", len(g.ranks), g.v)
		}
		if len(g.ranks) > 1 && float64(len(g.ranks)) >= float64(n)*0.5 {
			continue
		}
		for _, r := range g.ranks {
			tail := fmt.Sprintf("-- GPU 0 managed by process %d on node %s", 100+r, host(r))
			if len(g.ranks) > 1 {
				fmt.Fprintf(&b, "  Rank %d %s\n", r, tail)
			} else {
				fmt.Fprintf(&b, "  Rank %d has launched up to operation %d %s\n", r, g.v, tail)
			}
		}
	}
	return b.String() + "\n"
}

// ncclJSON renders the same communicator as rasDumpCommsToJSON (:2095),
// ranks in the given order.
func ncclJSON(hash uint64, counts []int64, order []int, host func(int) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"nccl_version\": \"2.28.9\",\n  \"cuda_runtime_version\": 13000,\n  \"cuda_driver_version\": 13000,\n  \"timestamp\": \"2026-11-28 00:40:00\",\n  \"communicators_count\": 1,\n  \"communicators\": [\n")
	fmt.Fprintf(&b, "    {\n      \"hash\": \"0x%x\",\n      \"secondary_hash\": \"0x1:0x2\",\n      \"size\": %d,\n      \"ranks_count\": %d,\n      \"missing_ranks_count\": 0,\n      \"ranks\": [\n", hash, len(counts), len(counts))
	for i, r := range order {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "        {\n          \"rank\": %d,\n          \"host\": \"%s\",\n          \"pid\": %d,\n          \"cuda_dev\": 0,\n          \"nvml_dev\": 0,\n", r, host(r), 100+r)
		b.WriteString("          \"status\": {\n            \"init_state\": 0,\n            \"async_error\": 0,\n            \"finalize_called\": false,\n            \"destroy_flag\": false,\n            \"abort_flag\": false\n          },\n")
		fmt.Fprintf(&b, "          \"collective_counts\": {\n            \"Broadcast\": 0,\n            \"Reduce\": 0,\n            \"AllGather\": 2,\n            \"ReduceScatter\": 0,\n            \"AllReduce\": %d\n          }\n        }", counts[r])
	}
	b.WriteString("\n      ],\n      \"missing_ranks\": [\n\n      ]\n    }\n  ],\n  \"ras\": {\n    \"collection_time_sec\": 0.002,\n    \"timeouts_count\": 0\n  }\n}\n")
	return b.String()
}

// TestRunNamesTheRankBehindWhateverTheOrder: a job of 2 to 64 ranks, one
// rank per node, one of them (or none) behind, frozen over both samples;
// RAS answers in text (where, of two ranks, NCCL lists the one ahead
// first) or JSON (ranks in any order). triage names the rank with the
// lowest count, and nobody when the counts agree.
func TestRunNamesTheRankBehindWhateverTheOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 2026))
	for i := range 120 {
		n := 2 + rng.IntN(63)
		counts := make([]int64, n)
		ahead := int64(1 + rng.IntN(900))
		for r := range counts {
			counts[r] = ahead
		}
		behind := -1
		if rng.IntN(4) > 0 {
			behind = rng.IntN(n)
			counts[behind] = ahead - 1 - int64(rng.IntN(int(ahead)))
		}
		format := []string{"text", "json"}[rng.IntN(2)]
		host := func(r int) string { return fmt.Sprintf("10.1.0.%d", 10+r) }
		hash := rng.Uint64()
		ras := ncclText(hash, counts, host)
		if format == "json" {
			ras = ncclJSON(hash, counts, rng.Perm(n), host)
		}
		fr := &fakeRunner{nodes: map[string]*fakeNode{}, calls: map[string]int{}}
		var hosts []string
		for r := range n {
			h := fmt.Sprintf("node%02d", r)
			hosts = append(hosts, h)
			out := scriptOutput(h, []int{100 + r}, "", "")
			if r == 0 {
				out = scriptOutput(h, []int{100 + r}, format, ras)
			}
			fr.nodes[h] = &fakeNode{outputs: []string{out}}
		}
		rep, err := Run(context.Background(), Options{Runner: fr, Hosts: hosts, Interval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		tr := rep.Triage
		switch {
		case behind >= 0:
			if tr.Verdict != VerdictOutOfSync || tr.FirstRank != behind {
				t.Fatalf("case %d (%s, %d ranks, rank %d behind): %s first %d %q\n%s", i, format, n, behind, tr.Verdict, tr.FirstRank, tr.Evidence, ras)
			}
		case format == "json":
			if tr.Verdict != VerdictStuck || tr.FirstRank != -1 {
				t.Fatalf("case %d (json, %d ranks, none behind): %s first %d %q", i, n, tr.Verdict, tr.FirstRank, tr.Evidence)
			}
		default:
			// text gives no per-rank counts when they agree: nobody named
			if tr.Verdict != VerdictUnknown || tr.FirstRank != -1 || len(rep.Cluster.Findings) != 0 {
				t.Fatalf("case %d (text, %d ranks, none behind): %s first %d %q", i, n, tr.Verdict, tr.FirstRank, tr.Evidence)
			}
		}
		if behind >= 0 && (tr.FirstNode != fmt.Sprintf("node%02d", behind) || rep.Status != report.VerdictCritical) {
			t.Fatalf("case %d: node %q status %s", i, tr.FirstNode, rep.Status)
		}
	}
}

// A real two-rank hang's shape (one rank per GPU, NCCL 2.28.9): both ranks
// are outliers of a 2-rank communicator, the one ahead listed first.
func TestTwoRankHangTextNamesTheRankBehindNotTheFirstListed(t *testing.T) {
	ras := ncclText(0x52fbd9e1a8c3b4d7, []int64{121, 120}, func(int) string { return "127.0.0.1" })
	if i, j := strings.Index(ras, "Rank 0 has launched"), strings.Index(ras, "Rank 1 has launched"); i < 0 || j < i {
		t.Fatalf("NCCL lists the rank ahead first:\n%s", ras)
	}
	s := scriptOutput("gpu1", []int{100, 101}, "text", ras)
	d := Diagnose([]Sample{ParseSample("gpu1", []byte(s))}, []Sample{ParseSample("gpu1", []byte(s))}, 20*time.Second)
	if d.Verdict != VerdictOutOfSync || d.FirstRank != 1 || d.FirstNode != "gpu1" {
		t.Fatalf("%+v", d)
	}
}

func TestRunNoJobAnswersAfterTheFirstSample(t *testing.T) {
	fr := &fakeRunner{nodes: map[string]*fakeNode{"a": {outputs: []string{scriptOutput("a", nil, "", "")}}}, calls: map[string]int{}}
	rep, err := Run(context.Background(), Options{Runner: fr, Hosts: []string{"a"}, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if fr.calls["a"] != 1 || rep.Triage.Verdict != VerdictNoJob || rep.Triage.IntervalSeconds != 0 || rep.Status != report.VerdictUnknown {
		t.Fatalf("calls %d, %+v", fr.calls["a"], rep.Triage)
	}
}

func TestRunKeepsAnUnreachableNode(t *testing.T) {
	out := scriptOutput("a", []int{100}, "text", string(answer(t, "hung-2.txt", "VERBOSE STATUS")))
	fr := &fakeRunner{nodes: map[string]*fakeNode{"a": {outputs: []string{out}}}, calls: map[string]int{}}
	rep, err := Run(context.Background(), Options{Runner: fr, Hosts: []string{"a", "gone"}, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Triage.Nodes
	if len(n) != 2 || n[0].Error != "" || !strings.Contains(n[1].Error, "gone") || rep.Triage.FirstRank != 2 || rep.Status != report.VerdictCritical {
		t.Fatalf("%+v %+v", n, rep.Triage)
	}
}

func TestRunRefusesABadPort(t *testing.T) {
	for _, p := range []int{-1, 65536, 99999} {
		if _, err := Run(context.Background(), Options{Runner: &fakeRunner{}, Hosts: []string{"a"}, RASPort: p}); err == nil ||
			err.Error() != fmt.Sprintf("--ras-port %d is not a TCP port (1-65535)", p) {
			t.Fatalf("%d: %v", p, err)
		}
	}
}

// RAS text, host names and log lines carry a terminal escape and a bidi
// override: no format writes them raw.
func TestRunSanitizesEveryFormat(t *testing.T) {
	evil := "10.0.0.2\x1b]0;pwned\x07\u202e"
	ras := ncclText(0xabc, []int64{7, 5}, func(r int) string { return []string{"10.0.0.1", evil}[r] })
	out := scriptOutput("gpu1", []int{100, 101}, "text", ras) + marker + " log\nNCCL WARN \x1b[2J\u202eevil\n" + marker + " end\n"
	fr := &fakeRunner{nodes: map[string]*fakeNode{"gpu1": {outputs: []string{out}}}, calls: map[string]int{}}
	rep, err := Run(context.Background(), Options{Runner: fr, Hosts: []string{"gpu1"}, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Triage.FirstRank != 1 || rep.Triage.Ranks[1].Addr != `10.0.0.2\x1b]0;pwned\x07\u202e` {
		t.Fatalf("%+v", rep.Triage)
	}
	for _, f := range []string{"text", "json", "html", "prometheus"} {
		var b bytes.Buffer
		if err := render.Write(&b, rep, f, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsRune(b.Bytes(), 0x1b) || bytes.ContainsRune(b.Bytes(), 0x202e) || bytes.ContainsRune(b.Bytes(), 0x07) {
			t.Fatalf("%s carries a raw escape or bidi override", f)
		}
	}
}

func TestLibraryVersionEndsAtTheNUL(t *testing.T) {
	out := marker + " version /lib/libnccl.so.2\nNCCL version 2.28.9+cuda13.0\x00\x01\x02NCCL_PROTO\n" + marker + " end\n"
	s := ParseSample("a", []byte(out))
	if len(s.Libs) != 1 || s.Libs[0].Version != "2.28.9+cuda13.0" {
		t.Fatalf("%+v", s.Libs)
	}
}

// fakeSMI puts an nvidia-smi on PATH that prints one GPU.
func fakeSMI(t *testing.T) {
	dir := t.TempDir()
	b := fixture.Blocks(fixture.Read(t, "testdata/ras/hung-2.smi.txt"))[0]
	script := "#!/bin/sh\ncase \"$*\" in *query-gpu*) cat <<'EOF'\n" + string(b) + "EOF\n;; esac\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// listen serves each connection with fn on a loopback port.
func listen(t *testing.T, fn func(net.Conn)) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go fn(c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// A listener that accepts and never answers (a stopped job's port) costs
// one RAS deadline, not the node's whole timeout, and the node's GPU
// samples are kept. Without a deadline the query waits as long as the
// listener holds the connection: here, until the test ends.
func TestScriptRASListenerThatNeverAnswers(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed for the protocol client")
	}
	if _, err := exec.LookPath("ncclras"); err == nil {
		t.Skip("ncclras is installed here: the script would use it")
	}
	fakeSMI(t)
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	port := listen(t, func(c net.Conn) { mu.Lock(); held = append(held, c); mu.Unlock() })
	start := time.Now()
	rep, err := Run(context.Background(), Options{Runner: runner.Local{}, Hosts: []string{"localhost"}, RASPort: port,
		RASDeadline: 2 * time.Second, HostTimeout: 5 * time.Minute})
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// 2 s per query and one query: far under the 5 minutes the listener
	// would otherwise hold the sample
	if wall > 90*time.Second {
		t.Fatalf("the sample took %s", wall)
	}
	n := rep.Triage.Nodes[0]
	if n.Error != "" || len(n.GPUs) != 1 || n.GPUs[0].Util[0] != 100 || n.RAS != "no answer" {
		t.Fatalf("%+v", n)
	}
	mu.Lock()
	conns := len(held)
	mu.Unlock()
	if conns != 1 {
		t.Fatalf("%d RAS connections: after a timeout the second form is not asked", conns)
	}
	if ev := strings.Join(rep.Triage.Evidence, "|"); !strings.Contains(ev, "localhost: no answer from the RAS port within the deadline") {
		t.Fatalf("%q", rep.Triage.Evidence)
	}
}

// Anything else listening on the RAS port is not believed: its answer to
// NCCL's handshake (CLIENT PROTOCOL 2 → SERVER PROTOCOL n) is named.
func TestScriptNonRASListenerIsNamed(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed for the protocol client")
	}
	if _, err := exec.LookPath("ncclras"); err == nil {
		t.Skip("ncclras is installed here: the script would use it")
	}
	port := listen(t, func(c net.Conn) {
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 64)
		c.Read(buf)
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	})
	out, _ := exec.Command("sh", "-c", Script(ScriptOptions{RASPort: port, RASDeadline: 10 * time.Second})).Output()
	s := ParseSample("here", out)
	if len(s.RAS) != 1 || s.RAS[0].Exit != rasExitNotRAS {
		t.Fatalf("%+v", s.RAS)
	}
	if p := s.RASProblem(); p != `the listener on the RAS port is not NCCL's RAS service: it answered the handshake with "HTTP/1.1 400 Bad Request\n"` {
		t.Fatalf("%q", p)
	}
	// one that speaks the handshake but refuses SET FORMAT json (NCCL
	// before 2.28.7) is asked for text
	rec := ReadRecording(fixture.Read(t, filepath.Join("testdata", "ras", "hung-2.txt")))
	port = listen(t, func(c net.Conn) {
		ServeRecording(refuseJSON{c}, rec)
	})
	out, _ = exec.Command("sh", "-c", Script(ScriptOptions{RASPort: port, RASDeadline: 10 * time.Second})).Output()
	s = ParseSample("here", out)
	if len(s.RAS) != 2 || s.RAS[0].Exit != rasExitRefusedOp || s.RAS[1].Exit != 0 || !slices.Equal(s.RAS[1].Raw, answer(t, "hung-2.txt", "VERBOSE STATUS")) {
		t.Fatalf("%+v", s.RAS)
	}
}

// refuseJSON answers SET FORMAT json as NCCL before 2.28.7 does: "ERROR:
// Unknown command set format json" (client_support.cc:447 at v2.30.7-1).
type refuseJSON struct{ net.Conn }

func (r refuseJSON) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if i := bytes.Index(p[:n], []byte("SET FORMAT json\n")); i >= 0 {
		io.WriteString(r.Conn, "ERROR: Unknown command SET FORMAT json\n")
		copy(p[i:], p[i+16:n])
		n -= 16
	}
	return n, err
}

// A rank stopped with SIGSTOP may hold the RAS port itself (every process
// of a node binds it with SO_REUSEPORT, client_support.cc:176 at
// v2.30.7-1): no RAS answer, but /proc says which process is stopped and
// its launcher's environment which rank it is.
func TestStoppedProcessNamedWithoutRAS(t *testing.T) {
	out := scriptOutput("gpu1", []int{100, 101}, "", "")
	out = strings.Replace(out, "pid 101\n", "pid 101\nstate T\nenv RANK=1\n", 1)
	out = strings.Replace(out, "pid 100\n", "pid 100\nstate S\nenv RANK=0\n", 1)
	out = strings.Replace(out, marker+" ras-exit 7", marker+" ras-exit 10", 1)
	s := ParseSample("gpu1", []byte(out))
	if s.Procs[1].State != "T" || s.Procs[1].Rank != 1 || s.Procs[0].Rank != 0 {
		t.Fatalf("%+v", s.Procs)
	}
	d := Diagnose([]Sample{s}, []Sample{s}, 20*time.Second)
	if d.Verdict != VerdictRankMissing || d.FirstRank != 1 || d.FirstNode != "gpu1" {
		t.Fatalf("%+v", d)
	}
	want := "rank 1 (pid 101 on gpu1) is stopped (state T in /proc: SIGSTOP, or a debugger holds it)"
	if !slices.Contains(d.Evidence, want) || !slices.Contains(d.Evidence, "gpu1: no answer from the RAS port within the deadline (a listener that accepts and never answers, or a stopped process)") {
		t.Fatalf("%q", d.Evidence)
	}
}

// Each RAS query is bounded to half the interval between samples (so the
// second sample comes on time), never under 2 s nor over 15 s, and NCCL is
// told to give up on its peers within a third of that.
func TestRASDeadlineUnderTheInterval(t *testing.T) {
	for _, c := range []struct{ interval, want time.Duration }{
		{20 * time.Second, 10 * time.Second}, {0, 15 * time.Second}, {time.Second, 2 * time.Second}, {time.Minute, 15 * time.Second}, {9 * time.Second, 5 * time.Second},
	} {
		if got := RASDeadline(c.interval); got != c.want || (c.interval >= 4*time.Second && got >= c.interval) {
			t.Errorf("interval %s: %s, want %s", c.interval, got, c.want)
		}
	}
	if s := Script(ScriptOptions{RASDeadline: RASDeadline(20 * time.Second)}); !strings.Contains(s, "; T=10; to=3\n") {
		t.Fatalf("the script's deadline: %s", s[:120])
	}
}

// Where ncclras is installed the script uses it, and keeps what it says
// when the listener is not NCCL's.
func TestScriptKeepsWhatNcclrasSays(t *testing.T) {
	dir := t.TempDir()
	fake := "#!/bin/sh\necho 'Unexpected response from NCCL: HTTP/1.1 400 Bad Request' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "ncclras"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, _ := exec.Command("sh", "-c", Script(ScriptOptions{RASDeadline: 10 * time.Second})).Output()
	s := ParseSample("here", out)
	if len(s.RAS) != 2 || s.RAS[0].Client != "ncclras" || s.RAS[0].Exit != 1 {
		t.Fatalf("%+v", s.RAS)
	}
	if p := s.RASProblem(); p != `ncclras exited with status 1: "Unexpected response from NCCL: HTTP/1.1 400 Bad Request\n"` {
		t.Fatalf("%q", p)
	}
}

// When the ranks behind are too many for NCCL to list them (40 of 64,
// not an outlier even in VERBOSE STATUS), triage says how many and at
// which count, and names no rank it was not told.
func TestRanksBehindNCCLDidNotName(t *testing.T) {
	counts := make([]int64, 64)
	for r := range counts {
		counts[r] = 900
		if r >= 24 {
			counts[r] = 899
		}
	}
	ras := ncclText(0x77, counts, func(r int) string { return fmt.Sprintf("10.2.0.%d", r) })
	s := ParseSample("n0", []byte(scriptOutput("n0", []int{100}, "text", ras)))
	d := Diagnose([]Sample{s}, []Sample{s}, 20*time.Second)
	want := "counts frozen for 20s but different: 40 ranks (RAS did not name them) launched AllReduce operations up to 899, others up to 900 (communicator 0x0000000000000077)"
	if d.Verdict != VerdictOutOfSync || d.FirstRank != -1 || len(d.Evidence) != 1 || d.Evidence[0] != want || d.Findings[0].Subject != "40 ranks" {
		t.Fatalf("%+v", d)
	}
}
