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
		if bytes.Contains(line, litIperfListening) {
			c.server = true
		}
		return
	}
	switch {
	case bytes.Contains(line, litIperfConnecting), bytes.Contains(line, litIperfCtrlMSS):
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
