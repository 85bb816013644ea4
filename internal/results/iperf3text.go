package results

import (
	"bytes"
	"io"
	"strconv"
)

// Iperf3Text says where a text output's rate came from: "receiver" (the
// summary's receiver line: what crossed the wire), "sender" (the sender's
// line, when the receiver's is not in the text) or "intervals" (no summary
// line: the mean of the interval rates).
type Iperf3Text struct {
	RateFrom string `json:"rate_from"`
	// DatagramBytes is the largest UDP datagram payload an interval line
	// shows (its transfer over its datagrams; 0 when no UDP interval line
	// counts datagrams). The transfer is printed to three digits, so this is
	// an estimate within about 1 %.
	DatagramBytes int `json:"datagram_bytes,omitempty"`
	// UDPLost and UDPTotal sum the receiver's Lost/Total over its interval
	// lines; UDPEmptyIntervals counts receiver intervals with no datagram
	// after one had arrived.
	UDPLost           int64 `json:"udp_lost,omitempty"`
	UDPTotal          int64 `json:"udp_total,omitempty"`
	UDPEmptyIntervals int   `json:"udp_empty_intervals,omitempty"`
	// UDPSent sums a UDP sender's interval "Total Datagrams"; UDPSentSummary
	// sums the summary's "Sent N datagrams" lines (iperf3 before 3.2 prints
	// there the count the receiver reported back).
	UDPSent        int64 `json:"udp_sent,omitempty"`
	UDPSentSummary int64 `json:"udp_sent_summary,omitempty"`
	UDPSentLines   int   `json:"udp_sent_lines,omitempty"`
	// UDPRecvLost and UDPRecvTotal are the receiver summary's Lost/Total
	// (its [SUM] line, else its streams' lines added); UDPRecvLines counts
	// the lines read for them.
	UDPRecvLost  int64 `json:"udp_recv_lost,omitempty"`
	UDPRecvTotal int64 `json:"udp_recv_total,omitempty"`
	UDPRecvLines int   `json:"udp_recv_lines,omitempty"`
	// UDPOdd is the first Lost/Total count that cannot be a true count
	// (negative, or more lost than counted); UDPOddLines counts such lines
	// and UDPLateLines the interval lines whose loss is negative while
	// their total is not smaller than it (late datagrams given back).
	UDPOdd       *UDPOddCount `json:"udp_odd,omitempty"`
	UDPOddLines  int          `json:"udp_odd_lines,omitempty"`
	UDPLateLines int          `json:"udp_late_lines,omitempty"`
	// UDPZeroTotalBytes counts UDP lines that moved data while counting
	// no datagram (the sequence number did not advance).
	UDPZeroTotalBytes int `json:"udp_zero_total_bytes,omitempty"`
	// RateFlag is the -b/--bitrate value of an iperf3 command line in
	// the text ("0": unlimited), "" when none is shown.
	RateFlag string `json:"rate_flag,omitempty"`
	// LenFlag is the -l/--length of an iperf3 command line in the text,
	// in bytes (the UDP datagram payload), 0 when none is shown.
	LenFlag int `json:"len_flag,omitempty"`
	// UDPStuck is the first Lost/Total whose total is 2^31-1 or 2^32-1,
	// the largest value a 32-bit counter holds; UDPOutOfOrder is the
	// receiver's "N datagrams received out-of-order" ([SUM], else its
	// streams' lines added).
	UDPStuck      *UDPOddCount `json:"udp_stuck,omitempty"`
	UDPOutOfOrder int64        `json:"udp_out_of_order,omitempty"`
	// Reverse: the client's "Reverse mode" line or a -R/--reverse on its
	// command line (the server sends).
	Reverse bool `json:"reverse,omitempty"`
	// Stopped is set when data moved in the first intervals and every
	// interval after them, two or more, moved none (the [SUM] lines, else
	// the one stream's).
	Stopped *Iperf3Stop `json:"stopped,omitempty"`
}

