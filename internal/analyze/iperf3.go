package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// udpRules reads what an iperf3 text output's UDP columns say about the
// test itself: datagrams fragmented, counts the tool got wrong, loss the
// end hosts most likely caused.
func (a *analysis) udpRules(how *results.Iperf3Text, r *results.Iperf3Result) {
	a.udpFragmented(how)
	a.udpSentUncounted(how)
	a.udpStuck(how, r.Version)
	a.udpCounts(how, r.Version)
	a.udpHostOverrun(how, r)
}

// udpPayload1500 is the largest UDP payload one 1500-byte IPv4 packet
// carries (1500 - 20 IP - 8 UDP); a larger datagram is sent in fragments.
const udpPayload1500 = 1472

// udpFragmented flags an iperf3 UDP test whose datagrams exceed what one
// 1500-byte packet carries while the receiver lost a tenth or more of them,
// or got none in an interval after the first arrived: the kernel sends each
// datagram as IP fragments, and one lost or dropped fragment loses the
// datagram. With jumbo frames end to end nothing is fragmented, so the flag
// says how to tell. The size is the command line's -l where the text shows
// one; else the estimate from the intervals, which rounding and datagrams
// counted lost but arriving late move by about 1 %, must pass 1472 by more.
func (a *analysis) udpFragmented(how *results.Iperf3Text) {
	size, limit := how.DatagramBytes, udpPayload1500*101/100
	if how.LenFlag > 0 {
		size, limit = how.LenFlag, udpPayload1500
	}
	if size <= limit || how.UDPTotal == 0 {
		return
	}
	lossy := how.UDPLost*10 >= how.UDPTotal
	if !lossy && how.UDPEmptyIntervals == 0 {
		return
	}
	sized := fmt.Sprintf("interval transfer over datagrams ≈ %d bytes each", size)
	if how.LenFlag > 0 {
		sized = fmt.Sprintf("-l %d on the command line", size)
	}
	a.flag(report.Warn, "iperf3.udp-fragmented",
		fmt.Sprintf("iperf3 sent UDP datagrams of about %d bytes, more than the %d a 1500-byte packet carries: each is sent as IP fragments, and losing one fragment loses the datagram", size, udpPayload1500),
		fmt.Sprintf("%s; receiver lost %d of %d datagrams, %d interval%s with none after the first arrived", sized, how.UDPLost, how.UDPTotal, how.UDPEmptyIntervals, plural(how.UDPEmptyIntervals)),
		"run the UDP test again with a send size below the path MTU (iperf3 -u -l 1400 on a 1500-byte MTU, or -l 8948 only where jumbo frames of 9000 run end to end); if the loss goes away, it was fragmentation (iperf3 before 3.1.5 sent 8 KB datagrams by default)",
		"https://github.com/esnet/iperf/blob/master/src/iperf_client_api.c (warns \"UDP block size %d exceeds TCP MSS %d, may result in fragmentation / drops\"); https://github.com/esnet/iperf/issues/496 (the former 8 KB default UDP send size fragmented on non-jumbo Ethernet); https://github.com/esnet/iperf/issues/861")
}

// udpSentUncounted flags an iperf3 UDP client whose summary counts fewer
// datagrams ("Sent N datagrams") than its own intervals sent, by more than a
// tenth: iperf3 before 3.2 puts there the receiver's count (its highest
// sequence number seen), so datagrams after the last one received are
// counted neither sent nor lost and the loss figure understates.
func (a *analysis) udpSentUncounted(how *results.Iperf3Text) {
	if how.UDPSentLines == 0 || how.UDPSent == 0 || (how.UDPSent-how.UDPSentSummary)*10 <= how.UDPSent {
		return
	}
	a.flag(report.Warn, "iperf3.udp-loss-uncounted",
		fmt.Sprintf("the client's intervals sent %d UDP datagrams but its summary counts %d: the loss figure covers only the datagrams up to the last one the receiver saw, not the %d after it", how.UDPSent, how.UDPSentSummary, how.UDPSent-how.UDPSentSummary),
		fmt.Sprintf("interval Total Datagrams sum to %d; 'Sent %d datagrams' in the summary", how.UDPSent, how.UDPSentSummary),
		"read loss from the receiver's side with iperf3 3.2 or later (its summary gives the sender's and the receiver's counts separately), and send more than a handful of datagrams (-t of several seconds rather than a -k of a few) so the test does not end while datagrams are in flight",
		"https://github.com/esnet/iperf/blob/3.1/src/iperf_api.c (get_results: the sender's packet_count and cnt_error are replaced by the receiver's; iperf_print_results prints it as \"Sent %d datagrams\"); https://github.com/esnet/iperf/issues/698 (loss is counted from gaps in the sequence numbers; -k bounds only the sender)")
}

