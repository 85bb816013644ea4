package analyze

import (
	"fmt"
	randv1 "math/rand"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// udpFlags is the iperf3 UDP flags an analysis raised, and whether it
// raised a warn or fail.
func udpFlags(a report.AnalysisResult) (map[string]bool, bool) {
	ids := map[string]bool{}
	for _, f := range a.Flags {
		if strings.HasPrefix(f.ID, "iperf3.") {
			ids[f.ID] = true
		}
	}
	return ids, alarm(a)
}

// anyPrefix is a real launcher tag, a random one, or none.
func anyPrefix(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		return realPrefixes[r.IntN(len(realPrefixes))]
	case 1:
		return randomPrefix(randv1.New(randv1.NewSource(r.Int64())))
	}
	return ""
}

// udpWrapPaste writes a UDP server's intervals from first s to the wrap:
// streams at rate datagrams a second of size bytes, lossPct lost, then
// the sequence number wraps inside interval wrapAt and every later
// datagram counts as late (iperf_udp.c): a negative loss, a total of 0.
// unsigned prints the counts as iperf3 3.14 to 3.16 do (PRIu64).
func udpWrapPaste(r *rand.Rand, version string, streams int, rate int64, size, first, wrapAt, after int, unsigned bool) string {
	var b strings.Builder
	if version != "" {
		b.WriteString("iperf " + version + "\n")
	}
	if r.IntN(2) == 0 {
		b.WriteString("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	}
	count := func(n int64) string {
		if unsigned && n < 0 {
			return fmt.Sprint(uint64(n))
		}
		return fmt.Sprint(n)
	}
	for i := first; i <= wrapAt+after; i++ {
		for s := range streams {
			total := rate - rate/50 + r.Int64N(rate/25+1)
			lost := total * int64(r.IntN(5)) / 100
			got := total - lost
			switch {
			case i == wrapAt:
				total, lost = total/(10+int64(r.IntN(30))), -got*9/10
			case i > wrapAt:
				total, lost = 0, -got
			}
			moved := float64(got * int64(size))
			fmt.Fprintf(&b, "[%3d] %d.00-%d.00 sec  %s  %.3g Mbits/sec  0.001 ms  %s/%s (%.2g%%)\n", 5+2*s, i, i+1, iperfBytes(moved), moved*8/1e6,
				count(lost), count(total), 100*float64(lost)/float64(max(total, 1)))
		}
	}
	return b.String()
}

// A UDP receiver whose loss turns negative beyond its total when its
// stream has sent about 2^32 datagrams (2^31 before iperf3 3.14) is the
// sequence number wrapping, whatever the streams, the prefix, the
// version line or the unsigned printing; the same shape long before any
// limit is a count the text cannot explain, never a wrap.
func TestUDPCounterWrapFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(1892, 1536))
	for i := range 40 {
		streams := 1 + r.IntN(4)
		version := []string{"", "3.9", "3.13", "3.14", "3.17", "3.19.1"}[r.IntN(6)]
		limit := int64(1) << 32
		if version == "3.9" || version == "3.13" {
			limit = 1 << 31
		}
		rate := int64(100_000 + r.IntN(3_000_000))
		wrapAt := int(limit / rate)
		first := wrapAt - 1 - r.IntN(4)
		if i%8 == 0 {
			rate = limit/300 + 1
			wrapAt, first = int(limit/rate), 0
		}
		p := anyPrefix(r)
		paste := prefixLines(udpWrapPaste(r, version, streams, rate, 16+r.IntN(1400), first, wrapAt, r.IntN(4), r.IntN(2) == 0), p)
		ids, _ := udpFlags(Reader("w.txt", strings.NewReader(paste), Options{}))
		if !ids["iperf3.udp-counter-wrap"] || ids["iperf3.udp-host-overrun"] || ids["iperf3.udp-count-impossible"] {
			t.Errorf("wrap (version %q, rate %d, from %d s, prefix %q): %v\n%.2000s", version, rate, first, p, ids, paste)
		}
		// the same shape after a few million datagrams
		early := prefixLines(udpWrapPaste(r, version, streams, rate, 1400, 0, 1+r.IntN(5), 2, false), p)
		ids, warn := udpFlags(Reader("e.txt", strings.NewReader(early), Options{}))
		if ids["iperf3.udp-counter-wrap"] || !ids["iperf3.udp-count-impossible"] || !warn {
			t.Errorf("early: %v\n%s", ids, early)
		}
	}
}

