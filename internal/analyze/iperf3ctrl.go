package analyze

import (
	"bytes"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
)

// iperfCtrlFacts is what an iperf3 paste says of its control connection:
// which end printed it and whether a test began.
type iperfCtrlFacts struct {
	// client: the client's own lines ("Connecting to host", the -V
	// "Control connection MSS"); server: the server's
	client, server bool
	// started: a test stream connected or the server accepted a client
	started bool
	// iperf2Client is an iperf2 client's "Client connecting to H, TCP
	// port N" line, cut to its first 200 bytes
	iperf2Client string
	// port is the port of the client's first "Connecting to host H, port
	// N" line (src/iperf_locale.c), 0 when none was read
	port int
}

// iperf2Port is iperf2's default port; iperf3 chose 5201 so as not to
// share it (src/iperf.h: "don't use the same port as iperf2").
const iperf2Port = 5001

// connectingPort reads N from "Connecting to host H, port N".
func connectingPort(line []byte) int {
	i := bytes.LastIndex(line, []byte(", port "))
	if i < 0 {
		return 0
	}
	n := 0
	for _, b := range bytes.TrimSpace(line[i+len(", port "):]) {
		if b < '0' || b > '9' {
			return 0
		}
		if n = 10*n + int(b-'0'); n > 65535 {
			return 0
		}
	}
	return n
}

var (
	litIperfConnecting = []byte("Connecting to host ")
	litIperfCtrlMSS    = []byte("Control connection MSS ")
	litIperfListening  = []byte("Server listening on ")
	litIperfAccepted   = []byte("Accepted connection from ")
	litIperfLocal      = []byte("] local ")
	litIperfConnected  = []byte(" connected to ")
	litOnnect          = []byte("onnect")
	litIperf2Client    = []byte("Client connecting to ")
)

// observe reads one line of the paste.
func (c *iperfCtrlFacts) observe(line []byte) {
	// every line read here but the server's banner says "onnect": one
	// search passes over the lines of other tools
	if !bytes.Contains(line, litOnnect) {
		// no 'v' (most lines; one vectorised search): no "Server"
		if bytes.IndexByte(line, 'v') >= 0 && bytes.Contains(line, litIperfListening) {
			c.server = true
		}
		return
	}
	switch {
	case bytes.Contains(line, litIperfConnecting):
		c.client = true
		if c.port == 0 {
			c.port = connectingPort(line)
		}
	case bytes.Contains(line, litIperfCtrlMSS):
		c.client = true
	case bytes.Contains(line, litIperfListening):
		c.server = true
	case bytes.Contains(line, litIperfAccepted):
		c.server, c.started = true, true
	case bytes.Contains(line, litIperfLocal) && bytes.Contains(line, litIperfConnected):
		c.started = true
	case c.iperf2Client == "" && bytes.Contains(line, litIperf2Client):
		c.iperf2Client = string(line[:min(len(line), 200)])
	}
}

// iperfNoServer names an iperf3 client whose control connection was
// accepted and then closed before any test stream connected: an iperf3
// server answers a client's cookie with its state (the parameter
// exchange, or ACCESS_DENIED when busy), so a silent close at that point
// means no iperf3 server answered at that port.
func (a *analysis) iperfNoServer(c iperfCtrlFacts, closed bool) {
	if !closed || !c.client || c.server || c.started {
		return
	}
	if c.port == iperf2Port {
		a.cause(1.05, report.Fail, "iperf3.iperf2-server",
			"the iperf3 client connected to port 5001, iperf2's default, and the other end closed the control connection before any test stream connected: an iperf2 server (or an iperf2-based one, such as lwIP's) most likely listens there, and iperf2 and iperf3 do not interoperate (iperf3 uses 5201 so as not to share iperf2's port): nothing was measured",
			"Connecting to host ..., port 5001; iperf3: error - control socket has closed unexpectedly before any [N] local ... connected to line",
			"run the same tool at both ends: iperf3 -s on the far host (port 5201 unless -p), or iperf -c (iperf2) against the iperf2 server; iperf -v prints 'iperf version 2.x', iperf3 -v 'iperf 3.x'",
			"https://github.com/esnet/iperf/blob/3.21/src/iperf.h (PORT 5201: \"don't use the same port as iperf2\"); https://github.com/esnet/iperf/issues/74 (an iperf3 client at an iperf2 server gets no iperf3 answer); https://github.com/esnet/iperf/issues/927 (an lwIP iperf2 server on port 5001: the maintainer, iperf2 and iperf3 are not compatible)")
		return
	}
	a.cause(1.05, report.Fail, "iperf3.no-server-at-port",
		"the iperf3 client connected to the port and the other end closed the control connection before any test stream connected: an iperf3 server answers the client's cookie at once (with the test parameters, or busy), so what listens at that address and port is not an iperf3 server (another service, such as NFS on 2049, or a proxy), or a server that dropped the connection: nothing was measured",
		"iperf3: error - control socket has closed unexpectedly, after the client's connect and before any [N] local ... connected to line",
		"start iperf3 -s on the far host and point the client at its port (-p, 5201 by default); to measure the throughput of another service use its own tools",
		"https://github.com/esnet/iperf/blob/master/src/iperf_client_api.c (iperf_connect prints \"Control connection MSS\" after the TCP connect and sends the cookie; iperf_handle_message_client sets IECTRLCLOSE on a read of 0 bytes); https://github.com/esnet/iperf/blob/master/src/iperf_server_api.c (iperf_accept: a server reads the cookie and sends PARAM_EXCHANGE, or ACCESS_DENIED while busy); https://github.com/esnet/iperf/issues/1803")
}

// hasHit: one of the hits is the signature id.
func hasHit(hits []diagnose.ErrorHit, id string) bool {
	for _, h := range hits {
		if h.Signature.ID == id {
			return true
		}
	}
	return false
}
