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