// Iperf3Stop is what moved before a test's intervals fell to nothing for
// good: Bytes over Intervals lines, each printed to three digits, so the
// true sum lies within Tolerance of it; then ZeroIntervals lines of 0.
type Iperf3Stop struct {
	Bytes         float64 `json:"bytes"`
	Tolerance     float64 `json:"tolerance"`
	Intervals     int     `json:"intervals"`
	ZeroIntervals int     `json:"zero_intervals"`
}

// stopShape follows one series of interval lines for Iperf3Stop.
type stopShape struct {
	stop    Iperf3Stop
	resumed bool // data moved again after a zero interval
}

func (s *stopShape) add(moved, tol float64) {
	switch {
	case moved == 0 && s.stop.Bytes > 0:
		s.stop.ZeroIntervals++
	case moved > 0 && s.stop.ZeroIntervals > 0:
		s.resumed = true
	case moved > 0 && s.stop.Bytes < 1e18:
		s.stop.Bytes += moved
		s.stop.Tolerance += tol
		s.stop.Intervals++
	}
}

func (s *stopShape) result() *Iperf3Stop {
	if s.resumed || s.stop.ZeroIntervals < 2 {
		return nil
	}
	st := s.stop
	return &st
}

// UDPOddCount is a UDP Lost/Total count that cannot be true, and what the
// text says about the stream before it.
type UDPOddCount struct {
	Stream  string  `json:"stream"`
	Start   float64 `json:"start_s"`
	End     float64 `json:"end_s"`
	Lost    int64   `json:"lost"`
	Total   int64   `json:"total"`
	Bytes   float64 `json:"bytes"`
	Label   string  `json:"label,omitempty"` // "sender", "receiver" or ""
	Percent string  `json:"percent,omitempty"`
	Line    string  `json:"line"`
	// Unsigned: the count was printed as an unsigned number of 2^63 or
	// more, the two's complement of the negative Lost holds.
	Unsigned bool `json:"unsigned,omitempty"`
	// Before sums the stream's Total over its interval lines before this
	// one, over BeforeSeconds of intervals starting at FirstStart.
	Before        int64   `json:"before"`
	BeforeSeconds float64 `json:"before_s"`
	FirstStart    float64 `json:"first_start_s"`
	// Intervals counts the stream's interval lines before this one.
	Intervals int `json:"intervals"`
	// ReceiverTotal is the Total of the same stream's receiver summary
	// line read after this one, when ReceiverSeen.
	ReceiverTotal int64 `json:"receiver_total,omitempty"`
	ReceiverSeen  bool  `json:"receiver_seen,omitempty"`
	// AfterOmitted: every interval line of the stream before this one was
	// an "(omitted)" warm-up line, whose losses add up to OmittedLost.
	AfterOmitted bool  `json:"after_omitted,omitempty"`
	OmittedLost  int64 `json:"omitted_lost,omitempty"`
}

