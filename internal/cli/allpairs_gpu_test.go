package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// twoGPUStandIn runs every command on this machine, host "gpu-N" on GPU N
// alone (CUDA_VISIBLE_DEVICES), with NCCL's shared-memory and peer-to-peer
// transports off: two GPUs of one machine stand in for two nodes, and a
// pair's NCCL traffic goes through sockets as it would between nodes.
type twoGPUStandIn struct{}

func (twoGPUStandIn) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	gpu := strings.TrimPrefix(host, "gpu-")
	return runner.Local{}.Exec(ctx, host, "export CUDA_VISIBLE_DEVICES="+gpu+
		" NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0; "+cmdline, stdin, stdout, stderr)
}

func (twoGPUStandIn) String() string { return "local, one GPU a host" }

// gpuCount is how many GPUs nvidia-smi lists (0 without it).
func gpuCount() int {
	out, err := exec.Command("nvidia-smi", "-L").Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), "GPU ")
}

// TestNCCLPairOnTwoGPUsStandIn runs qualify's rounds for real, through
// bench's executor, on a machine with two GPUs standing in for two nodes
// (twoGPUStandIn), each with its own loopback address: the TCP probe in
// both directions, then the pair's 2-rank NCCL test. It is skipped
// without two GPUs.
func TestNCCLPairOnTwoGPUsStandIn(t *testing.T) {
	if gpuCount() < 2 {
		t.Skip("needs two NVIDIA GPUs (nvidia-smi -L)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sparkrig") // the test binary runs Main under this name
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	hosts := []string{"gpu-0", "gpu-1"}
	pair := allpairs.Pair{A: 0, B: 1}
	runDir := t.TempDir()
	m := &allpairs.Remote{
		X:     &bench.Executor{T: twoGPUStandIn{}, RunDir: runDir},
		Hosts: hosts, Probe: bin, Port: port, Streams: 4, Pings: 1,
		// each stand-in node its own loopback address
		Addr:  func(node, peer int) string { return "127.0.0." + strconv.Itoa(node+1) },
		Rails: map[allpairs.Pair]bench.Rail{pair: {A: bench.Endpoint{Host: "gpu-0", NetDev: "lo", GIDIndex: -1}, B: bench.Endpoint{Host: "gpu-1", NetDev: "lo", GIDIndex: -1}}},
		NCCL:  allpairs.NCCLTest{MaxBytes: allpairs.DefaultNCCLBytes, Port: port + 1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := m.Servers(ctx, runDir); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	res, err := allpairs.Run(ctx, m, hosts, allpairs.AllPairs, time.Second, allpairs.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	coll, err := allpairs.RunCollectives(ctx, m, hosts, allpairs.CollectiveRounds(allpairs.AllPairs, 2, func(allpairs.Pair) bool { return true }), allpairs.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	ap, _ := res.Report(allpairs.AllPairs, allpairs.ToolTCP, "")
	ap.NCCL, _ = coll.Report(hosts, nil)
	var text bytes.Buffer
	writeRendered(&Env{Stdout: &text, Getenv: func(string) string { return "" }}, "", "text", &report.Report{AllPairs: ap})
	t.Logf("\n%s", text.String())
	r := coll.Results[0]
	// one pair has no other to be judged against: measured, not judged
	if r.Err != "" || r.Bytes != allpairs.DefaultNCCLBytes || r.BusGBs <= 0 || r.NCCLVersion == "" || coll.Judgement.Pass[0] || coll.Judgement.Unjudged == "" {
		t.Fatalf("result %+v, judged %+v", r, coll.Judgement)
	}
	if !strings.Contains(text.String(), "gpu-0 ↔ gpu-1: "+strconv.FormatFloat(r.BusGBs, 'f', 2, 64)+" GB/s at 256M, NCCL "+r.NCCLVersion) {
		t.Errorf("the text does not hold the pair's result")
	}
}