// Sequence number limits of iperf3's UDP datagrams: the number is sent in
// 32 bits unless --udp-counters-64bit, and iperf3 before 3.14 kept it in a
// signed int, so its count wrapped at 2^31 (iperf_udp.c; esnet/iperf PR
// 1536 made the counts int64_t in 3.14).
const (
	udpWrap31 = int64(1) << 31
	udpWrap32 = int64(1) << 32
)

// udpCounts names the cause of a UDP Lost/Total count that cannot be
// true. iperf3 counts a datagram lost when the sequence number skips
// ahead, takes one back when a late datagram arrives (never below zero)
// and counts as the interval total how far the highest sequence number
// moved (iperf_udp.c), so a true interval loss is at most its total and
// negative by no more than its total. The shapes it tells apart:
//   - a loss that is a whole multiple of 2^32 over a smaller total: iperf3
//     3.14 on a 32-bit CPU passed a 32-bit 0 where it prints a 64-bit
//     count, so the count printed is the next count shifted 32 bits;
//   - a loss more negative than its total: the sequence number wrapped,
//     after 2^32 datagrams (2^31 before 3.14), and every later datagram
//     counts as late; confirmed by the datagrams counted before it;
//   - anything else, or a wrap the count so far rules out: a count the
//     text cannot explain.
//
// Negative losses within their totals are late datagrams, said as info.
func (a *analysis) udpCounts(how *results.Iperf3Text, version string) {
	o := how.UDPOdd
	if o == nil {
		if how.UDPLateLines > 0 {
			a.flag(report.Info, "iperf3.udp-late-datagrams",
				fmt.Sprintf("%d UDP interval line%s show a negative loss: datagrams that arrived after a later one were taken back from the loss an earlier interval counted, so the sum over the test is what counts", how.UDPLateLines, plural(how.UDPLateLines)),
				fmt.Sprintf("%d interval line%s with a negative Lost no larger than its Total", how.UDPLateLines, plural(how.UDPLateLines)),
				"read the loss from the summary (receiver) line; the out-of-order count iperf3 prints there says how many arrived late",
				"https://github.com/esnet/iperf/blob/master/src/iperf_udp.c (iperf_udp_recv: a sequence number not above the highest seen counts as out of order and takes one back from the loss count)")
		}
		return
	}
	line := fmt.Sprintf("%q", o.Line)
	if o.Line == "" {
		line = fmt.Sprintf("stream %s, %.2f-%.2f s: %d/%d", o.Stream, o.Start, o.End, o.Lost, o.Total)
	}
	more := ""
	if how.UDPOddLines > 1 {
		more = fmt.Sprintf("; %d lines with such counts", how.UDPOddLines)
	}
	if o.Lost > 0 && o.Lost%udpWrap32 == 0 && o.Total < udpWrap32 {
		a.udpReport32(how, o, line+more, version)
		return
	}
	count, exact := udpCountBefore(o)
	if o.Lost < 0 && (count == 0 || count >= udpWrap31*7/10 && count <= udpWrap32*13/10) {
		a.udpWrap(how, o, line+more, version, count, exact)
		return
	}
	ev := line + more
	why := "the count cannot be a sequence-gap count, and its shape is neither the 32-bit report bug of iperf3 3.14 nor a counter wrap"
	switch {
	case o.Lost < 0 && o.AfterOmitted:
		ev += fmt.Sprintf("; the first interval after %d omitted warm-up interval%s (-O/--omit), which counted %d lost", o.Intervals, plural(o.Intervals), o.OmittedLost)
		if o.OmittedLost == -o.Lost {
			ev += ": the negative loss is exactly the warm-up's loss taken back"
		}
		why = "it is the first interval after the -O/--omit warm-up, where iperf3 before 3.1.3 took the warm-up's losses back from the first measured interval"
		if version != "" && expect.VersionAtLeast(version, "3.1.3") {
			why += " (against: iperf3 " + version + " has that fix)"
		}
	case o.Lost < 0:
		ev += fmt.Sprintf("; the stream had counted %s datagrams before it, far from the 2^31 or 2^32 at which the sequence number wraps", aboutCount(count, exact))
		why = "the count went backwards long before the sequence number could wrap; iperf3 documents two other causes, datagrams under the 16 bytes its sequence number needs and -O/--omit in old releases, and the text cannot tell which"
	}
	a.flag(report.Warn, "iperf3.udp-count-impossible",
		fmt.Sprintf("iperf3 printed a UDP Lost/Total no true count gives (%d lost of %d): %s; the loss figure is not a measurement of the network", o.Lost, o.Total, why),
		ev,
		"do not read loss from this report: run the UDP test again with iperf3 3.15 or later, --udp-counters-64bit, -l of at least 16 bytes and no -O, and compare the sender datagram count with the receiver Lost/Total",
		"https://github.com/esnet/iperf/blob/master/src/iperf_udp.c (iperf_udp_recv: loss counted from sequence gaps, a late datagram takes one back, never below zero; the interval total is how far the highest sequence number moved); https://github.com/esnet/iperf/issues/390 (datagrams shorter than the header); https://github.com/esnet/iperf/blob/master/RELNOTES.md (3.1.3: negative loss counters with --udp and --omit fixed, PR 414; 3.14: statistics with --omit fixed, PR 1498)")
}

