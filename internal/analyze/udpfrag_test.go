package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// iperfBytes prints a byte count as iperf3's adaptive unit does (1024-based,
// two decimals under 10, one under 100, none above).
func iperfBytes(b float64) string {
	units := []string{"Bytes", "KBytes", "MBytes", "GBytes"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	switch {
	case b < 10:
		return fmt.Sprintf("%.2f %s", b, units[i])
	case b < 100:
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}

// udpServerPaste writes an iperf3 UDP server's text: streams × intervals
// of datagrams of size bytes, lost of each interval's total lost; after
// stallFrom (if > 0) the intervals carry nothing.
func udpServerPaste(r *rand.Rand, streams, intervals, size int, lossPct, stallFrom int) string {
	var b strings.Builder
	b.WriteString("Accepted connection from 10.4.2.38, port 58166\n")
	for s := 0; s < streams; s++ {
		fmt.Fprintf(&b, "[%3d] local 10.6.2.41 port 5201 connected to 10.4.2.38 port %d\n", 5+s, 40000+s)
	}
	b.WriteString("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	for i := 0; i < intervals; i++ {
		var sumLost, sumTotal int
		for s := 0; s < streams; s++ {
			total := r.IntN(5000) + 100
			lost := total * lossPct / 100
			if stallFrom > 0 && i >= stallFrom {
				total, lost = 0, 0
			}
			sumLost, sumTotal = sumLost+lost, sumTotal+total
			got := float64((total - lost) * size)
			fmt.Fprintf(&b, "[%3d]  %2d.00-%d.00   sec  %s  %.0f Kbits/sec  %.3f ms  %d/%d (%d%%)\n", 5+s, i, i+1, iperfBytes(got), got*8/1000, r.Float64()*3, lost, total, lossPct)
		}
		if streams > 1 {
			got := float64((sumTotal - sumLost) * size)
			fmt.Fprintf(&b, "[SUM]  %2d.00-%d.00   sec  %s  %.0f Kbits/sec  %.3f ms  %d/%d (%d%%)\n", i, i+1, iperfBytes(got), got*8/1000, r.Float64()*3, sumLost, sumTotal, lossPct)
			b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n")
		}
	}
	return b.String()
}

// A UDP test whose datagrams exceed a 1500-byte packet's payload and lose a
// tenth or more, or stop arriving, is flagged whatever the stream and
// interval count; datagrams that fit, or large ones without loss (jumbo
// frames end to end), are not.
func TestUDPFragmentedFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(905, 861))
	for i := 0; i < 30; i++ {
		streams, intervals := r.IntN(4)+1, r.IntN(8)+2
		big := 1500 + r.IntN(60000)
		small := 16 + r.IntN(1400)
		check := func(paste string, fire bool) {
			t.Helper()
			a := Reader("s.txt", strings.NewReader(paste), Options{})
			if got := hasFlag(a, "iperf3.udp-fragmented"); got != fire {
				t.Errorf("fired %v, want %v:\n%s\n%+v", got, fire, paste, a.Flags)
			}
		}
		check(udpServerPaste(r, streams, intervals, big, 12+r.IntN(88), 0), true)
		check(udpServerPaste(r, streams, intervals, big, r.IntN(3), 1), true)
		check(udpServerPaste(r, streams, intervals, big, r.IntN(8), 0), false)
		check(udpServerPaste(r, streams, intervals, small, 10+r.IntN(80), 1), false)
	}
}

// udpClientPaste writes an iperf 3.1 UDP client's text: streams ×
// intervals, then each stream's summary with "Sent N datagrams", where N is
// what the receiver reported back (summaryShare of what the intervals sent).
func udpClientPaste(r *rand.Rand, streams, intervals int, summaryShare float64) string {
	var b strings.Builder
	b.WriteString("Connecting to host 10.0.0.2, port 5201\n")
	for s := 0; s < streams; s++ {
		fmt.Fprintf(&b, "[%3d] local 10.0.0.1 port %d connected to 10.0.0.2 port 5201\n", 4+s, 50000+s)
	}
	b.WriteString("[ ID] Interval           Transfer     Bandwidth       Total Datagrams\n")
	sent := make([]int, streams)
	for i := 0; i < intervals; i++ {
		sum := 0
		for s := 0; s < streams; s++ {
			n := r.IntN(900) + 10
			sent[s] += n
			sum += n
			fmt.Fprintf(&b, "[%3d]  %2d.00-%d.00   sec  %s  %.2f Mbits/sec  %d\n", 4+s, i, i+1, iperfBytes(float64(n*1448)), float64(n*1448*8)/1e6, n)
		}
		if streams > 1 {
			fmt.Fprintf(&b, "[SUM]  %2d.00-%d.00   sec  %s  %.2f Mbits/sec  %d\n", i, i+1, iperfBytes(float64(sum*1448)), float64(sum*1448*8)/1e6, sum)
			b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n")
		}
	}
	b.WriteString("- - - - - - - - - - - - - - - - - - - - - - - - -\n")
	b.WriteString("[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams\n")
	for s := 0; s < streams; s++ {
		got := int(float64(sent[s]) * summaryShare)
		fmt.Fprintf(&b, "[%3d]   0.00-%d.00  sec  %s  1.00 Mbits/sec  0.020 ms  0/%d (0%%)\n", 4+s, intervals, iperfBytes(float64(got*1448)), got)
		fmt.Fprintf(&b, "[%3d] Sent %d datagrams\n", 4+s, got)
	}
	return b.String()
}

// A client whose summary counts far fewer datagrams than its intervals sent
// is flagged for any stream and interval count; one that counts them all,
// or all but a few in flight, is not, nor is iperf 3.2's summary (a
// sender's and a receiver's line, no "Sent N datagrams").
func TestUDPLossUncountedFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(698, 31))
	check := func(paste string, fire bool) {
		t.Helper()
		a := Reader("s.txt", strings.NewReader(paste), Options{})
		if got := hasFlag(a, "iperf3.udp-loss-uncounted"); got != fire {
			t.Errorf("fired %v, want %v:\n%s\n%+v", got, fire, paste, a.Flags)
		}
	}
	for i := 0; i < 30; i++ {
		streams, intervals := r.IntN(3)+1, r.IntN(10)+1
		check(udpClientPaste(r, streams, intervals, 0.85*r.Float64()), true)
		check(udpClientPaste(r, streams, intervals, 0.95+0.05*r.Float64()), false)
		paste := udpClientPaste(r, streams, intervals, 0.5)
		var v32 strings.Builder
		for _, l := range strings.SplitAfter(paste, "\n") {
			if !strings.Contains(l, " Sent ") {
				v32.WriteString(l)
			}
		}
		check(v32.String(), false)
	}
}
