package results

import (
	"strings"
	"testing"
)

// The Lost/Total no network gives, in the real lines of esnet/iperf#1892
// (a wrapped 32-bit counter) and #1554 (a 0 printed as 32 bits on i586),
// are counted; ordinary loss and empty intervals are not.
func TestUDPImpossibleCounts(t *testing.T) {
	for in, want := range map[string][2]int{
		"[  5] 5039.00-5040.00 sec  12.5 MBytes   105 Mbits/sec  0.000 ms  31600/853309 (3.7%)\n" +
			"[  5] 5040.00-5041.00 sec  12.5 MBytes   105 Mbits/sec  0.001 ms  -792929/24122 (-3.3e+03%)\n" +
			"[  5] 5041.00-5042.00 sec  12.5 MBytes   105 Mbits/sec  0.000 ms  -818638/0 (0%)\n": {2, 0},
		"[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n" +
			"[  5]   0.00-1.00   sec   128 KBytes  1.05 Mbits/sec  0.000 ms  17179869184/0 (-2.5e-39%)\n" +
			"[  5]   0.00-1.00   sec   128 KBytes  1.05 Mbits/sec  0.005 ms  0/4 (0%)  receiver\n": {0, 1},
		"[  5] 5038.00-5039.00 sec  12.5 MBytes   105 Mbits/sec  0.001 ms  33900/853455 (4%)\n" +
			"[  5] 5039.00-5040.00 sec  0.00 Bytes  0.00 bits/sec  0.001 ms  0/0 (0%)\n": {0, 0},
	} {
		_, how, err := ParseIperf3Text(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int{how.UDPNegativeLost, how.UDPLostOverTotal}; got != want {
			t.Errorf("%q: negative, over total %v, want %v", in, got, want)
		}
		if (want != [2]int{}) != (how.UDPOddLine != "") {
			t.Errorf("%q: odd line %q", in, how.UDPOddLine)
		}
	}
}
