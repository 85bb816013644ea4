package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// reversePaste writes a TCP client's intervals: streams streams whose
// moved bytes (all streams together) are spread over the first active
// intervals, then zeros intervals of nothing.
func reversePaste(r *rand.Rand, header string, streams int, moved float64, active, zeros int) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("Connecting to host 192.168.0.33, port 5201\n")
	for s := range streams {
		fmt.Fprintf(&b, "[%3d] local 192.168.0.10 port %d connected to 192.168.0.33 port 5201\n", 5+2*s, 61075+s)
	}
	b.WriteString("[ ID] Interval           Transfer     Bitrate\n")
	for i := range active + zeros {
		per := 0.0
		if i < active {
			per = moved / float64(active)
		}
		for s := range streams {
			fmt.Fprintf(&b, "[%3d]   %d.00-%d.00   sec  %s  %.3g Mbits/sec\n", 5+2*s, i, i+1, iperfBytes(per/float64(streams)), per/float64(streams)*8/1e6)
		}
		if streams > 1 {
			fmt.Fprintf(&b, "[SUM]   %d.00-%d.00   sec  %s  %.3g Mbits/sec\n", i, i+1, iperfBytes(per), per*8/1e6)
			b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n")
		}
	}
	return b.String()
}

// A reverse TCP test whose data stops for good after a whole number of
// blocks (128 KiB, or the command line's -l) is the server's -k/-n limit,
// for any stream count, block count and prefix; the same shape sent by
// the client, a stall after a few segments or after gigabytes, data that
// comes back, or a single empty interval at the end is not.
func TestIperf3ReverseStoppedAtLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(1363, 1364))
	const id = "iperf3.reverse-stopped-at-limit"
	rev := "Reverse mode, remote host linux.server.lan is sending\n"
	for range 30 {
		streams := 1 + r.IntN(3)
		zeros := 2 + r.IntN(8)
		p := anyPrefix(r)
		check := func(name, paste string, fire bool) {
			t.Helper()
			a := Reader("r.txt", strings.NewReader(prefixLines(paste, p)), Options{})
			if hasFlag(a, id) != fire || fire && topCause(a) != id {
				t.Errorf("%s (prefix %q): fired %v, want %v %+v\n%s", name, p, !fire, fire, a.Flags, paste)
			}
		}
		blocks := float64(1 + r.IntN(3))
		check("default block", reversePaste(r, rev, streams, blocks*128*1024, 1, zeros), true)
		l := 1 << (12 + r.IntN(6))
		check("-l block", reversePaste(r, fmt.Sprintf("$ iperf3 -c 192.168.0.33 -R -l %d\n", l), streams, float64(l), 1, zeros), true)
		check("client sends", reversePaste(r, "", streams, blocks*128*1024, 1, zeros), false)
		check("few segments", reversePaste(r, rev, streams, float64(10*1448), 1, zeros), false)
		check("gigabytes", reversePaste(r, rev, streams, float64((3+r.IntN(40))<<30), 2+r.IntN(3), zeros), false)
		check("one empty interval", reversePaste(r, rev, streams, blocks*128*1024, 1, 1), false)
		back := reversePaste(r, rev, streams, blocks*128*1024, 1, zeros) + reversePaste(r, "", streams, float64((1+r.IntN(9))<<30), 1, 0)
		check("data comes back", back, false)
	}
}
