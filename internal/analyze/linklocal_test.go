package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// linkLocalConnect is NCCL's line for a socket connection to a
// link-local address that failed or is retried, in the formats of the
// releases that print one (src/misc/socket.cc v2.12.12-1 and v2.18.6-1,
// src/os/linux.cc v2.30.7-1), the address as host<port>.
func linkLocalConnect(r *rand.Rand, host string, rank, dev int) []string {
	p := ncclPrefix(host, rank, dev)
	addr := fmt.Sprintf("169.254.%d.%d<%d>", r.Intn(256), 1+r.Intn(254), 30000+r.Intn(30000))
	errs := []string{"Connection refused", "Connection timed out"}
	e := errs[r.Intn(len(errs))]
	switch r.Intn(5) {
	case 0:
		return []string{p + " misc/socket.cc:450 NCCL WARN Net : Connect to " + addr + " failed : " + e}
	case 1:
		return []string{p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to " + addr + " failed : " + e}
	case 2:
		return []string{p + fmt.Sprintf(" NCCL INFO socketPollConnect: connect to %s returned %s, retrying (%d/34) after sleep for %d msec", addr, e, 1+r.Intn(33), 100*(1+r.Intn(30)))}
	case 3:
		return []string{p + " os/linux.cc:288 NCCL WARN ncclSocketConnect: connect to " + addr + " returned " + e + ", exceeded error retry count after 35 attempts"}
	default:
		return []string{p + " os/linux.cc:328 NCCL WARN ncclOsSocketPollConnect to " + addr + " failed with error " + e}
	}
}

// A failed or retried connection to a 169.254 address ranks the
// link-local cause first for any rank and host count, share of ranks
// printing it, release format and prefix.
func TestSocketLinkLocalAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(3927)), []docSignatureCase{{"error.socket-link-local", linkLocalConnect}}, 3)
}

// The line alone (a paste of NCCL's connect line, a traceback under it)
// names the cause; the field paste's shape, NCCL's two-interface socket
// list with the refused retry under it, does too.
func TestSocketLinkLocalLinesAlone(t *testing.T) {
	r := rand.New(rand.NewSource(170))
	for _, pre := range causePrefixes(r) {
		lines := append(linkLocalConnect(r, "node001", 0, 0), "RuntimeError: NCCL error: remote process exited or there was a network error")
		if got := topCause(analyseText(prefixed(pre, lines))); got != "error.socket-link-local" {
			t.Errorf("behind %q: first %q", pre, got)
		}
		field := []string{
			fmt.Sprintf("NET/Socket : Using [0]enp%ds0:10.1.%d.%d<0> [1]pod-id-link0:169.254.170.23<0>", 1+r.Intn(200), r.Intn(256), 1+r.Intn(254)),
			fmt.Sprintf("socketPollConnect: connect to 169.254.170.23<%d> returned Connection refused, retrying (%d/34)", 40000+r.Intn(20000), 1+r.Intn(33)),
		}
		if got := topCause(analyseText(prefixed(pre, field))); got != "error.socket-link-local" {
			t.Errorf("socket list and retry behind %q: first %q", pre, got)
		}
	}
}

// Routable addresses, a link-local interface that is listed but never
// dialled, and other tools' connects to link-local addresses (a cloud
// metadata query) do not raise it.
func TestSocketLinkLocalDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, lines := range map[string][]string{
		"a routable peer refused": {p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.20.1.11<40123> failed : Connection refused"},
		"a routable peer retried": {p + " NCCL INFO ncclSocketConnect: connect to 192.168.9.2<40123> returned Connection refused, retrying (1/34) after sleep for 100 msec"},
		"a link-local interface listed only": append(startup("node001", 0, 0, 0, "2.21.5"),
			p+" NCCL INFO NET/Socket : Using [0]eth0:10.20.0.10<0> [1]pod-id-link0:169.254.170.23<0>"),
		"curl to the metadata address":      {"curl: (7) Failed to connect to 169.254.169.254 port 80 after 0 ms: Connection refused"},
		"an address that only starts alike": {p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 169.25.4.1<40123> failed : Connection refused"},
	} {
		if a := analyseText(prefixed("", lines)); hasFlag(a, "error.socket-link-local") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
	}
}

// No fixture but the field paste it was read from raises it.
func TestSocketLinkLocalNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.socket-link-local"}, map[string]bool{
		"field/train/182_eks_pod_identity_linklocal_socket_fallback.txt": true,
	})
}