// udpCountBefore is the datagrams the stream had counted when its odd
// line began: exact when its intervals in the text start at 0, else its
// rate over them times the time elapsed; 0 when the text does not say.
func udpCountBefore(o *results.UDPOddCount) (int64, bool) {
	if o.Intervals == 0 || o.BeforeSeconds <= 0 || o.Before <= 0 {
		return 0, false
	}
	if o.FirstStart == 0 {
		return o.Before + max(o.Total, 0), true
	}
	est := float64(o.Before) / o.BeforeSeconds * o.Start
	if est <= 0 || est > 1e18 {
		return 0, false
	}
	return int64(est) + max(o.Total, 0), false
}

func aboutCount(n int64, exact bool) string {
	if exact {
		return fmt.Sprintf("%d", n)
	}
	return fmt.Sprintf("about %.3g", float64(n))
}

// udpReport32: the 3.14 bug on 32-bit CPUs (esnet/iperf PR 1556).
func (a *analysis) udpReport32(how *results.Iperf3Text, o *results.UDPOddCount, line, version string) {
	k := o.Lost / udpWrap32
	ev := []string{line, fmt.Sprintf("%d = %d × 2^32: a 32-bit 0 and the next 64-bit count read as one number", o.Lost, k)}
	if o.ReceiverSeen {
		if o.ReceiverTotal == k {
			ev = append(ev, fmt.Sprintf("the receiver line of the same stream counts %d datagrams, the same %d", o.ReceiverTotal, k))
		} else {
			ev = append(ev, fmt.Sprintf("the receiver line of the same stream counts %d datagrams, not %d (against)", o.ReceiverTotal, k))
		}
	}
	if o.Label == "" {
		ev = append(ev, "the line lost its sender label (the string argument is read off by one too)")
	}
	switch {
	case version == "":
		ev = append(ev, "the iperf3 version is not in the text (iperf3 -v tells; the bug is in 3.14 only)")
	case version == "3.14" || strings.HasPrefix(version, "3.14."):
		ev = append(ev, "iperf3 "+version+", the release with this bug")
	default:
		ev = append(ev, "iperf3 "+version+" (against: the bug is in 3.14 only)")
	}
	a.flag(report.Warn, "iperf3.udp-report-32bit",
		fmt.Sprintf("the UDP summary count %d/%d is garbled output, not loss: iperf3 3.14 on a 32-bit CPU printed the sender line with a 32-bit 0 where a 64-bit count belongs", o.Lost, o.Total),
		strings.Join(ev, "; "),
		"read the receiver line, whose count is right, and upgrade iperf3 on the 32-bit host to 3.15 or later, where the sender line prints 0 lost",
		"https://github.com/esnet/iperf/pull/1556 (src/iperf_api.c iperf_print_results: the sender line passes (int64_t) 0, it passed an int 0); https://github.com/esnet/iperf/blob/master/RELNOTES.md (3.15: garbled output with UDP tests on 32-bit hosts fixed, introduced in 3.14); https://github.com/esnet/iperf/issues/1554")
}