// ParseIperf3Text reads iperf3's text output (what people paste: the
// per-second intervals and the summary), client or server side, streaming.
func ParseIperf3Text(r io.Reader) (Iperf3Result, Iperf3Text, error) {
	res := Iperf3Result{Protocol: "TCP"}
	var how Iperf3Text
	lr := NewLineReader(r)
	streams := map[string]bool{}
	summary, datagrams := false, false
	var udpEnds map[string]*udpStream // each stream's intervals so far
	recvSum := false                  // the receiver's [SUM] summary was read
	ooSum := false                    // a [SUM] out-of-order line was read
	var sumIntervals, oneIntervals []float64
	var sumStop, oneStop stopShape
	var recv, sent *float64
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, how, err
		}
		t := bytes.TrimSpace(line)
		switch {
		case bytes.HasPrefix(t, []byte("Connecting to host ")):
			res.Role = "client"
			res.Remote = string(bytes.TrimSuffix(firstWord(t[len("Connecting to host "):]), []byte(",")))
		case bytes.HasPrefix(t, []byte("Accepted connection from ")):
			res.Role = "server"
			res.Remote = string(bytes.TrimSuffix(firstWord(t[len("Accepted connection from "):]), []byte(",")))
		case bytes.HasPrefix(t, []byte("Reverse mode, ")):
			how.Reverse = true
		case bytes.HasPrefix(t, []byte("iperf Version")), bytes.HasPrefix(t, []byte("iperf ")) && bytes.Contains(t, []byte(" 3.")):
			// "iperf 3.14 (cJSON 1.7.15)", "iperf Version 3.0.11"
			for _, w := range bytes.Fields(t)[1:] {
				if res.Version == "" && len(w) > 1 && len(w) < 32 && w[0] >= '0' && w[0] <= '9' {
					res.Version = string(w)
				}
			}
		case bytes.HasPrefix(t, []byte("iperf3: error")):
			res.Error = string(bytes.TrimSpace(t[len("iperf3: error"):]))
			res.Error = string(bytes.TrimLeft([]byte(res.Error), "- "))
		case bytes.HasPrefix(t, []byte("- - - -")):
			summary = true
		case len(t) > 0 && t[0] != '[' && bytes.Contains(t, []byte("iperf3 ")):
			args := commandArgs(t) // nil for prose: no flag read
			if how.RateFlag == "" {
				how.RateFlag = rateFlag(args)
			}
			if how.LenFlag == 0 {
				how.LenFlag = lenFlag(args)
			}
			for _, w := range args {
				how.Reverse = how.Reverse || string(w) == "-R" || string(w) == "--reverse"
			}
		case len(t) > 0 && t[0] == '[':
			j := bytes.IndexByte(t, ']')
			if j < 0 {
				continue
			}
			id := string(bytes.TrimSpace(t[1:j]))
			rest := t[j+1:]
			if n, ok := outOfOrder(rest); ok {
				switch {
				case id == "SUM": // a [SUM] line replaces its streams' lines
					how.UDPOutOfOrder, ooSum = n, true
				case !ooSum && how.UDPOutOfOrder < 1<<62:
					how.UDPOutOfOrder += n
				}
				continue
			}
			if bytes.Contains(rest, []byte(" connected to ")) {
				if len(streams) < 1024 {
					streams[id] = true
				}
				continue
			}
			lost, total, unsigned, counted := udpCountColumns(rest)
			if counted || bytes.Contains(rest, []byte("Jitter")) || bytes.Contains(rest, []byte("Lost/Total")) {
				// a receiver line is UDP by its shape, header or not
				res.Protocol = "UDP"
			}
			if bytes.Contains(rest, []byte("Total Datagrams")) {
				datagrams = true
			}
			if f := bytes.Fields(rest); id != "SUM" && len(f) == 3 && string(f[0]) == "Sent" && string(f[2]) == "datagrams" {
				if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil && n >= 0 && n < 1<<40 && how.UDPSentSummary < 1<<60 {
					how.UDPSentSummary += n
					how.UDPSentLines++
				}
				continue
			}
			rate, ok := iperfRate(rest)
			if !ok || id == "ID" {
				continue
			}
			if udpEnds == nil && (counted || datagrams || res.Protocol == "UDP") {
				udpEnds = map[string]*udpStream{}
			}
			if counted {
				label := ""
				if bytes.HasSuffix(rest, []byte("sender")) {
					label = "sender"
				} else if bytes.HasSuffix(rest, []byte("receiver")) {
					label = "receiver"
				}
				c := udpLine{id: id, rest: rest, label: label, lost: lost, total: total, unsigned: unsigned}
				if o := how.UDPOdd; o != nil && label == "receiver" && o.Label != "receiver" && o.Stream == id && !o.ReceiverSeen {
					o.ReceiverTotal, o.ReceiverSeen = total, true
				}
				valid := how.udpCount(c, udpEnds[id])
				if valid && label == "sender" && id != "SUM" && total > 0 {
					// the sender summary: its transfer over its datagrams
					if moved, ok := transferBytes(bytes.Fields(rest)[2], bytes.Fields(rest)[3]); ok && moved/float64(total) < 1<<17 {
						how.DatagramBytes = max(how.DatagramBytes, int(moved/float64(total)+0.5))
					}
				}
				if valid && label == "receiver" {
					if id == "SUM" && !recvSum {
						recvSum, how.UDPRecvLost, how.UDPRecvTotal, how.UDPRecvLines = true, lost, total, 1
					} else if id != "SUM" && !recvSum && how.UDPRecvTotal < 1<<60 && total < 1<<60 {
						how.UDPRecvLost, how.UDPRecvTotal, how.UDPRecvLines = how.UDPRecvLost+lost, how.UDPRecvTotal+total, how.UDPRecvLines+1
					}
				}
			}
			if (datagrams || res.Protocol == "UDP") && id != "SUM" && intervalLine(rest) && !bytes.HasSuffix(rest, []byte("sender")) && !bytes.HasSuffix(rest, []byte("receiver")) {
				how.udpInterval(id, rest, udpEnds)
			}
			switch {
			case bytes.HasSuffix(rest, []byte("receiver")):
				if id == "SUM" || recv == nil {
					recv = &rate
				}
			case bytes.HasSuffix(rest, []byte("sender")):
				if id == "SUM" || sent == nil {
					sent = &rate
				}
			case summary && !bytes.Contains(rest, []byte("(omitted)")) && !intervalLine(rest):
			case bytes.Contains(rest, []byte("(omitted)")):
				res.OmittedIntervals++
			case id == "SUM":
				sumIntervals = append(sumIntervals, rate)
				sumStop.add(movedTol(rest))
			default:
				if len(oneIntervals) < 1<<20 {
					oneIntervals = append(oneIntervals, rate)
				}
				oneStop.add(movedTol(rest))
			}
		}
	}
	res.Streams = len(streams)
	ivals := sumIntervals
	if len(ivals) == 0 && res.Streams <= 1 {
		ivals = oneIntervals
	}
	res.Intervals = len(ivals)
	switch {
	case len(sumIntervals) > 0:
		how.Stopped = sumStop.result()
	case res.Streams <= 1:
		how.Stopped = oneStop.result()
	}
	for i, v := range ivals {
		if i == 0 || v < res.MinIntervalGbps {
			res.MinIntervalGbps = v
		}
		res.MaxIntervalGbps = max(res.MaxIntervalGbps, v)
	}
	if sent != nil {
		res.SentGbps = *sent
	}
	switch {
	case recv != nil:
		res.ReceivedGbps, how.RateFrom = *recv, "receiver"
	case sent != nil && *sent > 0:
		res.ReceivedGbps, how.RateFrom = *sent, "sender"
	case len(ivals) > 0:
		var s float64
		for _, v := range ivals {
			s += v
		}
		res.ReceivedGbps, how.RateFrom = s/float64(len(ivals)), "intervals"
	}
	return res, how, nil
}

