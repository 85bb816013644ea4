package results

import (
	"bytes"
	"strings"
	"testing"
)

// UDP interval lines give the datagram size (transfer over datagrams) and
// the receiver's loss; real lines from esnet/iperf issues 905 (server side,
// 8 KB datagrams of iperf 3.1.3) and 698 (client side, -k 10).
func TestIperf3TextUDPDatagrams(t *testing.T) {
	server := `Accepted connection from 10.4.2.38, port 58166
[  5] local 10.6.2.41 port 5201 connected to 10.4.2.38 port 46850
[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams
[  5]   0.00-1.00   sec  64.0 KBytes   524 Kbits/sec  2.111 ms  11/19 (58%)  
[  5]   1.00-2.00   sec  0.00 Bytes  0.00 bits/sec  2.111 ms  0/0 (0%)     <<<<
[  5]   2.00-3.00   sec  0.00 Bytes  0.00 bits/sec  2.111 ms  0/0 (0%)  
`
	_, how, err := ParseIperf3Text(strings.NewReader(server))
	if err != nil || how.DatagramBytes != 8192 || how.UDPLost != 11 || how.UDPTotal != 19 || how.UDPEmptyIntervals != 2 {
		t.Errorf("server: %+v %v", how, err)
	}
	client := `Connecting to host x.x.79.106, port 5201
[  4] local x.x.230.164 port 53812 connected to x.x.79.106 port 5201
[ ID] Interval           Transfer     Bandwidth       Total Datagrams
[  4]   0.00-0.10   sec  14.1 KBytes  1.16 Mbits/sec  10
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams
[  4]   0.00-0.10   sec  14.1 KBytes  1.16 Mbits/sec  28487.952 ms  0/1 (0%)
[  4] Sent 1 datagrams
`
	_, how, err = ParseIperf3Text(strings.NewReader(client))
	if err != nil || how.DatagramBytes != 1444 || how.UDPSent != 10 || how.UDPSentSummary != 1 || how.UDPSentLines != 1 {
		t.Errorf("client: %+v %v", how, err)
	}
	tcp := `[  5]   0.00-1.00   sec  4.19 GBytes  36.0 Gbits/sec  328   1.36 MBytes
[  5]   1.00-2.00   sec  4.05 GBytes  34.8 Gbits/sec  239   1.15 MBytes
`
	if _, how, _ := ParseIperf3Text(strings.NewReader(tcp)); how.DatagramBytes != 0 || how.UDPTotal != 0 {
		t.Errorf("TCP lines read as UDP: %+v", how)
	}
}

// A receiver line is UDP by its columns, and a count no sequence-gap
// count gives is kept with what the stream counted before it; real
// pastes from esnet/iperf issues 1554, 1892 and 841.
func TestIperf3TextUDPCounts(t *testing.T) {
	r, how, err := ParseIperf3Text(bytes.NewReader(verbatim(t, "iperf3-text/03_udp_summary_32bit_i586_3.14.txt")))
	o := how.UDPOdd
	if err != nil || r.Protocol != "UDP" || o == nil || o.Lost != 17179869184 || o.Total != 0 || o.Label != "" || o.Percent != "-2.5e-39" ||
		o.Bytes != 128*1024 || how.UDPRecvTotal != 4 || how.UDPRecvLost != 0 || how.UDPRecvLines != 1 || how.UDPOddLines != 1 {
		t.Errorf("3.14 i586: %+v %+v %v", r, how, err)
	}
	r, how, err = ParseIperf3Text(bytes.NewReader(verbatim(t, "iperf3-text/04_udp_server_counter_wrap_5040s.txt")))
	o = how.UDPOdd
	if err != nil || r.Protocol != "UDP" || o == nil || o.Start != 5040 || o.Lost != -792929 || o.Total != 24122 || o.Before != 853455+853309 ||
		o.BeforeSeconds != 2 || o.FirstStart != 5038 || o.Intervals != 2 || how.UDPOddLines != 4 || how.UDPZeroTotalBytes != 3 ||
		how.UDPLost != 33900+31600 || how.UDPTotal != 853455+853309 || how.DatagramBytes != 16 {
		t.Errorf("wrap: %+v %+v %v", r, how, err)
	}
	r, how, err = ParseIperf3Text(bytes.NewReader(verbatim(t, "iperf3-text/05_udp_unlimited_rate_37pct_loss.txt")))
	if err != nil || r.Protocol != "UDP" || how.UDPOdd != nil || how.UDPRecvLost != 10427939 || how.UDPRecvTotal != 28304262 ||
		how.UDPSent != 28310420 || how.DatagramBytes != 1460 || r.SentGbps != 5.51 || r.ReceivedGbps != 3.48 {
		t.Errorf("overrun: %+v %+v %v", r, how, err)
	}
}