// The 3.14 report bug on 32-bit CPUs prints a sender line's count as the
// next count shifted 32 bits: N × 2^32 over 0, for any N up to the
// largest that fits, any stream count ([SUM] lines too), with or without
// the receiver lines and version; the same stream's receiver line is
// named as evidence.
func TestUDPReport32Flag(t *testing.T) {
	r := rand.New(rand.NewPCG(1554, 1556))
	for _, n := range []int64{1, 4, 1 << 20, int64(r.IntN(1 << 30)), 1<<31 - 1, 1 + int64(r.IntN(1000))} {
		version := []string{"", "3.14", "3.16"}[r.IntN(3)]
		streams := 1 + r.IntN(4)
		recv := r.IntN(3) > 0
		var b strings.Builder
		if version != "" {
			b.WriteString("iperf " + version + " (cJSON 1.7.15)\n")
		}
		b.WriteString("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
		ids := []string{}
		for s := range streams {
			ids = append(ids, fmt.Sprintf("%3d", 5+2*s))
		}
		if streams > 1 {
			ids = append(ids, "SUM")
		}
		for i, id := range ids {
			c := n + int64(i)
			if id == "SUM" {
				c = int64(streams) * n
			}
			c = min(c, 1<<31-1-int64(i)) // the counts fit 31 bits here
			fmt.Fprintf(&b, "[%s]   0.00-10.00  sec   %s  1.05 Mbits/sec  0.000 ms  %d/0 (-2.5e-39%%)\n", id, iperfBytes(float64(c*1400)), c<<32)
			if recv {
				fmt.Fprintf(&b, "[%s]   0.00-10.00  sec   %s  1.05 Mbits/sec  0.005 ms  0/%d (0%%)  receiver\n", id, iperfBytes(float64(c*1400)), c)
			}
		}
		paste := prefixLines(b.String(), anyPrefix(r))
		a := Reader("r.txt", strings.NewReader(paste), Options{})
		got, _ := udpFlags(a)
		if !got["iperf3.udp-report-32bit"] || len(got) != 1 {
			t.Errorf("N=%d: %v\n%s", n, got, paste)
			continue
		}
		for _, f := range a.Flags {
			if f.ID == "iperf3.udp-report-32bit" && recv != strings.Contains(f.Evidence, fmt.Sprintf("same stream counts %d datagrams, the same", n)) {
				t.Errorf("N=%d: evidence %q", n, f.Evidence)
			}
		}
	}
}

// Negative interval losses no larger than their totals are late
// datagrams given back: said, never a warning.
func TestUDPLateDatagramsNoAlarm(t *testing.T) {
	paste := `[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-1.00   sec  1.18 GBytes  10.1 Gbits/sec  0.014 ms  2875/140376 (2%)
[  5]   1.00-2.00   sec  1.17 GBytes  10.0 Gbits/sec  0.026 ms  -40/136289 (-0.029%)
[  5]   2.00-3.00   sec  1.11 GBytes  9.53 Gbits/sec  0.026 ms  0/129278 (0%)
`
	a := Reader("l.txt", strings.NewReader(paste), Options{})
	ids, warn := udpFlags(a)
	if !ids["iperf3.udp-late-datagrams"] || len(ids) != 1 || warn {
		t.Errorf("%v %v %+v", ids, warn, a.Flags)
	}
}

// udpClientSummary writes a UDP client's summary: the sender line and
// the receiver line, per stream and [SUM] for several.
func udpClientSummary(streams int, gbps float64, lossPct int, size int, cmd string) string {
	var b strings.Builder
	if cmd != "" {
		b.WriteString(cmd + "\n")
	}
	b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	per := gbps / float64(streams)
	sent := int64(per * 1e9 / 8 * 60 / float64(size))
	lost := sent * int64(lossPct) / 100
	line := func(id string, sent, lost int64, gbps float64) {
		fmt.Fprintf(&b, "[%s]   0.00-60.00  sec  %s  %.3g Gbits/sec  0.000 ms  0/%d (0%%)  sender\n", id, iperfBytes(float64(sent*int64(size))), gbps, sent)
		got := float64((sent - lost) * int64(size))
		fmt.Fprintf(&b, "[%s]   0.00-60.04  sec  %s  %.3g Gbits/sec  0.001 ms  %d/%d (%d%%)  receiver\n", id, iperfBytes(got), got*8/60.04/1e9, lost, sent, lossPct)
	}
	for s := range streams {
		line(fmt.Sprintf("%3d", 5+2*s), sent, lost, per)
	}
	if streams > 1 {
		line("SUM", sent*int64(streams), lost*int64(streams), gbps)
	}
	return b.String()
}

// Heavy UDP loss at a high send rate names the end hosts as the first
// suspect, for any stream count and prefix; a small loss, a low rate or
// datagrams that are fragmented do not.
func TestUDPHostOverrunFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(841, 828))
	for range 30 {
		streams := 1 + r.IntN(8)
		gbps := 1.2 + r.Float64()*90
		small := 64 + r.IntN(1400)
		p := anyPrefix(r)
		check := func(paste string, fire bool) {
			t.Helper()
			ids, warn := udpFlags(Reader("o.txt", strings.NewReader(prefixLines(paste, p)), Options{}))
			if ids["iperf3.udp-host-overrun"] != fire || fire && !warn {
				t.Errorf("fired %v, want %v (prefix %q):\n%s", ids, fire, p, paste)
			}
		}
		check(udpClientSummary(streams, gbps, 6+r.IntN(90), small, "$ iperf3 -c 10.0.0.2 -u -b 0 -t 60"), true)
		check(udpClientSummary(streams, gbps, r.IntN(5), small, ""), false)
		check(udpClientSummary(streams, 0.01+r.Float64()*0.8, 6+r.IntN(90), small, ""), false)
		check(udpClientSummary(streams, gbps, 6+r.IntN(90), 1500+r.IntN(60000), ""), false)
	}
}