// udpInterval reads a UDP interval line's datagram columns: the sender's
// "<transfer> <unit> <rate> <unit> <datagrams>" or the receiver's
// "<transfer> <unit> <rate> <unit> <jitter> ms <lost>/<total> (<p>%)".
// A line whose interval starts before its stream's last interval ended is
// a summary (iperf 3.1 prints the receiver's summary without "receiver"):
// its datagrams were counted already.
func (how *Iperf3Text) udpInterval(id string, rest []byte, ends map[string]*udpStream) {
	f := bytes.Fields(rest)
	if len(f) < 7 {
		return
	}
	start, end, ok := intervalSpan(f[0])
	if !ok {
		return
	}
	st := ends[id]
	if st != nil && start < st.end {
		return
	}
	if st == nil && len(ends) < 1024 {
		st = &udpStream{first: start}
		ends[id] = st
	}
	if st != nil {
		st.end = end
		st.n++
	}
	bytesMoved, ok := transferBytes(f[2], f[3])
	if !ok {
		return
	}
	var got int64
	switch {
	case len(f) >= 9 && string(f[7]) == "ms":
		l, t, _, ok := udpCountColumns(rest)
		if !ok || l < 0 || t < l || t > 1<<40 || how.UDPTotal > 1<<60 {
			if ok && st != nil && t >= 0 && t <= 1<<40 {
				st.count(t, end-start)
			}
			return
		}
		if st != nil {
			st.count(t, end-start)
			if bytes.Contains(rest, []byte("(omitted)")) && st.omittedLost < 1<<60 {
				st.omitted++
				st.omittedLost += l
			}
		}
		if t == 0 && how.UDPTotal > 0 {
			how.UDPEmptyIntervals++
		}
		how.UDPLost += l
		how.UDPTotal += t
		got = t - l
	case len(f) == 7:
		n, err := strconv.ParseInt(string(f[6]), 10, 64)
		if err != nil || n < 0 || n > 1<<40 || how.UDPSent > 1<<60 {
			return
		}
		how.UDPSent += n
		got = n
	}
	if got > 0 && bytesMoved/float64(got) < 1<<17 {
		how.DatagramBytes = max(how.DatagramBytes, int(bytesMoved/float64(got)+0.5))
	}
}

