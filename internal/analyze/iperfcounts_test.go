package analyze

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// udpRun is iperf3 UDP receiver interval lines in the layout of field case
// 165 (esnet/iperf#1892): stream id, one-second intervals from start, and
// the Lost/Total each gives; header adds the column line.
func udpRun(id, start int, counts [][2]int64, header bool) []string {
	var out []string
	if header {
		out = append(out, "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams")
	}
	for i, c := range counts {
		pct := 0.0
		if c[1] != 0 {
			pct = 100 * float64(c[0]) / float64(c[1])
		}
		out = append(out, fmt.Sprintf("[%3d] %d.00-%d.00 sec  12.5 MBytes   105 Mbits/sec  0.001 ms  %d/%d (%.2g%%)", id, start+i, start+i+1, c[0], c[1], pct))
	}
	return out
}

// A negative Lost (the 32-bit packet counter wrapped) or a Lost above the
// Total (a value printed wrong) is named on any stream, interval count and
// position, with or without the column header, behind any prefix; UDP
// runs with any real loss, none, or an empty interval are not.
func TestUDPImpossibleCountsAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(1892))
	for _, pre := range causePrefixes(r) {
		n := 4 + r.Intn(28)
		id, start := 3+r.Intn(20), r.Intn(6000)
		healthy := make([][2]int64, n)
		for i := range healthy {
			total := int64(1 + r.Intn(900000))
			healthy[i] = [2]int64{r.Int63n(total/10 + 1), total}
		}
		header := r.Intn(2) == 0
		wrapped := append([][2]int64(nil), healthy...)
		at := r.Intn(n)
		wrapped[at] = [2]int64{-1 - r.Int63n(900000), r.Int63n(30000)}
		garbled := append([][2]int64(nil), healthy...)
		garbled[at] = [2]int64{1 << (32 + r.Intn(3)), 0}
		for want, counts := range map[string][][2]int64{"iperf3.udp-counter-overflow": wrapped, "iperf3.udp-report-garbled": garbled} {
			res := analyseText(prefixed(pre, udpRun(id, start, counts, header)))
			if f := firstFlag(res); f != want {
				t.Errorf("%d intervals, odd one at %d, header %v, behind %q: first %q, want %s (%+v)", n, at, header, pre, f, want, res.Flags)
			}
		}
		empty := append([][2]int64(nil), healthy...)
		empty[at] = [2]int64{0, 0}
		for what, counts := range map[string][][2]int64{"healthy": healthy, "empty interval": empty} {
			res := analyseText(prefixed(pre, udpRun(id, start, counts, header)))
			if hasFlag(res, "iperf3.udp-counter-overflow") || hasFlag(res, "iperf3.udp-report-garbled") {
				t.Errorf("%s, behind %q: flagged (%+v)", what, pre, res.Flags)
			}
		}
	}
}

// firstFlag is the id of the first flag, "" when there is none.
func firstFlag(a report.AnalysisResult) string {
	if len(a.Flags) == 0 {
		return ""
	}
	return a.Flags[0].ID
}