// Counts at the 64-bit limits: printed unsigned at 2^63 or more (iperf3
// 3.14 to 3.16) they are the negative number of the same bits; past
// 2^64, or not numbers, they are not counts at all.
func TestIperf3TextUDPCountLimits(t *testing.T) {
	for _, c := range []struct {
		cols        string
		lost, total int64
		unsigned    bool
		ok          bool
	}{
		{"0.001 ms  18446744073708758687/0 (0%)", -792929, 0, true, true},
		{"0.001 ms  9223372036854775808/0 (0%)", -1 << 63, 0, true, true},
		{"0.001 ms  9223372036854775807/9223372036854775807 (0%)", 1<<63 - 1, 1<<63 - 1, false, true},
		{"0.001 ms  -9223372036854775808/1 (0%)", -1 << 63, 1, false, true},
		{"0.001 ms  18446744073709551616/0 (0%)", 0, 0, false, false},
		{"0.001 ms  Unknown/44 (0%)", 0, 0, false, false},
		{"0.001 ms  12 (0%)", 0, 0, false, false},
	} {
		line := "[  5]   1.00-2.00   sec  12.5 MBytes   105 Mbits/sec  " + c.cols
		lost, total, unsigned, ok := udpCountColumns([]byte(line[5:]))
		if lost != c.lost || total != c.total || unsigned != c.unsigned || ok != c.ok {
			t.Errorf("%q: %d/%d unsigned %v ok %v", c.cols, lost, total, unsigned, ok)
		}
		_, how, err := ParseIperf3Text(strings.NewReader(line + "\n"))
		if err != nil || how.UDPLost < 0 || how.UDPLost > how.UDPTotal || c.ok && c.lost < 0 && (how.UDPOdd == nil || how.UDPOdd.Lost != c.lost) {
			t.Errorf("%q: %+v %v", c.cols, how, err)
		}
	}
}

// Lines of TCP never read as UDP, and the -b value and version are read
// from the command and version lines.
func TestIperf3TextRateFlagVersion(t *testing.T) {
	for line, want := range map[string]string{
		"$ iperf3 -c 10.0.0.2 -u -b 0 -t 60":                 "0",
		"iperf3 --client 192.168.25.5 --udp -b10g -w2m -l9k": "10g",
		"iperf3 -c h -u --bitrate=5G":                        "5G",
		"# iperf3 -c h -u --bandwidth 100M -P 4":             "100M",
		"iperf3 -c h -u -t 10":                               "",
	} {
		if _, how, _ := ParseIperf3Text(strings.NewReader(line + "\n")); how.RateFlag != want {
			t.Errorf("%q: %q, want %q", line, how.RateFlag, want)
		}
	}
	for line, want := range map[string]string{"iperf 3.14 (cJSON 1.7.15)": "3.14", "iperf 3.1.7": "3.1.7", "iperf Version 3.0.11": "3.0.11"} {
		if r, _, _ := ParseIperf3Text(strings.NewReader(line + "\n")); r.Version != want {
			t.Errorf("%q: %q, want %q", line, r.Version, want)
		}
	}
	tcp := "[  5]   0.00-1.00   sec   719 MBytes  6.03 Gbits/sec    0   1.75 MBytes\n[  5]   0.00-10.00  sec  7.03 GBytes  6.04 Gbits/sec    0             sender\n"
	if r, how, _ := ParseIperf3Text(strings.NewReader(tcp)); r.Protocol != "TCP" || how.UDPOdd != nil || how.UDPRecvLines != 0 {
		t.Errorf("TCP: %+v %+v", r, how)
	}
}