// udpWrap: the sequence number in the datagrams wrapped (iperf_udp.c;
// esnet/iperf issue 1892).
func (a *analysis) udpWrap(how *results.Iperf3Text, o *results.UDPOddCount, line, version string, count int64, exact bool) {
	limit, bits := udpWrap32, "2^32"
	old := version != "" && !expect.VersionAtLeast(version, "3.14")
	if old || version == "" && count > 0 && count < udpWrap31*3/2 {
		limit, bits = udpWrap31, "2^31"
	}
	ev := []string{line, fmt.Sprintf("%d datagrams taken back from the loss while the sequence number moved %d", uint64(-o.Lost), o.Total)}
	if how.UDPZeroTotalBytes > 0 {
		ev = append(ev, fmt.Sprintf("%d line%s moved data and counted no datagram", how.UDPZeroTotalBytes, plural(how.UDPZeroTotalBytes)))
	}
	if o.Unsigned {
		ev = append(ev, "the count is printed unsigned (iperf3 3.14 to 3.16): it stands for a negative one")
	}
	if count > 0 {
		ev = append(ev, fmt.Sprintf("the stream had sent %s datagrams by %.0f s, near %s = %d", aboutCount(count, exact), o.Start, bits, limit))
	} else {
		ev = append(ev, "the datagrams counted before it are not in the text, so the wrap is the shape alone: the stream rate times the seconds from its start should reach 2^31 or 2^32")
	}
	switch {
	case version == "":
		ev = append(ev, "iperf3 version not in the text (before 3.14 the count wraps at 2^31, from 3.14 at 2^32)")
	case old:
		ev = append(ev, "iperf3 "+version+": counts in a 32-bit int, wrap at 2^31")
	default:
		ev = append(ev, "iperf3 "+version+": 64-bit counts, 32-bit sequence number in the datagram, wrap at 2^32")
	}
	a.flag(report.Warn, "iperf3.udp-counter-wrap",
		fmt.Sprintf("the receiver's UDP loss turned negative at %.0f s: the sequence number iperf3 puts in each datagram wrapped after %s datagrams, and from then on every datagram counts as late; a counting artifact of the tool, not loss on the network", o.Start, bits),
		strings.Join(ev, "; "),
		"run long or fast UDP tests with --udp-counters-64bit on the client (both ends iperf3 3.1 or later), or keep a test under 2^31 datagrams (a shorter -t, a lower -b, a larger -l); the intervals before the wrap are valid",
		"https://github.com/esnet/iperf/blob/master/src/iperf_udp.c (iperf_udp_send/iperf_udp_recv: the sequence number is sent in 32 bits unless udp_counters_64bit; a number not above the highest seen counts as out of order); https://github.com/esnet/iperf/pull/1536 (3.14: UDP counts from int to int64_t); https://github.com/esnet/iperf/blob/master/src/iperf3.1 (--udp-counters-64bit); https://github.com/esnet/iperf/issues/1892")
}

// Where the host-overrun rule speaks: from 1 Gb/s sent (a choice, not a
// measured limit: below it the rule stays silent rather than guess), and
// from 5 % lost, well above what a sound path loses (the maintainer
// reference run in esnet/iperf issue 828 lost 2 % in its first second and
// under 0.05 % in each later one at 10 Gb/s).
const (
	udpOverrunGbps = 1.0
	udpOverrunLoss = 0.05
)

