package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// freeBasePort is a BasePort whose rendezvous port is free now.
func freeBasePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port - RendezvousPortOffset
}

type traced struct {
	Tool string            `json:"tool"`
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
}

// traces reads what the stand-ins recorded, in rank order.
func traces(t *testing.T, dir string) []traced {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []traced
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tr traced
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	sort.Slice(out, func(i, j int) bool { return argAfter(out[i].Args, "--rank") < argAfter(out[j].Args, "--rank") })
	return out
}

// TestNativeNCCLPlan: without nccl-tests, a healthy pair gets one step per
// collective with one rank per node, rank 0 first and judged, every rank
// meeting at spark-1's bootstrap address and getting the NCCL environment
// mpirun would have exported (and none of the MPI one).
func TestNativeNCCLPlan(t *testing.T) {
	p, err := NewPlan(healthyPair(), Options{Kinds: []string{KindNCCL}, NativeNCCL: "/tmp/run/sparkrig", RunDir: "/tmp/run",
		Collectives: []string{"all_reduce"}, MinBytes: 1 << 20, MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	env := []Var{{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f1np1"}, {Name: "NCCL_IB_HCA", Value: "rocep1s0f1,roceP2p1s0f1"},
		{Name: "NCCL_DEBUG", Value: "INFO"}, {Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"}}
	rank := func(i string) []string {
		return []string{"/tmp/run/sparkrig", "bench", "gpu", "--mem-fraction", "0.5", "collective", "--op", "all_reduce",
			"-b", "1M", "-e", "64M", "-f", "2", "--nranks", "2", "--rank", i, "--rendezvous", "192.168.100.10:18715"}
	}
	want := []Step{{ID: "nccl/all_reduce", Kind: KindNCCL, Tool: "sparkrig-collective", Collective: "all_reduce", MaxBytes: 64 << 20,
		Timeout: NCCLTimeout, Clients: []Cmd{
			{Host: "spark-1", Role: RoleClient, Env: env, Argv: append(rank("0"), "--json-file", "/tmp/run/coll-all_reduce.json"),
				Fetch: []string{"/tmp/run/coll-all_reduce.json"}},
			{Host: "spark-2", Role: RolePeer, Env: env, Argv: rank("1")},
		}}}
	if d := cmp.Diff(want, p.Steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	// The plan names the cluster's whole environment (the one fix writes);
	// the ranks, with no MPI, get its NCCL settings.
	if d := cmp.Diff(env, ncclOnly(p.NCCLEnv)); d != "" {
		t.Errorf("NCCL environment (-want +got):\n%s", d)
	}
	if !slices.ContainsFunc(p.NCCLEnv, func(v Var) bool { return v.Name == "GLOO_SOCKET_IFNAME" }) {
		t.Errorf("the plan's environment lacks the cluster's Gloo setting: %v", p.NCCLEnv)
	}
}

// TestNativeNCCLTwoGPUNodes: a node with more GPUs than the one rank it
// gets says so, and the memory cap counts one rank per node.
func TestNativeNCCLTwoGPUNodes(t *testing.T) {
	nodes := healthyPair()
	nodes[1].GPUs = append(nodes[1].GPUs, nodes[1].GPUs[0])
	p, err := NewPlan(nodes, Options{Kinds: []string{KindNCCL}, NativeNCCL: "sparkrig", Collectives: []string{"all_gather"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range p.Notes {
		if n.ID == "bench.native-one-gpu" {
			got = append(got, n.Host+": "+n.Detail)
		}
	}
	want := []string{"spark-2: sparkrig's own collectives run one rank per node: spark-2 has 2 GPUs and rank 1 uses GPU 1 (nccl-tests through mpirun would use all of them)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
	for _, n := range p.Notes {
		if n.ID == "bench.rendezvous-host" {
			t.Errorf("rendezvous note with a bootstrap address known: %v", n)
		}
	}
	if n := argAfter(p.Steps[0].Clients[1].Argv, "--nranks"); n != "2" {
		t.Errorf("--nranks %s, want 2", n)
	}
}

// TestNativeNCCLWithStandins runs both collectives of a healthy pair
// through stand-ins for sparkrig's own collectives: the ranks meet at the
// planned rendezvous port, rank 0's JSON is fetched and judged like
// nccl-tests' output, and nothing is left running.
func TestNativeNCCLWithStandins(t *testing.T) {
	traceDir := t.TempDir()
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_TRACE": traceDir}, "sparkrig")
	base := freeBasePort(t)
	runDir := t.TempDir()
	s := session(t, healthyPair(), Options{Kinds: []string{KindNCCL}, NativeNCCL: bin + "/sparkrig", RunDir: runDir,
		BasePort: base, MinBytes: 1 << 20, MaxBytes: 64 << 20})
	rec := s.Run(context.Background())
	got := judged(rec)
	// The recording is of two processes on one H200 host, hence "1 node".
	want := map[string]string{
		"nccl/all_gather all_gather, 2 ranks on 1 node busbw plateau": "220.8694524576298 GB/s ok",
		"nccl/all_reduce all_reduce, 2 ranks on 1 node busbw peak":    "267.8556556477848 GB/s no-expectation",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	for _, st := range rec.Bench.Steps {
		if st.Status != StatusOK || len(st.Commands) != 2 || st.Parsed.NCCL == nil {
			t.Fatalf("%s: %s %s, %d commands", st.ID, st.Status, st.Error, len(st.Commands))
		}
		if st.Commands[1].Stdout != "" || st.Commands[1].Role != RolePeer {
			t.Errorf("%s: peer %s printed %q", st.ID, st.Commands[1].Role, st.Commands[1].Stdout)
		}
	}
	trs := traces(t, traceDir)
	if len(trs) != 4 {
		t.Fatalf("%d processes ran, want 4 (two ranks, two collectives)", len(trs))
	}
	port := strconv.Itoa(base + RendezvousPortOffset)
	for _, tr := range trs {
		if got := argAfter(tr.Args, "--rendezvous"); got != "192.168.100.10:"+port {
			t.Errorf("rank %s met at %s", argAfter(tr.Args, "--rank"), got)
		}
		wantEnv := map[string]string{"NCCL_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1",
			"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}
		if d := cmp.Diff(wantEnv, tr.Env); d != "" {
			t.Errorf("rank %s environment (-want +got):\n%s", argAfter(tr.Args, "--rank"), d)
		}
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, base+RendezvousPortOffset) }); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(runDir, "coll-all_reduce.json")); err == nil {
		t.Errorf("rank 0's JSON was not removed after it was read")
	}
}

// TestNativeNCCLPeerFails: a rank that dies before the rendezvous fails
// the step at once (rank 0 would wait for it for minutes), and rank 0 is
// stopped.
func TestNativeNCCLPeerFails(t *testing.T) {
	bin := standins(t, map[string]string{"SPARKRIG_STANDIN_PEER_FAIL": "1"}, "sparkrig")
	base := freeBasePort(t)
	s := session(t, healthyPair(), Options{Kinds: []string{KindNCCL}, NativeNCCL: bin + "/sparkrig", RunDir: t.TempDir(),
		BasePort: base, Collectives: []string{"all_reduce"}, MinBytes: 1 << 20, MaxBytes: 64 << 20})
	begin := time.Now()
	rec := s.Run(context.Background())
	if took := time.Since(begin); took > 30*time.Second {
		t.Errorf("the step took %s to notice the dead rank", took)
	}
	st := rec.Bench.Steps[0]
	wantErr := bin + "/sparkrig on spark-2: exit status 3: sparkrig: bench gpu: no CUDA driver found"
	if st.Status != StatusFailed || st.Error != wantErr {
		t.Errorf("status %s, error %q; want failed, %q", st.Status, st.Error, wantErr)
	}
	if left := eventually(30*time.Second, func() []string { return leftovers(t, bin, base+RendezvousPortOffset) }); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if !strings.Contains(string(rec.Status), "unknown") {
		t.Errorf("status %s, want unknown", rec.Status)
	}
}

// TestNativeNCCLRecordedStep judges the all_reduce step a real run gave on
// two H200s (two "hosts", both the machine, one GPU each): rank 0's fetched
// JSON is the result, with both ranks' devices, and the peer's output
// (NCCL's log only) is not judged.
func TestNativeNCCLRecordedStep(t *testing.T) {
	b, err := os.ReadFile("testdata/gpu/sparkrig-collective.all_reduce.2rank-local.h200x2.step.json")
	if err != nil {
		t.Fatal(err)
	}
	var s StepResult
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	set, err := expect.Default()
	if err != nil {
		t.Fatal(err)
	}
	p, a := Judge(s, Context{Platform: "h200", Topology: "single-node"}, set)
	if p.NCCL == nil || len(p.NCCL.Tables) != 1 {
		t.Fatalf("parsed %+v", p.NCCL)
	}
	tb := p.NCCL.Tables[0]
	var devs []string
	for _, d := range tb.Devices {
		devs = append(devs, fmt.Sprintf("rank %d pid %d device %d %s", d.Rank, d.PID, d.Device, d.PCIBus))
	}
	wantDevs := []string{"rank 0 pid 1199 device 0 0000:00:06.0", "rank 1 pid 1200 device 1 0000:00:07.0"}
	if d := cmp.Diff(wantDevs, devs); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
	last := tb.Rows[len(tb.Rows)-1]
	if tb.Ranks != 2 || tb.Nodes != 1 || len(tb.Rows) != 9 || last.SizeBytes != 8<<30 || last.IP.BusBWGBs == nil || fmt.Sprintf("%.2f", *last.IP.BusBWGBs) != "345.69" {
		t.Errorf("table: %d ranks, %d nodes, %d rows, last %d B %v GB/s", tb.Ranks, tb.Nodes, len(tb.Rows), last.SizeBytes, last.IP.BusBWGBs)
	}
	var items []string
	for _, it := range a.Items {
		items = append(items, fmt.Sprintf("%s %s %.2f %s", it.Subject, it.Metric, it.Value, it.Unit))
	}
	if d := cmp.Diff([]string{"all_reduce, 2 ranks on 1 node busbw peak 345.69 GB/s"}, items); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	want := []string{"what this log shows: NCCL 2.28.3+cuda13.0; network Socket (TCP) on eth0:192.0.2.2<0>; 24 channels; connections P2P 14; 2 ranks on 1 node; hosts vm; one node (NCCL reports nNodes 1): no network carries collective data"}
	if d := cmp.Diff(want, a.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

// TestNativeNCCLRecheckLowersEveryRank: less free memory when the step
// starts lowers -e on every rank, which must all run the same sweep.
func TestNativeNCCLRecheckLowersEveryRank(t *testing.T) {
	nodes := healthyPair()
	p, err := NewPlan(nodes, Options{Kinds: []string{KindNCCL}, NativeNCCL: "sparkrig", Collectives: []string{"all_gather"},
		MinBytes: 32 << 20, MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	four := uint64(4 << 30)
	st, note, why := Recheck(p.Steps[0], nodes, []Live{{}, {AvailableBytes: &four}}, 0.5, false)
	// 50 % of 4 GiB is 2 GiB; all_gather on 2 ranks takes 2.5× its size.
	var got []string
	for _, c := range st.Clients {
		got = append(got, c.Role+" -e "+argAfter(c.Argv, "-e"))
	}
	if d := cmp.Diff([]string{"client -e 512M", "peer -e 512M"}, got); d != "" || note == nil || why != "" || st.MaxBytes != 512<<20 {
		t.Errorf("ranks (-want +got):\n%s\nnote %v, why %q, max %d", d, note, why, st.MaxBytes)
	}
	if argAfter(p.Steps[0].Clients[1].Argv, "-e") != "1G" {
		t.Errorf("the plan's step was changed in place")
	}
}

// TestNativeNCCLRendezvousByName: with no bootstrap interface known, the
// ranks meet at the first host as named, and the plan says so.
func TestNativeNCCLRendezvousByName(t *testing.T) {
	nodes := healthyPair()
	for _, n := range nodes {
		n.Host = "admin@" + n.Host + ":2222"
		n.NetDevs = nil
	}
	p, err := NewPlan(nodes, Options{Kinds: []string{KindNCCL}, NativeNCCL: "sparkrig", Collectives: []string{"all_reduce"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := argAfter(p.Steps[0].Clients[1].Argv, "--rendezvous"); got != "spark-1:18715" {
		t.Errorf("rendezvous %s, want spark-1:18715", got)
	}
	var got []Note
	for _, n := range p.Notes {
		if n.ID == "bench.rendezvous-host" {
			got = append(got, n)
		}
	}
	want := []Note{{ID: "bench.rendezvous-host", Host: "admin@spark-1:2222", Fix: "pass --bootstrap-if NAME",
		Detail: "the ranks meet at spark-1 as named here: no bootstrap interface address is known on admin@spark-1:2222, and the other nodes must resolve that name"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}
