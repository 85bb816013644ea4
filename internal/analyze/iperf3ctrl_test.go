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
