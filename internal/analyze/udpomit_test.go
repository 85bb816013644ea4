package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// udpOmitPaste writes a UDP client in reverse mode with -O warm-up
// intervals losing lost datagrams in all, then the measured intervals,
// the first of which takes back back datagrams.
func udpOmitPaste(r *rand.Rand, omit int, lost, back int64, cmd string) string {
	var b strings.Builder
	b.WriteString(cmd + "\nConnecting to host 10.0.0.4, port 5201\nReverse mode, remote host 10.0.0.4 is sending\n")
	b.WriteString("[  5] local 10.0.0.1 port 53356 connected to 10.0.0.4 port 5201\n")
	b.WriteString("[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams\n")
	left := lost
	for i := range omit {
		l := left
		if i < omit-1 {
			l = left / 2
		}
		left -= l
		n := l + 60_000 + r.Int64N(30_000)
		moved := float64((n - l) * 1472)
		fmt.Fprintf(&b, "[  5]   %d.00-%d.00   sec  %s   %.3g Mbits/sec  0.028 ms  %d/%d (%.2g%%)  (omitted)\n", i, i+1, iperfBytes(moved), moved*8/1e6, l, n, 100*float64(l)/float64(n))
	}
	for i := range 4 {
		n := 81_000 + r.Int64N(300)
		l := int64(r.IntN(100))
		if i == 0 {
			l = -back
		}
		moved := float64((n - max(l, 0)) * 1472)
		fmt.Fprintf(&b, "[  5]   %d.00-%d.00   sec  %s   %.3g Mbits/sec  0.025 ms  %d/%d (%.2g%%)  \n", i, i+1, iperfBytes(moved), moved*8/1e6, l, n, 100*float64(l)/float64(n))
	}
	return b.String()
}

// A negative loss beyond its total in the first interval after -O
// warm-up intervals is named as the old --omit accounting, with the
// warm-up's loss as evidence, for any warm-up length and loss; the same
// line without warm-up intervals keeps the generic reading. The command
// line's -l decides fragmentation: 1472 is not fragmented however the
// lossy intervals' estimate reads.
func TestUDPOmitNegativeLoss(t *testing.T) {
	r := rand.New(rand.NewPCG(412, 414))
	for range 20 {
		omit := 1 + r.IntN(4)
		lost := 90_000 + r.Int64N(200_000)
		cmd := fmt.Sprintf("%% iperf3 -c 10.0.0.4 --udp --len 1472 -b 0M --omit %d --reverse", omit)
		a := Reader("o.txt", strings.NewReader(udpOmitPaste(r, omit, lost, lost, cmd)), Options{})
		if top := topCause(a); top != "iperf3.udp-count-impossible" || hasFlag(a, "iperf3.udp-fragmented") {
			t.Fatalf("first %q %+v", top, a.Flags)
		}
		for _, f := range a.Flags {
			if f.ID == "iperf3.udp-count-impossible" && (!strings.Contains(f.Message, "-O/--omit warm-up") || !strings.Contains(f.Evidence, "exactly the warm-up's loss")) {
				t.Errorf("%+v", f)
			}
		}
		a = Reader("n.txt", strings.NewReader(udpOmitPaste(r, 0, 0, lost, "iperf3 -c 10.0.0.4 -u -l 1472")), Options{})
		for _, f := range a.Flags {
			if f.ID == "iperf3.udp-count-impossible" && strings.Contains(f.Message, "warm-up") {
				t.Errorf("no warm-up: %+v", f)
			}
		}
	}
}

// The command line's -l is the datagram size when the text shows one: a
// size a 1500-byte packet carries is never fragmented, a larger one is,
// whatever the estimate from the intervals; without it, an estimate
// within 1 % of 1472 is not enough.
func TestUDPFragmentedLenFromCommand(t *testing.T) {
	r := rand.New(rand.NewPCG(496, 861))
	for range 20 {
		size := 1480 + r.IntN(6)
		lossy := udpServerPaste(r, 1+r.IntN(3), 2+r.IntN(6), size, 20+r.IntN(60), 0)
		for _, c := range []struct {
			cmd  string
			fire bool
		}{
			{"$ iperf3 -c 10.4.2.41 -u -b 2G -l 1400", false},
			{"$ iperf3 -c 10.4.2.41 -u -b 2G --length=1472", false},
			{"$ iperf3 -c 10.4.2.41 -u -b 2G -l2K", true},
			{"$ iperf3 -c 10.4.2.41 -u -b 2G --len 8948", true},
		} {
			a := Reader("f.txt", strings.NewReader(c.cmd+"\n"+lossy), Options{})
			if got := hasFlag(a, "iperf3.udp-fragmented"); got != c.fire {
				t.Errorf("%q size %d: fired %v, want %v", c.cmd, size, got, c.fire)
			}
		}
		// rounding moves the estimate by up to 0.5 %: 1476 reads under 1487
		near := udpServerPaste(r, 1+r.IntN(3), 2+r.IntN(6), 1473+r.IntN(4), 20+r.IntN(60), 0)
		if hasFlag(Reader("n.txt", strings.NewReader(near), Options{}), "iperf3.udp-fragmented") {
			t.Errorf("estimate within 1 %% fired:\n%s", near)
		}
	}
}
