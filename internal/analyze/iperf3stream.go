package analyze

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// ethernetRates are the link rates (Gb/s) an iperf3 test may cross.
var ethernetRates = []float64{1, 2.5, 5, 10, 25, 40, 50, 100, 200, 400, 800}

// Bounds of the single-stream rule: one iperf3 stream runs on one CPU
// thread, which iperf3's FAQ puts at "about 25 Gbps"; below singleStreamGbps
// a core is rarely the limit. A rate carries at most maxGoodput of itself as
// TCP payload (9000-byte frames); an interval may read up to bufferGbps more
// than crossed the wire (a send buffer's worth), so the best interval shows
// the link faster than a rate only past both.
const (
	singleStreamGbps = 20
	maxGoodput       = 0.99
	bufferGbps       = 1
	belowLink        = 0.85
)

// linkAtLeast is the slowest link rate that could carry the best interval
// seen; 0 when none could.
func linkAtLeast(best float64) float64 {
	for _, r := range ethernetRates {
		if r*maxGoodput+bufferGbps >= best {
			return r
		}
	}
	return 0
}

// iperf3SingleStream flags a TCP test of one stream whose mean stays well
// below the link its own best interval proves: the link carried more than
// the test's mean, and one stream is one CPU thread (every iperf3 before
// 3.16 used one thread for all its streams), so the number is the tool's
// limit, not the link's. Judged only where no expectation applies (an
// expectation already says what the platform's iperf3 reaches).
func (a *analysis) iperf3SingleStream(r *results.Iperf3Result, judged bool) {
	mean := r.ReceivedGbps
	if mean == 0 {
		mean = r.SentGbps
	}
	if judged || r.Protocol != "TCP" || r.Streams != 1 || r.Intervals < 3 || mean < singleStreamGbps {
		return
	}
	link := linkAtLeast(r.MaxIntervalGbps)
	if link == 0 || mean >= belowLink*link {
		return
	}
	version := "every iperf3 runs one stream on one CPU thread"
	if r.Version != "" {
		version = r.Version + " runs one stream on one CPU thread"
	}
	a.flag(report.Warn, "iperf3.single-stream-cpu-bound",
		fmt.Sprintf("one iperf3 TCP stream averaged %.1f Gb/s while an interval reached %.1f Gb/s, more than a link below %gG carries: the link is faster, and %s, which iperf3's FAQ names a bottleneck above about 25 Gb/s; the number is the limit of one core, not the link's", mean, r.MaxIntervalGbps, link, version),
		fmt.Sprintf("1 stream, %d intervals from %.1f to %.1f Gb/s, mean %.1f Gb/s", r.Intervals, r.MinIntervalGbps, r.MaxIntervalGbps, mean),
		"run several streams: iperf3 -P 4 (3.16 and later give each stream a thread) or several iperf3 servers and clients on separate ports, and add their rates; if the sum reaches the link, one stream was the limit; for one stream, keep the NIC's interrupts off the core iperf3 runs on (/proc/interrupts; pin iperf3 with -A)",
		"https://github.com/esnet/iperf/blob/3.21/docs/faq.rst (iperf3 before 3.16 single threaded, one CPU core a bottleneck \"faster than about 25 Gbps\"; from 3.16 one thread per stream); https://github.com/esnet/iperf/issues/55 (one stream at 36.7 Gbit/s where iperf2 -P6 went faster: run iperf3 >= 3.16 with -P)")
}