// udpHostOverrun: heavy UDP loss at a high send rate. UDP has no flow
// control: a sender faster than the receiving host drains its socket has
// its datagrams dropped at the end hosts (the receive buffer first), and
// iperf3 counts them as lost. For: the loss, the rate, -b 0, datagrams
// that fit one packet. Against, and never: fragmented datagrams (the
// fragment rule), counts that cannot be true, a loss too small or a rate
// too low.
func (a *analysis) udpHostOverrun(how *results.Iperf3Text, r *results.Iperf3Result) {
	if how.UDPOdd != nil || how.DatagramBytes > udpPayload1500 {
		return
	}
	lost, total := how.UDPRecvLost, how.UDPRecvTotal
	if how.UDPRecvLines == 0 {
		lost, total = how.UDPLost, how.UDPTotal
	}
	if total < 1000 || lost < 100 || float64(lost) < udpOverrunLoss*float64(total) {
		return
	}
	share := float64(lost) / float64(total)
	sent := r.SentGbps
	if sent <= 0 && share < 1 {
		sent = r.ReceivedGbps / (1 - share)
	}
	if sent < udpOverrunGbps {
		return
	}
	ev := []string{fmt.Sprintf("receiver lost %d of %d datagrams (%.0f %%) sent at %.2f Gb/s, %.2f Gb/s arrived", lost, total, 100*share, sent, r.ReceivedGbps)}
	switch how.RateFlag {
	case "":
	case "0":
		ev = append(ev, "-b 0: no rate limit, the sender sends as fast as it can")
	default:
		ev = append(ev, "-b "+how.RateFlag)
	}
	if how.DatagramBytes > 0 {
		ev = append(ev, fmt.Sprintf("datagrams of about %d bytes fit one 1500-byte packet (not fragmented)", how.DatagramBytes))
	}
	if r.Streams > 0 {
		ev = append(ev, fmt.Sprintf("%d stream%s", r.Streams, plural(r.Streams)))
	}
	ev = append(ev, "against: the text cannot show where the datagrams were dropped; a lossy link or a rate policer drops them alike, and the host counters tell")
	a.flag(report.Warn, "iperf3.udp-host-overrun",
		fmt.Sprintf("UDP lost %.0f %% of its datagrams at %.2f Gb/s: UDP has no flow control, so a sender faster than the receiving host drains its socket loses datagrams at the end hosts first; a suspect, not proof of a network fault", 100*share, sent),
		strings.Join(ev, "; "),
		"on the receiver read nstat -az UdpRcvbufErrors UdpInErrors (netstat -su: receive buffer errors) and ip -s link drops before and after a test; if they grow by about the lost count the host dropped them: pace with -b below the rate that arrived, raise -w (and net.core.rmem_max), or measure the link with TCP",
		"https://github.com/esnet/iperf/issues/841 (maintainer: -b 0 sends in a tight loop as fast as it can; UDP has no flow control or congestion control); Linux net/ipv4/udp.c (a datagram a full socket receive queue refuses counts UDP_MIB_RCVBUFERRORS, RcvbufErrors in /proc/net/snmp)")
}

// udpStuck: a UDP Lost/Total whose total is the largest value a 32-bit
// counter holds. iperf3 counts as the total how far the highest sequence
// number seen moved, and takes a datagram as new only when its number
// passes the highest plus one (iperf_udp.c iperf_udp_recv). Before 3.14
// the highest is a signed int: at 2^31-1 "highest + 1" overflows and no
// later datagram counts as new. From 3.14 the counts are int64, but
// without --udp-counters-64bit the number in the datagram is 32 bits and
// restarts at 0 after 2^32-1. Either way the total stops there and every
// later datagram counts as out of order, each taking one back from the
// loss: the summary is a counter overflow, not a measurement.
func (a *analysis) udpStuck(how *results.Iperf3Text, version string) {
	o := how.UDPStuck
	if o == nil {
		return
	}
	bits, why := "2^31-1", "iperf3 before 3.14 keeps the highest sequence number in a 32-bit int, and at 2^31-1 the next one overflows"
	if o.Total == udpWrap32-1 {
		bits, why = "2^32-1", "the sequence number each datagram carries is 32 bits unless --udp-counters-64bit, and after 2^32-1 it starts again at 0, below the highest seen"
	}
	line := fmt.Sprintf("%q", o.Line)
	if o.Line == "" {
		line = fmt.Sprintf("stream %s, %.2f-%.2f s: %d/%d", o.Stream, o.Start, o.End, o.Lost, o.Total)
	}
	ev := []string{line, fmt.Sprintf("total %d = %s, the largest value of the counter", o.Total, bits)}
	if how.UDPOutOfOrder > 0 {
		ev = append(ev, fmt.Sprintf("%d datagrams received out-of-order", how.UDPOutOfOrder))
	}
	if o.Before > 0 && o.BeforeSeconds > 0 && o.End > o.Start {
		if est := float64(o.Before) / o.BeforeSeconds * (o.End - o.Start); est > float64(o.Total) {
			ev = append(ev, fmt.Sprintf("the stream's intervals counted %d datagrams in %.0f s: about %.3g over the %.0f s the line covers", o.Before, o.BeforeSeconds, est, o.End-o.Start))
		}
	}
	switch {
	case version == "":
	case o.Total == udpWrap31-1 && expect.VersionAtLeast(version, "3.14"):
		ev = append(ev, "iperf3 "+version+" (against: its counts are 64-bit from 3.14)")
	default:
		ev = append(ev, "iperf3 "+version)
	}
	a.flag(report.Warn, "iperf3.udp-counter-stuck",
		fmt.Sprintf("the UDP count stopped at %d (%s): %s, so every later datagram counts as out of order and takes one back from the loss; the summary's loss and total are a counter overflow, not a measurement of the network", o.Total, bits, why),
		strings.Join(ev, "; "),
		"run long or fast UDP tests with iperf3 3.14 or later and --udp-counters-64bit on the client, or keep a test under 2^31 datagrams (a shorter -t, a lower -b, a larger -l); read loss from the interval lines before the count stopped",
		"https://github.com/esnet/iperf/blob/3.12/src/iperf_udp.c (iperf_udp_recv: a datagram is new only when its number passes packet_count + 1, an int; else out of order, and the loss count goes down by one); https://github.com/esnet/iperf/pull/1536 (3.14: the UDP counts become int64_t, fixing issue 1534); https://github.com/esnet/iperf/blob/master/src/iperf_udp.c (the number is sent in 32 bits unless udp_counters_64bit)")
}

