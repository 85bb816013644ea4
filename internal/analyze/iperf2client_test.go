package analyze

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkTopAnyPrefix: behind every real launch prefix and a few random ones, id
// is ranked first (fire) or raised nowhere (!fire).
func checkTopAnyPrefix(t *testing.T, r *mrand.Rand, paste, id string, fire bool) {
	t.Helper()
	prefixes := append([]string{""}, launchPrefixes...)
	for range 3 {
		prefixes = append(prefixes, randomPrefix(r))
	}
	for _, pre := range prefixes {
		a := Reader("s.txt", strings.NewReader(behind(pre, paste)), Options{})
		if fire && topCause(a) != id || !fire && hasFlag(a, id) {
			t.Errorf("%q behind %q: first %q, want %s first %v (%+v)", paste, pre, topCause(a), id, fire, a.Flags)
		}
	}
}

// An iperf3 server that read no parameters from its client names an
// iperf2 client first, whatever the errno, version banner, address or
// prefix (field case 177, esnet/iperf#710): more so with a length of four
// ASCII digits (iperf2's payload) or an iperf2 client's own line. Not
// when an iperf3 client's own lines are in the paste, nor when the length
// read is one an iperf3 client sends (esnet/iperf#1808: 124 bytes), nor
// for the server's other errors.
func TestIperf2ClientAtIperf3Server(t *testing.T) {
	const id = "iperf3.iperf2-client"
	r := rand.New(rand.NewPCG(177, 710))
	pr := mrand.New(mrand.NewSource(177))
	errnos := []string{"Resource temporarily unavailable", "Cannot allocate memory", "Bad file descriptor", "Connection reset by peer", ""}
	for i := 0; i < 12; i++ {
		errno := errnos[r.IntN(len(errnos))]
		params := "iperf3: error - unable to receive parameters from client"
		if errno != "" {
			params += ": " + errno
		}
		params += "\n"
		port := 1 + r.IntN(65535)
		host := fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), 1+r.IntN(254))
		server := fmt.Sprintf("iperf 3.%d\n-----------------------------------------------------------\nServer listening on %d\n-----------------------------------------------------------\n", r.IntN(20), port)
		checkTopAnyPrefix(t, pr, params, id, true)
		checkTopAnyPrefix(t, pr, server+params, id, true)
		// iperf2's payload gives a length of four digits, any four
		off := r.IntN(10)
		digits := uint32(0)
		for k := range 4 {
			digits = digits<<8 | uint32('0'+(off+k)%10)
		}
		long := fmt.Sprintf("warning: JSON size of data read does not correspond to offered length - expected %d bytes but received %d; errno=11\n", int32(digits), r.IntN(1<<20))
		checkTopAnyPrefix(t, pr, server+long+params, id, true)
		checkTopAnyPrefix(t, pr, server+fmt.Sprintf("warning: JSON data length overflow - %d bytes JSON size is not allowed\n", int32(digits))+params, id, true)
		iperf2 := fmt.Sprintf("------------------------------------------------------------\nClient connecting to %s, TCP port %d\nTCP window size: 85.0 KByte (default)\n", host, port)
		checkTopAnyPrefix(t, pr, iperf2+params, id, true)
		// against: an iperf3 client printed its own lines
		client := fmt.Sprintf("Connecting to host %s, port %d\n", host, port)
		checkTopAnyPrefix(t, pr, client+params, id, false)
		// against: an iperf3 client's parameters started and were cut
		short := fmt.Sprintf("warning: JSON size of data read does not correspond to offered length - expected %d bytes but received %d; errno=0\n", 60+r.IntN(maxParamsJSON-60), r.IntN(60))
		checkTopAnyPrefix(t, pr, server+short+params, id, false)
		// the server's other errors are not this
		checkTopAnyPrefix(t, pr, server+"iperf3: error - unable to receive cookie at server\n", id, false)
		checkTopAnyPrefix(t, pr, server+iperf2, id, false)
	}
}

func TestJSONLength(t *testing.T) {
	for _, c := range []struct {
		line string
		n    uint32
		ok   bool
	}{
		{"warning: JSON size of data read does not correspond to offered length - expected 124 bytes but received 0; errno=0", 124, true},
		{"warning: JSON data length overflow - 926431536 bytes JSON size is not allowed", 926431536, true},
		{"warning: JSON data length overflow - -2 bytes JSON size is not allowed", 0xfffffffe, true},
		{"warning: JSON size of data read does not correspond to offered length", 0, false},
	} {
		n, ok := jsonLength(c.line)
		if n != c.n || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.line, n, ok, c.n, c.ok)
		}
	}
	if !asciiDigits(926431536) || digitsOf(926431536) != "7890" || asciiDigits(124) {
		t.Error("asciiDigits")
	}
}
