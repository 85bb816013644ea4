package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// ibOffJob is an NCCL_DEBUG=INFO startup with RDMA turned off by
// NCCL_IB_DISABLE=1 (the shape of a real V100 pair's log, Lightning issue
// 4420): every host in hosts runs ranks ranks of one communicator, rank i
// on hosts[i*len(hosts)/ranks], and each rank's ring channel to the next
// goes via P2P on its own host and via NET/Socket to another.
func ibOffJob(hosts []string, ranks int) []string {
	hostOf := func(r int) string { return hosts[r*len(hosts)/ranks] }
	h0 := hostOf(0)
	lines := []string{
		h0 + ":98188:98188 [0] NCCL INFO Bootstrap : Using ib0:172.19.146.21<0>",
		h0 + ":98188:98188 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
		h0 + ":98188:98188 [0] NCCL INFO NET/Socket : Using [0]ib0:172.19.146.21<0>",
		h0 + ":98188:98188 [0] NCCL INFO Using network Socket",
		"NCCL version 2.12.12+cuda11.7",
	}
	ring := make([]string, ranks)
	for r := range ranks {
		ring[r] = fmt.Sprint(r)
	}
	for r := range ranks {
		next := (r + 1) % ranks
		via := "P2P/direct pointer"
		if hostOf(next) != hostOf(r) {
			via = "NET/Socket/0"
		}
		lines = append(lines,
			fmt.Sprintf("%s:9818%d:98759 [%d] NCCL INFO Channel 00/02 :    %s", hostOf(r), r, r, strings.Join(ring, "   ")),
			fmt.Sprintf("%s:9818%d:98759 [%d] NCCL INFO Channel 00 : %d[18000] -> %d[af000] via %s", hostOf(r), r, r, r, next, via))
	}
	return lines
}

// A job whose lines show one host and no channel via NET uses no network:
// NCCL's choice of the socket network is a note, not a failure, with any
// prefix and rank count; the same lines with a second host fail.
func TestSocketNetworkOnOneHostIsANote(t *testing.T) {
	r := rand.New(rand.NewSource(229))
	for _, pre := range causePrefixes(r) {
		for _, ranks := range []int{2, 3, 8} {
			host := fmt.Sprintf("node%d", r.Intn(100))
			a := analyseText(prefixed(pre, ibOffJob([]string{host}, ranks)))
			if hasFlag(a, "nccl.net-socket") || alarm(a) {
				t.Errorf("one host, %d ranks, behind %q: %s", ranks, pre, flagIDs(a))
			}
			if !strings.Contains(strings.Join(a.Notes, "\n"), "NCCL chose the socket network") {
				t.Errorf("one host, %d ranks, behind %q: no note on the socket network: %q", ranks, pre, a.Notes)
			}
			two := analyseText(prefixed(pre, ibOffJob([]string{host, host + "b"}, ranks)))
			if firstFail(two) != "nccl.net-socket" {
				t.Errorf("two hosts, %d ranks, behind %q: first fail %q (%s)", ranks, pre, firstFail(two), flagIDs(two))
			}
		}
	}
}