// iperfTCPBlock is iperf3's default TCP read and write size
// (DEFAULT_TCP_BLKSIZE, src/iperf_api.h).
const iperfTCPBlock = 128 << 10

// reverseStopped: a reverse TCP test (the server sends) whose data stops
// for good after a whole number of blocks. The sender stops at a -k
// (blocks) or -n (bytes) limit, which it meets in whole blocks
// (iperf_api.c iperf_send), and before 3.12 a server kept the limit of an
// earlier reverse test for every later test that set none (the client
// sent -k/-n only when non-zero, the server never cleared them: esnet/iperf
// issue 1363). Judged only where the printed transfers pin the sum to
// within a quarter block; a stall of a few segments, or one after
// gigabytes, is not this.
func (a *analysis) reverseStopped(how *results.Iperf3Text, r *results.Iperf3Result) {
	st := how.Stopped
	if st == nil || !how.Reverse || r.Protocol != "TCP" {
		return
	}
	block, from := float64(iperfTCPBlock), "iperf3's default TCP block of 128 KiB"
	if how.LenFlag > 0 {
		block, from = float64(how.LenFlag), fmt.Sprintf("the -l %d on the command line", how.LenFlag)
	}
	n := math.Round(st.Bytes / block)
	if n < 1 || st.Tolerance >= block/4 || math.Abs(st.Bytes-n*block) > st.Tolerance {
		return
	}
	a.flag(report.Warn, "iperf3.reverse-stopped-at-limit",
		fmt.Sprintf("the server stopped sending after %.0f block%s of %.0f bytes and the %d intervals after moved nothing: a reverse test that ends on a whole number of blocks met a -k/--blockcount or -n/--bytes limit at the server, and iperf3 servers before 3.12 keep such a limit from an earlier reverse test for every later one; a tool state, not the network", n, plural(int(n)), block, st.ZeroIntervals),
		fmt.Sprintf("reverse mode; %.0f bytes over the first %d interval%s (to within %.0f as printed) = %.0f × %s; then %d intervals of 0 bytes to the end", st.Bytes, st.Intervals, plural(st.Intervals), st.Tolerance, n, from, st.ZeroIntervals),
		"restart the iperf3 server (a new server holds no limit) and run the test again; upgrade both ends to iperf3 3.12 or later, and give -k/-n to reverse tests only against 3.12 or later servers",
		"https://github.com/esnet/iperf/issues/1363; https://github.com/esnet/iperf/commit/e4ca82f82938f073945955be88a1c0f3e3efc7f7 (3.12: the server clears -k/-n on every test, the client always sends them); https://github.com/esnet/iperf/blob/3.11/src/iperf_api.c (iperf_send stops at blocks_sent >= blocks); https://github.com/esnet/iperf/blob/3.11/src/iperf_api.h (DEFAULT_TCP_BLKSIZE 128 * 1024)")
}
