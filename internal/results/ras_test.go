package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseRASMismatch(t *testing.T) {
	r, err := ParseRAS(bytes.NewReader(verbatim(t, "ras/01_status_mismatch.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "2.26.2" || r.Nodes != 4 || r.Processes != 32 || r.GPUs != 32 || len(r.Groups) != 1 {
		t.Fatalf("%+v", r)
	}
	if g := r.Groups[0]; g != (RASGroup{Group: 0, Comms: 1, NodesPerComm: 4, RanksPerNode: "8", RanksPerComm: 32, RanksInGroup: 32, Status: "RUNNING", Errors: "MISMATCH"}) {
		t.Errorf("group %+v", g)
	}
	if len(r.Findings) != 1 || r.Findings[0].Severity != "warning" || r.Findings[0].Kind != "MISMATCH" || r.Findings[0].Comm != "#0-0 (fa93daea854b060b)" ||
		len(r.Findings[0].Details) != 5 || r.Findings[0].Details[1] != "30 ranks have launched up to operation 640" || r.OK() {
		t.Errorf("findings %+v", r.Findings)
	}
}

func TestParseRASIncomplete(t *testing.T) {
	r, err := ParseRAS(bytes.NewReader(verbatim(t, "ras/02_status_incomplete_outlier.txt")))
	if err != nil {
		t.Fatal(err)
	}
	// the second summary table (3 columns) holds the totals
	if r.Version != "2.27.3" || r.Nodes != 2 || r.Processes != 10 || r.GPUs != 10 || len(r.Groups) != 3 || r.Groups[1].Comms != 4 || r.Groups[2].Status != "NOCOMM" {
		t.Fatalf("%+v", r)
	}
	var kinds []string
	for _, f := range r.Findings {
		kinds = append(kinds, f.Severity+":"+f.Kind)
	}
	if strings.Join(kinds, ",") != "error:INCOMPLETE,error:INCOMPLETE" || r.Findings[0].Details[1] != "Process 60004 on node 10.4.109.13 managing GPU 0" {
		t.Errorf("%v %+v", kinds, r.Findings)
	}
	r, _ = ParseRAS(bytes.NewReader(verbatim(t, "ras/03_doc_incomplete_timeout.txt")))
	if len(r.Groups) != 1 || r.Groups[0].RanksPerNode != "7-8" || len(r.Findings) != 3 || r.Findings[2].Severity != "warning" || r.Findings[2].Kind != "TIMEOUT" {
		t.Errorf("%+v", r)
	}
}

func TestParseRASJSON(t *testing.T) {
	r, err := ParseRASJSON(verbatim(t, "ras/04_doc_json_missing_rank.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "2.29.1" || r.Communicators != 1 || r.Nodes != 1 || len(r.Findings) != 1 || r.Findings[0].Kind != "INCOMPLETE" || r.Findings[0].Comm != "(0xae94423cfbb2ef4a)" {
		t.Errorf("%+v", r)
	}
	if _, err := ParseRASJSON([]byte(`{"communicators": [`)); err == nil {
		t.Error("truncated JSON accepted")
	}
}

// A real two-rank hang (one rank per H100): NCCL lists the rank ahead
// first; the rank behind is the one with the lower count.
func TestParseRASRealTwoRankStall(t *testing.T) {
	r, err := ParseRASAnswer(verbatim(t, "ras/05_gpu_stall_rank0_verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != "text" || r.Version != "2.28.9" || len(r.Comms) != 1 || r.Comms[0].Hash != "0xaa999e2d8c032220" {
		t.Fatalf("%+v", r)
	}
	c := r.Comms[0]
	if len(c.Ops) != 1 || c.Ops[0].Op != "AllReduce" || len(c.Ops[0].Groups) != 2 || c.Ops[0].Groups[0].Launched != 460 || c.Ops[0].Groups[0].Ranks[0] != 1 {
		t.Fatalf("%+v", c.Ops)
	}
	bs := r.Behind()
	if len(bs) != 1 || bs[0].Launched != 454 || bs[0].Ahead != 460 || !bs[0].Named() ||
		!reflect.DeepEqual(bs[0].Ranks[0], RASRank{Rank: 0, Host: "192.0.2.2", PID: 791, GPU: 0, NVMLGPU: 0}) {
		t.Fatalf("%+v", bs)
	}
}

// NCCL 2.28.9's JSON of a job with one rank stopped: the comma it leaves
// out is mended, the missing rank is named with its pid and node.
func TestParseRASRealJSONStopped(t *testing.T) {
	b := verbatim(t, "ras/06_gpu_stop_rank0_json_2289.txt")
	if json.Valid(b) {
		t.Fatal("NCCL 2.28.9 wrote this answer without a comma")
	}
	r, err := ParseRASAnswer(b)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Comms[0]
	if r.Format != "json" || r.Timestamp != "2026-11-28 00:17:25" || c.Hash != "0xe909ccb6adcf956c" || c.Size != 2 || !c.Complete ||
		len(c.Ranks) != 1 || c.Ranks[0].Counts["AllReduce"] != 380 || c.Ranks[0].PID != 1004 {
		t.Fatalf("%+v", r)
	}
	if len(c.Missing) != 1 || c.Missing[0].Rank != 0 || c.Missing[0].PID != 1003 || c.Missing[0].Host != "192.0.2.2" || !c.Missing[0].Unresponsive {
		t.Fatalf("%+v", c.Missing)
	}
	if len(r.Behind()) != 0 {
		t.Fatalf("one answering rank is behind nobody: %+v", r.Behind())
	}
}

func FuzzParseRAS(f *testing.F) {
	seedAll(f, "ras")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _ := ParseRAS(bytes.NewReader(b))
		if len(r.Groups) > maxListed || len(r.Findings) > maxListed {
			t.Fatalf("%d groups %d findings", len(r.Groups), len(r.Findings))
		}
		for _, f := range r.Findings {
			if len(f.Details) > 8 {
				t.Fatalf("%d details", len(f.Details))
			}
		}
		j, _ := ParseRASJSON(b)
		if len(j.Findings) > maxListed {
			t.Fatalf("%d findings", len(j.Findings))
		}
		for _, x := range []NCCLRAS{r, j} {
			if len(x.Comms) > maxRASComms {
				t.Fatalf("%d comms", len(x.Comms))
			}
			for _, bh := range x.Behind() {
				if bh.Launched > bh.Ahead || len(bh.Ranks) > bh.Count && bh.Count > 0 {
					t.Fatalf("%+v", bh)
				}
			}
		}
	})
}

// TestNCCLDiagLines reads NCCL's diagnostics lines in the form NCCL's
// troubleshooting guide documents ("<host>:<pid> NCCL DIAG [OK] …", NCCL >=
// 2.31); no public output of a run was found to copy, so the messages
// here are placeholders of that form, not NCCL's wording.
func TestNCCLDiagLines(t *testing.T) {
	var l NCCLLog
	for _, line := range []string{
		"=== RAS Diagnostics ===",
		"node1:4242 NCCL DIAG [OK] placeholder one",
		"node2:4343 NCCL DIAG [INFO] placeholder two",
		"node2:4343 NCCL DIAG unlevelled",
		"node1:4242:4250 [0] NCCL ATTN placeholder attention",
		"node1:4242:4250 [0] NCCL WARN placeholder: ranks run NCCL git revisions that differ",
	} {
		l.Observe([]byte(line))
	}
	if len(l.Diag) != 3 || l.Diag[0] != (NCCLDiag{Host: "node1", Level: "OK", Message: "placeholder one"}) || l.Diag[1].Level != "INFO" ||
		l.Diag[2].Level != "INFO" || l.DiagCounts["OK"] != 1 || l.DiagCounts["INFO"] != 2 {
		t.Errorf("%+v %v", l.Diag, l.DiagCounts)
	}
	if l.AttnCount != 1 || l.Attention[0] != "placeholder attention" || l.WarnCount != 1 || l.RevisionMismatch != "placeholder: ranks run NCCL git revisions that differ" ||
		strings.Join(l.Hosts, ",") != "node1" {
		t.Errorf("attn %d %q warn %d revision %q hosts %v", l.AttnCount, l.Attention, l.WarnCount, l.RevisionMismatch, l.Hosts)
	}
}

func TestParseIperf3TextParallel(t *testing.T) {
	r, how, err := ParseIperf3Text(bytes.NewReader(verbatim(t, "iperf3-text/01_parallel_sum.txt")))
	if err != nil || r.Role != "client" || r.Remote != "192.168.1.100" || r.Streams != 2 || r.Intervals != 4 || how.RateFrom != "intervals" ||
		r.MinIntervalGbps != 3.62 || r.MaxIntervalGbps != 3.71 || r.Protocol != "TCP" {
		t.Errorf("%+v %+v %v", r, how, err)
	}
}

func FuzzParseIperf3Text(f *testing.F) {
	seedAll(f, "iperf3-text")
	// SOURCE: https://github.com/esnet/iperf/issues/905 (server side of a UDP test, iperf 3.1.3)
	f.Add([]byte("[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams\n[  5]   0.00-1.00   sec  64.0 KBytes   524 Kbits/sec  2.111 ms  11/19 (58%)  \n[  5]   1.00-2.00   sec  0.00 Bytes  0.00 bits/sec  2.111 ms  0/0 (0%)     <<<<\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, how, _ := ParseIperf3Text(bytes.NewReader(b))
		if r.ReceivedGbps < 0 || r.Intervals < 0 || how.RateFrom == "" && r.ReceivedGbps != 0 ||
			how.DatagramBytes < 0 || how.UDPLost < 0 || how.UDPLost > how.UDPTotal || how.UDPEmptyIntervals < 0 ||
			how.UDPRecvLost < 0 || how.UDPRecvLost > how.UDPRecvTotal || (how.UDPOdd == nil) != (how.UDPOddLines == 0) {
			t.Fatalf("%+v %+v", r, how)
		}
		if o := how.UDPOdd; o != nil && (o.Total >= 0 && o.Lost <= o.Total && o.Lost >= -o.Total || o.Before < 0 || o.Intervals < 0 || len(o.Line) > 200) {
			t.Fatalf("a count that can be true kept as odd: %+v", o)
		}
		if how.LenFlag < 0 || how.UDPOutOfOrder < 0 || how.UDPStuck != nil && how.UDPStuck.Total != 1<<31-1 && how.UDPStuck.Total != 1<<32-1 {
			t.Fatalf("%+v", how)
		}
		if st := how.Stopped; st != nil && (st.Bytes <= 0 || st.Tolerance < 0 || st.Intervals < 1 || st.ZeroIntervals < 2) {
			t.Fatalf("stopped: %+v", st)
		}
	})
}
