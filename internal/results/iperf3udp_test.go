package results

import (
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
