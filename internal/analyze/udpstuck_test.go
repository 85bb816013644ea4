package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// udpLongReceiver writes a UDP receiver's intervals (streams at rate
// datagrams a second, 20 s each) and its summary, whose total is total
// and whose out-of-order line counts late, as iperf3 3.12 prints them.
func udpLongReceiver(r *rand.Rand, streams int, rate int64, total, late int64) string {
	var b strings.Builder
	b.WriteString("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	for i := range 5 {
		for s := range streams {
			n := rate*20 - rate/10 + r.Int64N(rate/5+1)
			lost := n * int64(r.IntN(3)) / 1000
			moved := float64((n - lost) * 1400)
			fmt.Fprintf(&b, "[%3d] %d.00-%d.00 sec  %s  %.3g Mbits/sec  0.006 ms  %d/%d (%.2g%%)\n", 5+2*s, 20*i, 20*i+20, iperfBytes(moved), moved*8/20/1e6, lost, n, 100*float64(lost)/float64(n))
		}
	}
	b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	if late > 0 {
		fmt.Fprintf(&b, "[SUM]  0.0-86400.0 sec  %d datagrams received out-of-order\n", late)
	}
	for s := range streams {
		fmt.Fprintf(&b, "[%3d]   0.00-86400.04 sec  9.82 TBytes  1000 Mbits/sec  0.007 ms  0/%d (0%%)  receiver\n", 5+2*s, total)
	}
	return b.String()
}

// A UDP count stuck at the largest value of a 32-bit counter (2^31-1 or
// 2^32-1) is named as the counter overflow, ranked first, whatever the
// streams, the prefix and the out-of-order line; a total one below, or
// any other, is not.
func TestUDPCounterStuckFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(1534, 1536))
	for range 30 {
		streams := 1 + r.IntN(4)
		rate := int64(10_000 + r.IntN(2_000_000))
		p := anyPrefix(r)
		for _, stuck := range []int64{1<<31 - 1, 1<<32 - 1} {
			late := int64(0)
			if r.IntN(2) == 0 {
				late = 1 + r.Int64N(1<<31)
			}
			paste := prefixLines(udpLongReceiver(r, streams, rate, stuck, late), p)
			a := Reader("s.txt", strings.NewReader(paste), Options{})
			if top := topCause(a); top != "iperf3.udp-counter-stuck" {
				t.Errorf("stuck at %d (prefix %q): first %q %+v\n%s", stuck, p, top, a.Flags, paste)
			}
			for _, other := range []int64{stuck - 1, 1 + r.Int64N(1<<31-2)} {
				paste := prefixLines(udpLongReceiver(r, streams, rate, other, late), p)
				if ids, _ := udpFlags(Reader("o.txt", strings.NewReader(paste), Options{})); ids["iperf3.udp-counter-stuck"] {
					t.Errorf("total %d: %v\n%s", other, ids, paste)
				}
			}
		}
	}
}