// udpStream is what a UDP stream's interval lines counted so far: the
// first interval's start, the last one's end, the datagrams its Total
// column added up over secs seconds, and its interval lines.
type udpStream struct {
	first, end  float64
	total       int64
	secs        float64
	n           int
	omitted     int   // interval lines marked "(omitted)"
	omittedLost int64 // the losses they counted
}

func (st *udpStream) count(t int64, secs float64) {
	if st.total < 1<<60 {
		st.total += t
		st.secs += secs
	}
}

// udpLine is one line with a receiver's Lost/Total columns.
type udpLine struct {
	id, label   string
	rest        []byte
	lost, total int64
	unsigned    bool
}

// udpCount judges one Lost/Total count: iperf3 counts a datagram lost
// when its sequence number skips ahead and gives one back when a late
// one arrives, never below zero (iperf_udp.c), so an interval's loss is
// negative only by the late datagrams it got, and never above its total.
// It reports whether the count can be true.
func (how *Iperf3Text) udpCount(c udpLine, st *udpStream) bool {
	f := bytes.Fields(c.rest)
	moved, _ := transferBytes(f[2], f[3])
	if c.total == 0 && moved > 0 {
		how.UDPZeroTotalBytes++
	}
	if (c.total == 1<<31-1 || c.total == 1<<32-1) && how.UDPStuck == nil {
		how.UDPStuck = oddCount(c, f, moved, st)
	}
	if c.total >= 0 && c.lost <= c.total && c.lost >= -c.total {
		if c.lost < 0 {
			how.UDPLateLines++
		}
		return c.lost >= 0
	}
	how.UDPOddLines++
	if how.UDPOdd == nil {
		how.UDPOdd = oddCount(c, f, moved, st)
	}
	return false
}

// oddCount is what the text says about one Lost/Total line and the
// stream before it.
func oddCount(c udpLine, f [][]byte, moved float64, st *udpStream) *UDPOddCount {
	o := &UDPOddCount{Stream: c.id, Lost: c.lost, Total: c.total, Bytes: moved, Label: c.label, Unsigned: c.unsigned}
	o.Start, o.End, _ = intervalSpan(f[0])
	if line := string(bytes.TrimSpace(c.rest)); len(line) <= 160 {
		o.Line = "[" + c.id + "] " + line
	}
	for i, w := range f {
		if bytes.HasPrefix(w, []byte("(")) && bytes.HasSuffix(w, []byte("%)")) && i > 0 && len(w) < 32 {
			o.Percent = string(w[1 : len(w)-2])
			break
		}
	}
	if st != nil {
		o.Before, o.BeforeSeconds, o.FirstStart, o.Intervals = st.total, st.secs, st.first, st.n
		omitted := bytes.Contains(c.rest, []byte("(omitted)"))
		o.AfterOmitted, o.OmittedLost = st.n > 0 && st.omitted == st.n && !omitted, st.omittedLost
	}
	return o
}

