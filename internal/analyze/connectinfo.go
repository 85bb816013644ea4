package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightConnectInfo ranks the reading above the interface signature it
// replaces (1.1).
const weightConnectInfo = 1.15

// versionCheckedAtInit is the first NCCL release whose init compares the
// ranks' NCCL versions and stops on a difference (src/init.cc v2.23.4-1:
// WARN "Mismatched NCCL version detected"; none in v2.22.3-1).
const versionCheckedAtInit = "2.23.4"

// connectInfoMismatch: NCCL's socket code was handed an address that is
// not an IP address ("ncclSocketInit: connecting to address with family
// N is neither AF_INET nor AF_INET6") after the communicator completed its
// init. Init bootstraps every rank over the socket interface, so the
// interface works; the address came in the connection information a peer
// sent for one channel, which NCCL exchanges when the first operation
// needs the connection (src/transport.cc ncclTransportP2pSetup: each rank
// sends its side's info and reads the peer's), and it was not what this
// side expected: the two ranks were setting up different connections, as
// when both call ncclSend before ncclRecv outside ncclGroupStart/End, or
// (before NCCL 2.23, which stops init on it) they run different NCCL
// releases. For: the family line and an "Init COMPLETE" line. Against: no
// completed init (an NCCL_SOCKET_IFNAME that matches nothing leaves the
// address unset before init, and the interface signature stays).
func (a *analysis) connectInfoMismatch(o *results.NCCLOutput, hits []diagnose.ErrorHit) []diagnose.ErrorHit {
	idx := -1
	for i, h := range hits {
		if h.Signature.ID == "socket-ifname-not-found" && strings.Contains(h.First, "is neither AF_INET") {
			idx = i
			break
		}
	}
	if idx < 0 {
		return hits
	}
	inits, _ := o.Log.AfterInit()
	if inits == 0 {
		return hits
	}
	h := hits[idx]
	v := leadingVersion([]byte(o.Log.Version))
	also := ""
	if v == "" || facts.CompareVersions(v, versionCheckedAtInit) < 0 {
		also = ", or (NCCL before 2.23 does not compare releases at init) the ranks run different NCCL releases"
	}
	ver := "the NCCL release is not in the lines read"
	if v != "" {
		ver = "NCCL " + v
	}
	a.cause(weightConnectInfo, report.Fail, "nccl.connect-info-mismatch",
		"after the communicator completed its init over a working socket interface, a peer's connection information held no IP address: the two ranks were setting up different connections, as when both call ncclSend before ncclRecv outside ncclGroupStart/ncclGroupEnd"+also,
		fmt.Sprintf("line %d: %s; the log shows %d completed init%s (\"Init COMPLETE\"); %s", h.Line, h.First, inits, plural(int(inits)), ver),
		"put the ncclSend and ncclRecv of each rank to a peer inside one ncclGroupStart()/ncclGroupEnd() (or order them oppositely on the two ranks), and check that every rank runs the same NCCL release (the NCCL version line of each)",
		"NVIDIA/nccl src/misc/socket.cc v2.16.5-1 to v2.30.7-1 (ncclSocketInit: WARN \"connecting to address %s with family %d is neither AF_INET(%d) nor AF_INET6(%d)\"), src/transport.cc (ncclTransportP2pSetup: connection information exchanged with each peer when an operation first needs it), src/init.cc v2.23.4-1 (\"Mismatched NCCL version detected\" stops init); https://github.com/NVIDIA/nccl/issues/2057 (send before recv on both ranks outside a group; grouping the calls fixed it)")
	a.note("line %d: %s — after a completed init this is not an interface NCCL_SOCKET_IFNAME failed to find (not read as that cause)", h.Line, h.First)
	return append(hits[:idx:idx], hits[idx+1:]...)
}
