package results

import (
	"slices"
	"strings"
	"testing"
)

// A test whose column header was printed and no row keeps its device
// lines' rank count and hosts (field case 127's NCCL 1 header: "Rank  0
// uses device  0", "bytes N type op"); a row under the header clears it.
func TestNoRowsAfterHeader(t *testing.T) {
	old := "# Using devices\n#   Rank  0 uses device  0 [0x05] Tesla M40 24GB\n#   Rank  1 uses device  1 [0x08] Tesla M40 24GB\n#\n#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
	o, err := ParseNCCLTests(strings.NewReader(old))
	if err != nil || o.Launch.NoRows == nil || o.Launch.NoRows.Ranks != 2 || !slices.Equal(o.Launch.NoRows.Hosts, []string{""}) {
		t.Fatalf("%+v %v", o.Launch.NoRows, err)
	}
	modern := "#  Rank  0 Group  0 Pid 3740409 on fengyun416 device  0 [0x01] NVIDIA RTX A6000\n#  Rank  1 Group  0 Pid 3164639 on    fengyun device  0 [0x01] NVIDIA RTX A6000\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	o, _ = ParseNCCLTests(strings.NewReader(modern))
	if nr := o.Launch.NoRows; nr == nil || nr.Ranks != 2 || !slices.Equal(nr.Hosts, []string{"fengyun416", "fengyun"}) {
		t.Fatalf("%+v", nr)
	}
	if !o.Launch.NoRows.Header {
		t.Error("header not seen")
	}
	// device lines and no column header: stopped during init
	o, _ = ParseNCCLTests(strings.NewReader(strings.Join(strings.Split(modern, "\n")[:2], "\n") + "\nfengyun: Test NCCL failure common.cu:777 'unhandled system error'\n"))
	if nr := o.Launch.NoRows; nr == nil || nr.Header || nr.Ranks != 2 {
		t.Fatalf("devices only: %+v", nr)
	}
	o, _ = ParseNCCLTests(strings.NewReader(modern + "        1048576        262144     float     sum      -1    30.12   34.81   60.92      0    29.98   34.97   61.20      0\n"))
	if o.Launch.NoRows != nil || len(o.Tables) != 1 {
		t.Fatalf("a row: %+v, %d tables", o.Launch.NoRows, len(o.Tables))
	}
}

// AfterInit counts the INFO lines after the last Init COMPLETE that are
// not connection lines, in each release's format.
func TestAfterInit(t *testing.T) {
	inits := []string{
		"h:1:1 [0] NCCL INFO comm 0x5600 rank 0 nranks 2 cudaDev 0 nvmlDev 0 - Init COMPLETE",
		"h:1:1 [0] NCCL INFO comm 0x5600 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 41000 commId 0x1 - Init COMPLETE",
		"h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x5600 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 41000 commId 0x1 - Init COMPLETE",
		"h:1:1 [0] NCCL INFO ncclCommSplit comm 0x5600 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 41000 parent 0x1 splitCount 1 color 0 key 0 - Init COMPLETE",
		"h:1:1 [0] NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x5600 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 41000 commId 0x1 - Init COMPLETE",
	}
	for _, init := range inits {
		var l NCCLLog
		for _, s := range []string{"h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", init,
			"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", "h:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1"} {
			l.Observe([]byte(s))
		}
		if n, other := l.AfterInit(); n != 1 || other != 0 {
			t.Errorf("%s: %d inits, %d other", init, n, other)
		}
		l.Observe([]byte("h:1:1 [0] NCCL INFO comm 0x5600 rank 0 nranks 2 cudaDev 0 busId 41000 - Destroy COMPLETE"))
		if _, other := l.AfterInit(); other != 1 {
			t.Errorf("%s then Destroy: %d other", init, other)
		}
	}
}
