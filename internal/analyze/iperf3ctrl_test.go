package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// An iperf3 client whose control connection closes before any stream
// connected found no iperf3 server at the port, whatever the address,
// port, version or line prefix (field case 175, esnet/iperf#1803); the same
// error after a stream connected, at a server, or with no client line to
// say which end printed it is not that.
func TestIperfNoServerAtPort(t *testing.T) {
	const id = "iperf3.no-server-at-port"
	const closed = "iperf3: error - control socket has closed unexpectedly\n"
	r := rand.New(rand.NewPCG(175, 1803))
	for i := 0; i < 20; i++ {
		host := fmt.Sprintf("%d.%d.%d.%d", 10+r.IntN(200), r.IntN(256), r.IntN(256), 1+r.IntN(254))
		port := 1 + r.IntN(65535)
		if port == iperf2Port {
			port++ // iperf2's port names another cause (TestIperf3ClientAtIperf2Port)
		}
		connecting := fmt.Sprintf("Connecting to host %s, port %d\n", host, port)
		mss := fmt.Sprintf("Control connection MSS %d\n", 536+r.IntN(8500))
		head := []string{connecting, mss, connecting + mss}[r.IntN(3)]
		version := fmt.Sprintf("iperf 3.%d\n", r.IntN(20))
		checkFlag(t, version+head+closed, id, true)
		stream := fmt.Sprintf("[%3d] local 10.0.0.2 port %d connected to %s port %d\n", 4+r.IntN(9), 30000+r.IntN(30000), host, port)
		checkFlag(t, version+head+stream+closed, id, false)
		checkFlag(t, version+closed, id, false)
		server := fmt.Sprintf("Server listening on %d\n", port)
		checkFlag(t, server+fmt.Sprintf("Accepted connection from %s, port %d\n", host, 30000+r.IntN(30000))+closed, id, false)
		checkFlag(t, server+closed, id, false)
		checkFlag(t, version+head+strings.Replace(closed, "control socket", "data socket", 1), id, false)
	}
}

// An iperf3 client at port 5001, iperf2's default, whose control
// connection closes before any stream connected met an iperf2 server: that
// ranks first, behind any prefix, with or without -V's MSS line, instead of
// "no server"; another port, a port that only starts with 5001, a stream
// that connected, or the server's own lines are not that.
func TestIperf3ClientAtIperf2Port(t *testing.T) {
	const id = "iperf3.iperf2-server"
	const closed = "iperf3: error - control socket has closed unexpectedly\n"
	r := rand.New(rand.NewPCG(927, 74))
	for range 20 {
		host := fmt.Sprintf("%d.%d.%d.%d", 10+r.IntN(200), r.IntN(256), r.IntN(256), 1+r.IntN(254))
		if r.IntN(2) == 0 {
			host = fmt.Sprintf("zynq-%d.lan", r.IntN(100))
		}
		head := fmt.Sprintf("Connecting to host %s, port %d\n", host, iperf2Port)
		if r.IntN(2) == 0 {
			head += fmt.Sprintf("Control connection MSS %d\n", 536+r.IntN(8500))
		}
		version := []string{"", fmt.Sprintf("iperf 3.%d\n", r.IntN(21))}[r.IntN(2)]
		p := anyPrefix(r)
		a := Reader("c.txt", strings.NewReader(prefixLines(version+head+closed, p)), Options{})
		if topCause(a) != id || hasFlag(a, "iperf3.no-server-at-port") {
			t.Errorf("behind %q: first %q (%s)\n%s", p, topCause(a), flagIDs(a), version+head+closed)
		}
		other := []int{5201, 50010, 15001, 5002}[r.IntN(4)]
		checkFlag(t, version+fmt.Sprintf("Connecting to host %s, port %d\n", host, other)+closed, id, false)
		stream := fmt.Sprintf("[%3d] local 10.0.0.2 port %d connected to %s port %d\n", 4+r.IntN(9), 30000+r.IntN(30000), host, iperf2Port)
		checkFlag(t, version+head+stream+closed, id, false)
		checkFlag(t, fmt.Sprintf("Server listening on %d\n", iperf2Port)+closed, id, false)
	}
}

func TestConnectingPort(t *testing.T) {
	for line, want := range map[string]int{
		"Connecting to host 10.0.0.1, port 5001":         5001,
		"Connecting to host zynq.lan, port 5201  ":       5201,
		"[1,0]<stdout>:Connecting to host h, port 99999": 0,
		"Connecting to host h, port 50x1":                0,
		"Connecting to host h":                           0,
	} {
		if got := connectingPort([]byte(line)); got != want {
			t.Errorf("%q: %d, want %d", line, got, want)
		}
	}
}