// udpCountColumns reads "<jitter> ms <lost>/<total> (<p>%)" from a line's
// columns after its tag. A count printed unsigned at 2^63 or more (iperf3
// 3.14 to 3.16 print the 64-bit counts with PRIu64) is the negative
// number of the same bits.
func udpCountColumns(rest []byte) (lost, total int64, unsigned, ok bool) {
	f := bytes.Fields(rest)
	for i := 6; i+1 < len(f) && i < 9; i++ {
		if string(f[i]) != "ms" {
			continue
		}
		if _, err := strconv.ParseFloat(string(f[i-1]), 64); err != nil {
			return 0, 0, false, false
		}
		l, t, cut := bytes.Cut(f[i+1], []byte("/"))
		if !cut {
			return 0, 0, false, false
		}
		var u1, u2 bool
		var e1, e2 error
		lost, u1, e1 = countInt(l)
		total, u2, e2 = countInt(t)
		if e1 != nil || e2 != nil {
			return 0, 0, false, false
		}
		return lost, total, u1 || u2, true
	}
	return 0, 0, false, false
}

func countInt(b []byte) (int64, bool, error) {
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return n, false, nil
	}
	u, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || u < 1<<63 {
		return 0, false, strconv.ErrSyntax
	}
	return int64(u), true, nil
}

// intervalSpan reads "0.00-1.00".
func intervalSpan(b []byte) (float64, float64, bool) {
	from, to, _ := bytes.Cut(b, []byte("-"))
	start, e1 := strconv.ParseFloat(string(from), 64)
	end, e2 := strconv.ParseFloat(string(to), 64)
	if e1 != nil || e2 != nil || start != start || end != end {
		return 0, 0, false
	}
	return start, end, true
}

// movedTol is an interval line's transfer in bytes and half a unit of
// its last printed digit, how far the true value may lie from it.
func movedTol(rest []byte) (float64, float64) {
	f := bytes.Fields(rest)
	if len(f) < 4 {
		return 0, 0
	}
	moved, ok := transferBytes(f[2], f[3])
	if !ok {
		return 0, 0
	}
	unit, _ := transferBytes([]byte("1"), f[3])
	half := 0.5 * unit
	if _, frac, ok := bytes.Cut(f[2], []byte(".")); ok {
		for range frac {
			half /= 10
		}
	}
	return moved, half
}

// transferBytes reads iperf3's transfer column ("12.5 MBytes").
func transferBytes(num, unit []byte) (float64, bool) {
	v, err := strconv.ParseFloat(string(num), 64)
	mult := 0.0
	switch string(unit) {
	case "Bytes":
		mult = 1
	case "KBytes":
		mult = 1 << 10
	case "MBytes":
		mult = 1 << 20
	case "GBytes":
		mult = 1 << 30
	case "TBytes":
		mult = 1 << 40
	}
	if err != nil || mult == 0 || v < 0 || v != v || v > 1e15 {
		return 0, false
	}
	return v * mult, true
}

// rateFlag is the -b/--bitrate/--bandwidth value among an iperf3 command
// line's arguments ("0", "10g"), "" when they set none.
func rateFlag(f [][]byte) string {
	for i, w := range f {
		var v []byte
		switch {
		case string(w) == "-b" || string(w) == "--bitrate" || string(w) == "--bandwidth":
			if i+1 < len(f) {
				v = f[i+1]
			}
		case bytes.HasPrefix(w, []byte("-b")) && len(w) > 2 && w[2] >= '0' && w[2] <= '9':
			v = w[2:]
		case bytes.HasPrefix(w, []byte("--bitrate=")) || bytes.HasPrefix(w, []byte("--bandwidth=")):
			_, v, _ = bytes.Cut(w, []byte("="))
		}
		if len(v) > 0 && len(v) <= 32 && v[0] >= '0' && v[0] <= '9' {
			return string(v)
		}
	}
	return ""
}

