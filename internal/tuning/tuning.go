// Package tuning holds the kernel and link settings sparkrig judges and
// sets, one number per threshold and per target: the checks that judge a
// node (internal/check) and the fix that sets it (internal/fix) read them
// here, so the doctor's advice and fix's files state the same values.
package tuning

import "fmt"

// Socket buffers. Source: seed 002 ("AI Systems Performance Engineering",
// C. Fregly, O'Reilly, "Tune TCP/IP Stack if Using Ethernet"): a few MB at
// least, 16-64 MB common on 100-200 Gb/s links.
const (
	// SocketBufferMin is the smallest socket buffer maximum (rmem_max,
	// wmem_max, tcp_rmem/tcp_wmem's third field) judged enough for a
	// 100 Gb/s link.
	SocketBufferMin = 4 << 20
	// SocketBuffer is the maximum fix sets: 64 MiB covers a 200 Gb/s
	// link's bandwidth-delay product with a wide margin at direct-cable
	// round trips (~2.5 MB at 100 µs).
	SocketBuffer = 64 << 20
)

// TCPRmem and TCPWmem are the min, default and max fix sets for TCP
// autotuning (net.ipv4.tcp_rmem, net.ipv4.tcp_wmem): the kernel's own
// minimum and default, with the maximum raised to SocketBuffer.
var (
	TCPRmem = [3]int64{4096, 131072, SocketBuffer}
	TCPWmem = [3]int64{4096, 65536, SocketBuffer}
)

// The ephemeral port range fix sets (net.ipv4.ip_local_port_range), and the
// fewest ports judged enough: as many as it holds. Source: seed 004 (notes
// on "AI Systems Performance Engineering" ch. 4: "Widen port range in
// /proc/sys/net/ipv4/ip_local_port_range. Example: 10000 65535").
const (
	PortRangeLow  = 10000
	PortRangeHigh = 65535
	PortRangeMin  = PortRangeHigh - PortRangeLow + 1
)

// RailMTU is the MTU of a RoCE rail: what the checks expect and fix sets.
// Source: seed 000 (DGX Spark platform notes: 9000 on the CX-7 netdevs,
// the same on both ends of a link and on both twins).
const RailMTU = 9000

// Triple writes a tcp_rmem/tcp_wmem value as sysctl takes it.
func Triple(v [3]int64) string { return fmt.Sprintf("%d %d %d", v[0], v[1], v[2]) }

// PortRange writes the port range as sysctl takes it.
func PortRange() string { return fmt.Sprintf("%d %d", PortRangeLow, PortRangeHigh) }

// The TCP ports sparkrig's benchmarks listen on: perftest, the TCP test,
// the native collectives' rendezvous and the qualify directions all lie in
// BenchBasePort … BenchBasePort+BenchPortSpan-1 (internal/bench lays them
// out), and fix keeps that range out of the ephemeral one (ReservedPorts)
// so a connection's source port never takes a server's. 18515 is perftest's
// own default port (linux-rdma/perftest, perftest_parameters.h,
// DEF_PORT 18515).
const (
	BenchBasePort = 18515
	BenchPortSpan = 300
)

// ReservedPorts is the net.ipv4.ip_local_reserved_ports value that keeps
// the benchmarks' default ports from being handed out as ephemeral ones.
func ReservedPorts() string {
	return fmt.Sprintf("%d-%d", BenchBasePort, BenchBasePort+BenchPortSpan-1)
}
