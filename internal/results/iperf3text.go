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
	// UDPNegativeLost counts UDP lines whose Lost is negative and
	// UDPLostOverTotal those whose Lost exceeds a non-negative Total:
	// counts no network gives (a counter that wrapped, a value printed
	// wrong); UDPOddLine is the first such line.
	UDPNegativeLost  int    `json:"udp_negative_lost,omitempty"`
	UDPLostOverTotal int    `json:"udp_lost_over_total,omitempty"`
	UDPOddLine       string `json:"udp_odd_line,omitempty"`
}

// udpCounts reads "<jitter> ms <lost>/<total>" of a UDP line and counts
// the impossible ones.
func (how *Iperf3Text) udpCounts(line, rest []byte) {
	f := bytes.Fields(rest)
	for i := 0; i+1 < len(f); i++ {
		if string(f[i]) != "ms" {
			continue
		}
		lost, total, ok := bytes.Cut(f[i+1], []byte("/"))
		l, e1 := strconv.ParseInt(string(lost), 10, 64)
		t, e2 := strconv.ParseInt(string(total), 10, 64)
		if !ok || e1 != nil || e2 != nil {
			return
		}
		switch {
		case l < 0:
			how.UDPNegativeLost++
		case t >= 0 && l > t:
			how.UDPLostOverTotal++
		default:
			return
		}
		if how.UDPOddLine == "" {
			b := bytes.TrimSpace(line)
			b = b[:min(len(b), 200)]
			how.UDPOddLine = string(bytes.ToValidUTF8(b, []byte("?")))
		}
		return
	}
}

// ParseIperf3Text reads iperf3's text output (what people paste: the
// per-second intervals and the summary), client or server side, streaming.
func ParseIperf3Text(r io.Reader) (Iperf3Result, Iperf3Text, error) {
	res := Iperf3Result{Protocol: "TCP"}
	var how Iperf3Text
	lr := NewLineReader(r)
	streams := map[string]bool{}
	summary, datagrams := false, false
	var udpEnds map[string]float64 // each stream's last interval end
	var sumIntervals, oneIntervals []float64
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
		case bytes.HasPrefix(t, []byte("iperf Version")), bytes.HasPrefix(t, []byte("iperf ")) && bytes.Contains(t, []byte(" 3.")):
			if f := bytes.Fields(t); len(f) > 1 && res.Version == "" {
				res.Version = string(f[len(f)-1])
			}
		case bytes.HasPrefix(t, []byte("iperf3: error")):
			res.Error = string(bytes.TrimSpace(t[len("iperf3: error"):]))
			res.Error = string(bytes.TrimLeft([]byte(res.Error), "- "))
		case bytes.HasPrefix(t, []byte("- - - -")):
			summary = true
		case len(t) > 0 && t[0] == '[':
			j := bytes.IndexByte(t, ']')
			if j < 0 {
				continue
			}
			id := string(bytes.TrimSpace(t[1:j]))
			rest := t[j+1:]
			if bytes.Contains(rest, []byte(" connected to ")) {
				if len(streams) < 1024 {
					streams[id] = true
				}
				continue
			}
			if bytes.Contains(rest, []byte("Jitter")) || bytes.Contains(rest, []byte("Lost/Total")) {
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
			// only a UDP line has "<jitter> ms <lost>/<total>", header or not
			how.udpCounts(t, rest)
			if (datagrams || res.Protocol == "UDP") && id != "SUM" && intervalLine(rest) && !bytes.HasSuffix(rest, []byte("sender")) && !bytes.HasSuffix(rest, []byte("receiver")) {
				if udpEnds == nil {
					udpEnds = map[string]float64{}
				}
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
			default:
				if len(oneIntervals) < 1<<20 {
					oneIntervals = append(oneIntervals, rate)
				}
			}
		}
	}
	res.Streams = len(streams)
	ivals := sumIntervals
	if len(ivals) == 0 && res.Streams <= 1 {
		ivals = oneIntervals
	}
	res.Intervals = len(ivals)
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
func (how *Iperf3Text) udpInterval(id string, rest []byte, ends map[string]float64) {
	f := bytes.Fields(rest)
	if len(f) < 7 {
		return
	}
	from, to, _ := bytes.Cut(f[0], []byte("-"))
	start, e1 := strconv.ParseFloat(string(from), 64)
	end, e2 := strconv.ParseFloat(string(to), 64)
	if e1 != nil || e2 != nil {
		return
	}
	if last, ok := ends[id]; ok && start < last {
		return
	}
	if _, ok := ends[id]; ok || len(ends) < 1024 {
		ends[id] = end
	}
	v, err := strconv.ParseFloat(string(f[2]), 64)
	mult, unit := 0.0, string(f[3])
	switch unit {
	case "Bytes":
		mult = 1
	case "KBytes":
		mult = 1 << 10
	case "MBytes":
		mult = 1 << 20
	case "GBytes":
		mult = 1 << 30
	}
	if err != nil || mult == 0 || v < 0 || v != v {
		return
	}
	var got int64
	switch {
	case len(f) >= 9 && string(f[7]) == "ms":
		lost, total, ok := bytes.Cut(f[8], []byte("/"))
		l, e1 := strconv.ParseInt(string(lost), 10, 64)
		t, e2 := strconv.ParseInt(string(total), 10, 64)
		if !ok || e1 != nil || e2 != nil || l < 0 || t < l || t > 1<<40 || how.UDPTotal > 1<<60 {
			return
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
	if got > 0 && v*mult/float64(got) < 1<<17 {
		how.DatagramBytes = max(how.DatagramBytes, int(v*mult/float64(got)+0.5))
	}
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

func firstWord(b []byte) []byte {
	if f := bytes.Fields(b); len(f) > 0 {
		return f[0]
	}
	return nil
}
