package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/testrig"
	"github.com/sparkrig/sparkrig/internal/triage"
)

// rasStandIn serves, on 127.0.0.1:28028 inside a rig host, a stand-in of
// NCCL's RAS service replaying recorded sessions (internal/triage/testdata,
// recorded on an H100 with NCCL 2.28.9): the first recording to the first
// sample's two connections (JSON, then text), the second to the rest.
func rasStandIn(t testing.TB, h *testrig.Host, first, second string) {
	t.Helper()
	read := func(name string) triage.Replay {
		b, err := os.ReadFile("../triage/testdata/ras/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		return triage.ReadRecording(b)
	}
	r1, r2 := read(first), read(second)
	l, err := h.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", triage.RASPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			rec := r2
			if n.Add(1) <= 2 {
				rec = r1
			}
			go triage.ServeRecording(c, rec)
		}
	}()
}

func rigTriage(t testing.TB, r *testrig.Rig, extra ...string) (int, *report.Report, string) {
	t.Helper()
	args := append([]string{"triage", "--format", "json", "--ssh-config", r.SSHConfig, "--host-timeout", "60s",
		"--hosts", strings.Join(r.Names(), ",")}, extra...)
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Triage == nil {
		t.Fatalf("exit %d, no triage report: %v\nstdout: %s\nstderr: %s", code, err, out.String(), errb.String())
	}
	return code, &rep, errb.String()
}

func bareRig(t testing.TB, n int) *testrig.Rig {
	var cfg testrig.Config
	for i := range n {
		cfg.Hosts = append(cfg.Hosts, testrig.HostSpec{Name: fmt.Sprintf("gpu-%d", i+1)})
	}
	return testrig.New(t, cfg)
}

// TestRigTriage: three nodes over SSH, the job's RAS service answering on
// gpu-2 only (a stand-in replaying recorded sessions): triage names the
// failing rank and the node whose RAS answered (the recorded ranks ran on
// one machine, 127.0.0.1) for a hung host thread, a stopped rank and a
// killed one, and calls a healthy job progressing.
func TestRigTriage(t *testing.T) {
	t.Parallel()
	r := bareRig(t, 3)
	for _, tc := range []struct {
		first, second string
		verdict       string
		rank, code    int
		evidence      string
	}{
		{"healthy-1", "healthy-2", "progressing", -1, ExitOK, "operation counts moved in 1s (rank 0: 60→460, rank 1: 60→460, rank 2: 60→460)"},
		{"hung-1", "hung-2", "out-of-sync", 2, ExitCritical, "counts frozen for 1s but different: rank 2 (pid 663 on gpu-2) launched AllReduce operations up to 100, others up to 120 (communicator 0x996598793777fcd4)"},
		{"healthy-2", "stopped-2", "rank-missing", 2, ExitCritical, "rank 2 (pid 497 on gpu-2) is missing from RAS's answer"},
		{"killed-1", "killed-2", "rank-missing", 2, ExitCritical, "rank 2 (pid 497 on gpu-2) is missing from RAS's answer"},
	} {
		t.Run(tc.second, func(t *testing.T) {
			rasStandIn(t, r.Host("gpu-2"), tc.first, tc.second)
			start := time.Now()
			code, rep, errOut := rigTriage(t, r, "--interval", "1s")
			t.Logf("triage of 3 nodes, samples 1 s apart: %s %s", time.Since(start).Round(10*time.Millisecond), errOut)
			tr := rep.Triage
			if code != tc.code || tr.Verdict != tc.verdict || tr.FirstRank != tc.rank || len(tr.Evidence) == 0 || tr.Evidence[0] != tc.evidence {
				t.Fatalf("exit %d, %s, rank %d, evidence %q", code, tr.Verdict, tr.FirstRank, tr.Evidence)
			}
			if tc.rank >= 0 && tr.FirstNode != "gpu-2" {
				t.Errorf("first node %q", tr.FirstNode)
			}
			if tr.NCCLVersion != "2.28.9" || len(tr.Nodes) != 3 || tr.Nodes[1].RAS != "protocol json" || tr.Nodes[0].RAS != "no answer" {
				t.Errorf("%+v", tr)
			}
		})
	}
}

// BenchmarkRigTriage is the wall time of `sparkrig triage` over 32 rig
// hosts (real sshd each), every one answering RAS through a stand-in,
// with the two samples 1 s apart: the goal is 10 s. One run with one
// sample warms the fresh rig up first.
func BenchmarkRigTriage(b *testing.B) {
	r := bareRig(b, 32)
	for _, h := range r.Hosts {
		rasStandIn(b, h, "hung-1", "hung-2")
	}
	run := func(iv string) int {
		args := []string{"triage", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","), "--interval", iv}
		var out, errb bytes.Buffer
		start := time.Now()
		code := Main(args, strings.NewReader(""), &out, &errb)
		b.Logf("interval %s: exit %d in %s", iv, code, time.Since(start).Round(10*time.Millisecond))
		return code
	}
	run("0s") // the fresh rig's first connections: sshd and the page cache warm up
	b.ResetTimer()
	for b.Loop() {
		if code := run("1s"); code != ExitCritical {
			b.Fatalf("exit %d", code)
		}
	}
}