// lenFlag is the -l/--length among an iperf3 command line's arguments in
// bytes (K and M are 1024-based, as iperf3's unit_atoi reads them), 0 when
// they set none. getopt_long takes any unambiguous prefix of --length
// from "--le".
func lenFlag(f [][]byte) int {
	for i, w := range f {
		var v []byte
		name, val, eq := bytes.Cut(w, []byte("="))
		switch {
		case string(w) == "-l" || len(name) >= 4 && bytes.HasPrefix([]byte("--length"), name) && !eq:
			if i+1 < len(f) {
				v = f[i+1]
			}
		case len(name) >= 4 && bytes.HasPrefix([]byte("--length"), name) && eq:
			v = val
		case bytes.HasPrefix(w, []byte("-l")) && len(w) > 2 && w[2] >= '0' && w[2] <= '9':
			v = w[2:]
		}
		if n := unitInt(v); n > 0 {
			return n
		}
	}
	return 0
}

// unitInt reads "1472", "8K", "1m" as iperf3 does; 0 when it cannot.
func unitInt(v []byte) int {
	if len(v) == 0 || len(v) > 16 {
		return 0
	}
	mult := 1
	switch v[len(v)-1] {
	case 'k', 'K':
		mult, v = 1<<10, v[:len(v)-1]
	case 'm', 'M':
		mult, v = 1<<20, v[:len(v)-1]
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n <= 0 || n > 1<<20 {
		return 0
	}
	return n * mult
}

// outOfOrder reads a receiver's "0.0-86400.0 sec  N datagrams received
// out-of-order" line.
func outOfOrder(rest []byte) (int64, bool) {
	f := bytes.Fields(rest)
	if len(f) != 6 || string(f[1]) != "sec" || string(f[3]) != "datagrams" || string(f[5]) != "out-of-order" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil || n < 0 || n > 1<<62 {
		return 0, false
	}
	return n, true
}

// intervalLine: "0.00-1.00   sec" follows the tag of an interval line.
func intervalLine(rest []byte) bool {
	f := bytes.Fields(rest)
	return len(f) > 1 && bytes.IndexByte(f[0], '-') > 0 && string(f[1]) == "sec"
}

// iperfRate finds "<number> <unit>bits/sec" and returns it in Gb/s.
func iperfRate(rest []byte) (float64, bool) {
	f := bytes.Fields(rest)
	for i := 1; i < len(f); i++ {
		var mult float64
		switch string(f[i]) {
		case "bits/sec":
			mult = 1e-9
		case "Kbits/sec":
			mult = 1e-6
		case "Mbits/sec":
			mult = 1e-3
		case "Gbits/sec":
			mult = 1
		case "Tbits/sec":
			mult = 1e3
		default:
			continue
		}
		v, err := strconv.ParseFloat(string(f[i-1]), 64)
		if err != nil || v < 0 || v != v {
			return 0, false
		}
		return v * mult, true
	}
	return 0, false
}

// commandArgs is the arguments of an iperf3 command line ("iperf3 -c h -R",
// "$ sudo /usr/bin/iperf3 -s"): the words after the iperf3 word where only
// a shell prompt or sudo stands before it; nil for any other line (prose
// that names iperf3 sets no flag).
func commandArgs(t []byte) [][]byte {
	f := bytes.Fields(t)
	for i, w := range f {
		if i > 3 {
			return nil
		}
		if string(w) == "iperf3" || bytes.HasSuffix(w, []byte("/iperf3")) {
			return f[i+1:]
		}
		if string(w) != "sudo" && !bytes.ContainsAny(w[len(w)-1:], "$#>%") {
			return nil
		}
	}
	return nil
}

func firstWord(b []byte) []byte {
	if f := bytes.Fields(b); len(f) > 0 {
		return f[0]
	}
	return nil
}