// Only lines after the wrap: the shape alone names the wrap, and the
// evidence says the count so far is not in the text.
func TestUDPCounterWrapWithoutCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5040, 5041))
	for range 10 {
		paste := udpWrapPaste(r, "", 1+r.IntN(3), int64(100_000+r.IntN(1_000_000)), 16, 7000, 7000, 1+r.IntN(3), r.IntN(2) == 0)
		a := Reader("n.txt", strings.NewReader(paste), Options{})
		ok := false
		for _, f := range a.Flags {
			ok = ok || f.ID == "iperf3.udp-counter-wrap" && strings.Contains(f.Evidence, "not in the text")
		}
		if !ok || topCause(a) != "iperf3.udp-counter-wrap" {
			t.Errorf("%+v\n%s", a.Flags, paste)
		}
	}
}

// Healthy UDP runs (any streams, rates up to 100 Gb/s, datagrams that fit
// a packet, loss under 5 %, late datagrams given back now and then)
// raise no warning, behind any prefix.
func TestUDPHealthyNoAlarm(t *testing.T) {
	r := rand.New(rand.NewPCG(168, 828))
	for range 30 {
		streams := 1 + r.IntN(4)
		rate := int64(1000 + r.IntN(8_000_000))
		first := r.IntN(100)
		last := first + 2 + r.IntN(30)
		// the wrap lies past the last line written
		paste := udpWrapPaste(r, []string{"", "3.9", "3.17"}[r.IntN(3)], streams, rate, 16+r.IntN(1456), first, 1<<20, last-1<<20, false)
		if r.IntN(2) == 0 {
			paste += "[  5]  99.00-100.00 sec  1.00 MBytes  8.39 Mbits/sec  0.004 ms  -3/750 (-0.4%)\n"
		}
		if r.IntN(2) == 0 {
			paste += udpClientSummary(streams, float64(rate)*1400*8/1e9, r.IntN(5), 1400, "")
		}
		p := anyPrefix(r)
		a := Reader("h.txt", strings.NewReader(prefixLines(paste, p)), Options{})
		if ids, warn := udpFlags(a); warn || a.Data.Iperf3 == nil || a.Data.Iperf3.Protocol != "UDP" {
			t.Errorf("prefix %q: %v %+v\n%.3000s", p, ids, a.Flags, paste)
		}
	}
}
