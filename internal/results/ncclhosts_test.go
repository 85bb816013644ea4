package results

import (
	"strings"
	"testing"
)

// The INFO lines of NCCL before 2.3 (no NCCL word in the prefix), as
// NVIDIA/nccl#187 quotes them, are read behind any tag; lines of other
// tools that print "] INFO " (a timestamp or rank in brackets) are not.
func TestPreTagInfo(t *testing.T) {
	for line, msg := range map[string]string{
		"learngpu060:3728589:3730445 [2] INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC":       "Ring 00 : 2[2] -> 3[3] via P2P/IPC",
		"[1,0]<stdout>:learngpu060:3728579:3730441 [0] INFO Ring 00 :    0   1   2   3": "Ring 00 :    0   1   2   3",
		"CY4SCH102501002:6213:6213 [4] INFO 3 -> 12 via NET/IB/0/GDRDMA":                "3 -> 12 via NET/IB/0/GDRDMA",
		"[2024-05-01 12:00:00] INFO Started server":                                     "",
		"[rank0] INFO starting": "",
		"INFO 11-01 23:16:33 distributed_gpu_executor.py:56] # GPU blocks: 185231":  "",
		"node1:11:12 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/IPC": "",
		"2024-05-01 12:00:00 [12] INFO worker ready":                                "",
	} {
		_, m := PreTagInfo([]byte(line))
		got := ""
		if m > 0 {
			got = line[m:]
		}
		if got != msg {
			t.Errorf("%q: message %q, want %q", line, got, msg)
		}
	}
}

// The ranks and GPUs of P2P and SHM lines, per host: a second rank on a
// GPU is a clash only where the host names two GPUs or more and no rank
// sits on two.
func TestHostClash(t *testing.T) {
	obs := func(lines ...string) *NCCLLog {
		var l NCCLLog
		for _, s := range lines {
			l.Observe([]byte(s))
		}
		return &l
	}
	l := obs(
		"learngpu060:3728589:3730445 [2] INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC",
		"learngpu060:3728593:3730444 [6] INFO Ring 00 : 6[6] -> 10[2] via P2P/IPC",
	)
	l.Finish()
	c := l.HostClash()
	if c == nil || c.Host != "learngpu060" || c.Ranks != [2]int{2, 10} || c.GPU != "2" || c.Line != "Ring 00 : 6[6] -> 10[2] via P2P/IPC" {
		t.Fatalf("clash %+v", c)
	}
	if n := l.Transports["P2P/IPC"]; n != 2 {
		t.Errorf("P2P/IPC %d, want 2", n)
	}
	for what, l := range map[string]*NCCLLog{
		"two hosts": obs("a:1:1 [2] NCCL INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC", "b:1:1 [6] NCCL INFO Ring 00 : 6[6] -> 10[2] via P2P/IPC"),
		"NET":       obs("a:1:1 [2] NCCL INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC", "a:1:1 [6] NCCL INFO Ring 00 : 6[6] -> 10[2] [send] via NET/IB/0"),
		"one GPU":   obs("a:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] via P2P/IPC", "a:1:1 [0] NCCL INFO Channel 00 : 1[0] -> 2[0] via P2P/IPC"),
		"remapped":  obs("a:1:1 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via P2P/IPC", "a:1:1 [3] NCCL INFO Channel 00 : 3[3] -> 2[2] via P2P/IPC", "a:1:1 [3] NCCL INFO Channel 00 : 0[3] -> 1[2] via P2P/IPC"),
		// world ranks 8 and 9 and a communicator of their own GPUs, ranks 0
		// and 1, printed by the same two processes
		"two communicators": obs("a:7:7 [0] NCCL INFO Channel 00/0 : 8[1b000] -> 9[1c000] via P2P/IPC", "a:8:8 [1] NCCL INFO Channel 00/0 : 9[1c000] -> 8[1b000] via P2P/IPC",
			"a:7:9 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/IPC"),
	} {
		if c := l.HostClash(); c != nil {
			t.Errorf("%s: clash %+v", what, c)
		}
	}
}

// preTagLog is the ring block of NVIDIA/nccl#187 (description by
// ngoyal2707, 2019-03-04): NCCL INFO lines without the NCCL word, ranks of
// two machines NCCL took for one host.
var preTagLog = []byte(`learngpu060:3728579:3730441 [0] INFO Ring 00 :    0   1   2   3   7   4   5   6  10   8   9  11  15  12  13  14  18  16  19  17
learngpu060:3728589:3730445 [2] INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC
learngpu060:3728591:3730447 [4] INFO Ring 00 : 4[4] -> 5[5] via P2P/IPC
learngpu060:3728580:3730448 [1] INFO Ring 00 : 1[1] -> 2[2] via P2P/IPC
learngpu060:3728590:3730442 [3] INFO Ring 00 : 3[3] -> 7[7] via P2P/IPC
learngpu060:3728594:3730443 [7] INFO Ring 00 : 7[7] -> 4[4] via P2P/IPC
learngpu060:3728593:3730444 [6] INFO Ring 00 : 6[6] -> 10[2] via P2P/IPC
`)

// Headers with nothing but comment lines between them are stacked; a
// device line, a table or any other line between them ends the run.
func TestStackedHeaders(t *testing.T) {
	const h = "# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
	for in, want := range map[string]int{
		h + h:     1,
		h + h + h: 2,
		h:         0,
		h + "#  Rank  0 Group  0 Pid    798 on       hw14 device  0 [0x0f] NVIDIA H800\n" + h: 0,
		h + "hw14: Test CUDA failure common.cu:892 'out of memory'\n" + h:                     0,
	} {
		o, err := ParseNCCLTests(strings.NewReader(in))
		if err != nil && want > 0 {
			t.Fatal(err)
		}
		if o.Launch.StackedHeaders != want {
			t.Errorf("%q: %d stacked, want %d", in, o.Launch.StackedHeaders, want)
		}
	}
}

// Connection messages pasted without NCCL's opening are read with the
// rank that printed them; other lines with "via" or arrows are not.
func TestBareConnection(t *testing.T) {
	for line, want := range map[string][2]int{
		"9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA":         {0, 9},
		"9[1a000] -> 2[6b000] [receive] via NET/IB/1":             {0, 2},
		"  Channel 00/0 : 0[0] -> 1[0] via P2P/IPC":               {2, 0},
		"Channel 03 : 3[3] -> 0[0] [receive] via NET/Socket/0":    {0, 0},
		"traffic goes 1[2] -> 3[4] via the switch":                {-1, -1},
		"2 -> 3 via P2P/IPC":                                      {-1, -1},
		"data flows via NET/IB/0":                                 {-1, -1},
		"9[1a000] -> 2[6b000] [send] via ":                        {-1, -1},
		"Channel 00/0 : 0[0] -> 1[0] : via P2P/IPC":               {-1, -1},
		"x9[1a000] -> 2[6b000] via NET/IB/0":                      {-1, -1},
		"Channel 00/0 and many more words : 0[0] -> 1[0] via P2P": {-1, -1},
	} {
		m, p := BareConnection([]byte(line))
		if want[0] >= 0 {
			want[0] = len(line) - len(strings.TrimLeft(line, " "))
		}
		if m != want[0] || m >= 0 && p != want[1] {
			t.Errorf("%q: %d %d, want %v", line, m, p, want)
		}
	}
}
