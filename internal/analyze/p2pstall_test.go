package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// stallJob is one host's NCCL init for n ranks in one of NCCL's formats
// (2.4: "comm %p rank %d nranks %d cudaDev %d nvmlDev %d - Init COMPLETE";
// 2.18; 2.22 to 2.28 with the function name; 2.30 with "[Rank r]"), with
// P2P channel lines before Init COMPLETE (eager) or after it (NCCL 2.22
// and later connect at the first collective), or none.
func stallJob(r *rand.Rand, host string, n, format int, chans string, lazy bool) []string {
	var init, conn []string
	for k := range n {
		pre := fmt.Sprintf("%s:%d:%d [%d] NCCL INFO ", host, 4000+k, 4100+k, k)
		var msg string
		switch format {
		case 0:
			msg = fmt.Sprintf("comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d - Init COMPLETE", 0x5600+k, k, n, k, k)
		case 1:
			msg = fmt.Sprintf("comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x commId 0x737ce38e08817c77 - Init COMPLETE", 0x5600+k, k, n, k, k, 0x41000+k*0x10000)
		case 2:
			msg = fmt.Sprintf("ncclCommInitRank comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x commId 0x737ce38e08817c77 - Init COMPLETE", 0x5600+k, k, n, k, k, 0x41000+k*0x10000)
		default:
			msg = fmt.Sprintf("[Rank %d] ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x commId 0x737ce38e08817c77 - Init COMPLETE", k, 0x5600+k, k, n, k, k, 0x41000+k*0x10000)
		}
		init = append(init, pre+msg)
		if chans != "" {
			for c := range 1 + r.Intn(4) {
				conn = append(conn, fmt.Sprintf("%sChannel %02d/0 : %d[%d] -> %d[%d] via %s", pre, c, k, k, (k+1)%n, (k+1)%n, chans))
			}
		}
	}
	if chans != "" {
		conn = append(conn, fmt.Sprintf("%s:%d:%d [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1", host, 4000, 4100))
	}
	if lazy {
		return append(init, conn...)
	}
	return append(conn, init...)
}

// Any rank count, any NCCL format, any prefix, channels before or after
// init: a one-node log that stops after Init COMPLETE names the P2P stall
// (field cases 116 and 134); a row, a later INFO line, a WARN, a second
// host, a NET channel, P2P turned off, or one rank is not that.
func TestP2PStallAfterInitAnyRanksAnyPrefix(t *testing.T) {
	const id = "nccl.p2p-stall-after-init"
	r := rand.New(rand.NewSource(134))
	kinds := []string{"P2P/IPC", "P2P/CUMEM/read", "P2P/direct pointer", "SHM/direct/direct", ""}
	for _, pre := range causePrefixes(r) {
		for range 4 {
			n := 2 + r.Intn(15)
			format := r.Intn(4)
			host := fmt.Sprintf("gpu-box-%d", r.Intn(100))
			job := stallJob(r, host, n, format, kinds[r.Intn(len(kinds))], r.Intn(2) == 0)
			a := analyseText(prefixed(pre, job))
			if top := topCause(a); top != id {
				t.Fatalf("%d ranks, format %d, behind %q: first %q (%+v)\n%s", n, format, pre, top, a.Flags, prefixed(pre, job))
			}
			after := fmt.Sprintf("%s:4000:4100 [0] NCCL INFO comm 0x5600 rank 0 nranks %d cudaDev 0 busId 41000 - Destroy COMPLETE", host, n)
			warn := fmt.Sprintf("%s:4000:4100 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these two devices'", host)
			env := fmt.Sprintf("%s:4000:4000 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1", host)
			other := stallJob(r, host+"-b", n, format, "P2P/IPC", false)
			netc := fmt.Sprintf("%s:4000:4100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0", host)
			one := stallJob(r, host, 1, format, "", false)
			for name, lines := range map[string][]string{
				"a later INFO line":     append(append([]string{}, job...), after),
				"a WARN":                append(append([]string{}, job...), warn),
				"NCCL_P2P_DISABLE=1":    append([]string{env}, job...),
				"a second host":         append(append([]string{}, job...), other...),
				"a NET channel":         append([]string{netc}, job...),
				"one rank":              one,
				"a result row after it": append(append([]string{}, job...), "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong", "        1048576        262144     float     sum      -1    30.12   34.81   60.92      0    29.98   34.97   61.20      0"),
			} {
				if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
					t.Errorf("%s, %d ranks, format %d, behind %q: flagged", name, n, format, pre)
				}
			}
		}
	}
}

// testsHeader is nccl-tests' header for n ranks over the hosts, with its
// column header and no row (the format of field case 88; NCCL 1 era:
// field case 127, "Rank  0 uses device  0" and "bytes N type op").
func testsHeader(n int, hosts []string, old bool) []string {
	lines := []string{fmt.Sprintf("# nThread 1 nGpus %d minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", n/len(hosts)), "#", "# Using devices"}
	for r := range n {
		if old {
			lines = append(lines, fmt.Sprintf("#   Rank %2d uses device %2d [0x%02x] Tesla M40 24GB", r, r, 5+r))
			continue
		}
		lines = append(lines, fmt.Sprintf("#  Rank %2d Group  0 Pid %d on %10s device %2d [0x%02x] NVIDIA RTX A6000", r, 3000+r%len(hosts), hosts[r%len(hosts)], r/len(hosts), 1+r))
	}
	lines = append(lines, "#", "#                                                              out-of-place                       in-place")
	if old {
		return append(lines, "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res")
	}
	return append(lines,
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)")
}

// nccl-tests that printed its column header for two or more GPUs of one
// host and no row under it stopped at its first size (field case 127):
// named, behind any prefix, in either header format; not for GPUs on two
// hosts, nor with a row or an error line after the header.
func TestP2PStallNCCLTestsAnyRanksAnyPrefix(t *testing.T) {
	const id = "nccl.p2p-stall-after-init"
	r := rand.New(rand.NewSource(127))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			n := 2 + r.Intn(15)
			old := r.Intn(2) == 0
			one := []string{fmt.Sprintf("node%02d", r.Intn(100))}
			job := testsHeader(n, one, old)
			if a := analyseText(prefixed(pre, job)); topCause(a) != id {
				t.Fatalf("%d ranks (old %v) behind %q: first %q (%+v)\n%s", n, old, pre, topCause(a), a.Flags, prefixed(pre, job))
			}
			row := "        1048576        262144     float     sum      -1    30.12   34.81   60.92      0    29.98   34.97   61.20      0"
			for name, lines := range map[string][]string{
				"two hosts":     testsHeader(n, []string{"node01", "node02"}, false),
				"one rank":      testsHeader(1, one, old),
				"a row":         append(testsHeader(n, one, false), row),
				"an error line": append(testsHeader(n, one, old), one[0]+": Test NCCL failure common.cu:959 'unhandled system error'"),
			} {
				if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
					t.Errorf("%s, %d ranks, behind %q: flagged", name, n, pre)
				}
			}
		}
	}
}