// The -l/--length value is read in bytes from the command line, in every
// spelling getopt_long takes; the out-of-order line is read, a [SUM]
// line's count winning over its streams'.
func TestIperf3TextLenFlagOutOfOrder(t *testing.T) {
	for line, want := range map[string]int{
		"% iperf3 -c 202.254.1.4 --len 1472 --udp --omit 2":  1472,
		"iperf3 --client 192.168.25.5 --udp -b10g -w2m -l9k": 9 << 10,
		"iperf3 -c h -u --length=8948":                       8948,
		"iperf3 -c h -u -l1400 -t 10":                        1400,
		"iperf3 -c h -u --leng 2M":                           2 << 20,
		"iperf3 -c h -u --logfile x -t 10":                   0,
		"iperf3 -c h -u -l x":                                0,
	} {
		if _, how, _ := ParseIperf3Text(strings.NewReader(line + "\n")); how.LenFlag != want {
			t.Errorf("%q: %d, want %d", line, how.LenFlag, want)
		}
	}
	text := "[  5]  0.0-60.0 sec  7 datagrams received out-of-order\n[  7]  0.0-60.0 sec  5 datagrams received out-of-order\n"
	if _, how, _ := ParseIperf3Text(strings.NewReader(text)); how.UDPOutOfOrder != 12 {
		t.Errorf("streams: out of order %d, want 12", how.UDPOutOfOrder)
	}
	text += "[SUM]  0.0-60.0 sec  13 datagrams received out-of-order\n"
	if _, how, _ := ParseIperf3Text(strings.NewReader(text)); how.UDPOutOfOrder != 13 {
		t.Errorf("[SUM]: out of order %d, want 13", how.UDPOutOfOrder)
	}
}

// A test whose intervals fall to nothing for good is read with the bytes
// before (and how far rounding may move them); one that resumes, or ends
// on a single empty interval, is not; "Reverse mode" and -R are read.
func TestIperf3TextStopped(t *testing.T) {
	text := "Reverse mode, remote host h is sending\n[  5]   0.00-1.00   sec   128 KBytes  1.04 Mbits/sec\n[  5]   1.00-2.00   sec  0.00 Bytes  0.00 bits/sec\n[  5]   2.00-3.00   sec  0.00 Bytes  0.00 bits/sec\n"
	_, how, _ := ParseIperf3Text(strings.NewReader(text))
	if st := how.Stopped; !how.Reverse || st == nil || st.Bytes != 128<<10 || st.Tolerance != 512 || st.Intervals != 1 || st.ZeroIntervals != 2 {
		t.Errorf("%v %+v", how.Reverse, how.Stopped)
	}
	for _, text := range []string{
		"[  5]   0.00-1.00   sec   128 KBytes  1.04 Mbits/sec\n[  5]   1.00-2.00   sec  0.00 Bytes  0.00 bits/sec\n",
		"[  5]   0.00-1.00   sec   128 KBytes  1.04 Mbits/sec\n[  5]   1.00-2.00   sec  0.00 Bytes  0.00 bits/sec\n[  5]   2.00-3.00   sec  0.00 Bytes  0.00 bits/sec\n[  5]   3.00-4.00   sec  1.25 MBytes  10.5 Mbits/sec\n",
	} {
		if _, how, _ := ParseIperf3Text(strings.NewReader(text)); how.Stopped != nil || how.Reverse {
			t.Errorf("%+v\n%s", how.Stopped, text)
		}
	}
	if _, how, _ := ParseIperf3Text(strings.NewReader("$ iperf3 -c h -R -t 10\n")); !how.Reverse {
		t.Error("-R not read")
	}
}

// TestCommandArgs: flags are read from command lines only (after a shell
// prompt or sudo), from every such line, and never from prose that names
// iperf3.
func TestCommandArgs(t *testing.T) {
	for _, c := range []struct {
		text    string
		rate    string
		length  int
		reverse bool
	}{
		{"user@h:~$ iperf3 -c h -u -b 1G -l 1400\n$ iperf3 -c h -u -R\n", "1G", 1400, true},
		{"# sudo /usr/local/bin/iperf3 -c h --length=8K --reverse\n", "", 8192, true},
		{"iperf3 -c h -b0\n", "0", 0, false},
		{"then I ran the iperf3 manual example with -R -b 5G -l 9000\n", "", 0, false},
		{"Note: iperf3 -R would help\n", "", 0, false},
	} {
		_, how, _ := ParseIperf3Text(strings.NewReader(c.text))
		if how.RateFlag != c.rate || how.LenFlag != c.length || how.Reverse != c.reverse {
			t.Errorf("%q: rate %q length %d reverse %v, want %q %d %v", c.text, how.RateFlag, how.LenFlag, how.Reverse, c.rate, c.length, c.reverse)
		}
	}
}
