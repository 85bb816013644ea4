package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// ofiPeerGone is the OFI plugin's WARN for a request the EFA device
// completed with status 9, in its two wordings (libfabric's efa_strerror
// before and after it added its hint), for one rank.
func ofiPeerGone(r *rand.Rand, host string, rank, dev int) []string {
	msg := "Invalid receiver queue pair number (QPN)"
	if r.Intn(2) == 0 {
		msg += ". This error is typically caused by a crashed peer. Please verify the peer application has not terminated unexpectedly."
	}
	return []string{fmt.Sprintf("%s process_err_completion:%d NCCL WARN NET/OFI Request 0x7f08c%07x completed with error. RC: 5. Error: %s My EFA addr: fi_addr_efa://[fe80::30:43ff:fe60:%x]:0:%d My host id: i-0%015x Peer EFA addr: fi_addr_efa://[fe80::ed:61ff:fe1d:%x]:0:%d Peer host id: i-0%015x. Completed length: 0, Request: { dev: %d, size: 0, state: CREATED, type: SEND_CTRL }",
		ncclPrefix(host, rank, dev), 1500+r.Intn(100), r.Intn(1<<24), msg, r.Intn(1<<16), r.Intn(1<<30), r.Int63n(1<<60), r.Intn(1<<16), r.Intn(1<<30), r.Int63n(1<<60), dev)}
}

// The QPN completion error names the peer's end first, for any rank and
// host count and prefix, above the generic OFI completion error and the
// remote-error lines that follow it.
func TestOFIPeerGoneAnyRanksAnyPrefix(t *testing.T) {
	withRemote := func(r *rand.Rand, host string, rank, dev int) []string {
		return append(ofiPeerGone(r, host, rank, dev), "RuntimeError: NCCL error: remote process exited or there was a network error")
	}
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(312)), []docSignatureCase{{"error.ofi-peer-gone", ofiPeerGone}, {"error.ofi-peer-gone", withRemote}}, 3)
}

// Other EFA completion errors (a security group's unresponsive receiver,
// an unreachable address) stay the undeliverable reading.
func TestOFIPeerGoneDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for _, e := range []string{"Unresponsive receiver (connection never established or unknown)", "Destination ENI is down or does not run EFA", "Receiver not ready"} {
		line := fmt.Sprintf("%s process_err_completion:1562 NCCL WARN NET/OFI Request 0x7f08c0001d30 completed with error. RC: 13. Error: %s. Completed length: 0", p, e)
		a := analyseText(line + "\n")
		if hasFlag(a, "error.ofi-peer-gone") || topCause(a) != "error.ofi-undeliverable" {
			t.Errorf("%s: first %q (%s)", e, topCause(a), flagIDs(a))
		}
	}
}

// No fixture but the field paste it was read from raises it.
func TestOFIPeerGoneNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.ofi-peer-gone"}, map[string]bool{
		"field/train/186_eks_efa_invalid_qpn_pod_memory_limit_oom.txt": true,
	})
}
