package analyze

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// qpTimeout is the first ibv_modify_qp failure of a paste that timed out
// (errno 110, ETIMEDOUT), with the GIDs NCCL printed after it: "Call to
// ibv_modify_qp failed with %d %s, on dev %s:%d, curr state %s, next
// state %s, local GID index %d, local GID %s, remote GID %s"
// (src/misc/ibvwrap.cc v2.30.7-1), read from that line or, where a paste
// broke the line after a comma, from the line that follows it.
type qpTimeout struct {
	// open is the failure's line number while its continuation may
	// follow, 0 otherwise
	open int
	// found: a timed-out failure was read; line is what it said and n its
	// first line's number
	found         bool
	line          string
	n             int
	local, remote string
}

var (
	litModifyQPFailed = []byte("ibv_modify_qp failed with ")
	litLocalGID       = []byte("local GID ")
	litRemoteGID      = []byte("remote GID ")
)

// observe reads line number n of the paste.
func (q *qpTimeout) observe(n int, line []byte) {
	if q.open != 0 {
		if n == q.open+1 {
			q.readGIDs(line)
			if q.remote != "" || q.local != "" {
				q.line += " " + string(bytes.TrimSpace(line))
			}
		}
		q.open = 0
		q.found = true
		return
	}
	if q.found {
		return
	}
	i := bytes.Index(line, litModifyQPFailed)
	if i < 0 {
		return
	}
	rest := bytes.TrimPrefix(line[i+len(litModifyQPFailed):], []byte("error "))
	if !bytes.HasPrefix(rest, []byte("110 ")) && !bytes.HasPrefix(rest, []byte("110,")) && !bytes.HasPrefix(rest, []byte("Connection timed out")) {
		return
	}
	q.line, q.n = string(bytes.TrimSpace(line)), n
	q.readGIDs(rest)
	if q.remote == "" && bytes.HasSuffix(bytes.TrimSpace(line), []byte(",")) {
		q.open = n // the rest of the message on the next line
		return
	}
	q.found = true
}

// end closes a failure whose continuation never came.
func (q *qpTimeout) end() {
	if q.open != 0 {
		q.open, q.found = 0, true
	}
}

// readGIDs takes the local and remote GIDs a part of the message names.
func (q *qpTimeout) readGIDs(b []byte) { readQPGIDs(b, &q.local, &q.remote) }

// readQPGIDs sets local and remote to the GIDs a part of an ibv_modify_qp
// failure names.
func readQPGIDs(b []byte, local, remote *string) {
	if i := bytes.Index(b, litRemoteGID); i >= 0 && (i == 0 || !isWordByte(b[i-1])) {
		*remote = gidWord(b[i+len(litRemoteGID):])
	}
	// "local GID index %d" is followed by "local GID %s"
	for j := 0; ; {
		i := bytes.Index(b[j:], litLocalGID)
		if i < 0 {
			break
		}
		j += i + len(litLocalGID)
		if w := gidWord(b[j:]); w != "" && w != "index" {
			*local = w
		}
	}
}

// gidWord is the GID at the start of b, its trailing comma or full stop
// taken off.
func gidWord(b []byte) string {
	f := bytes.Fields(b)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(string(f[0]), ",.")
}

// linkLocalV4GID: a RoCE v2 GID holding an IPv4 link-local address
// (::ffff:169.254.x.y): the port's netdev has no address but the one it
// gave itself.
func linkLocalV4GID(gid string) bool {
	ip, err := netip.ParseAddr(gid)
	if err != nil || !ip.Is4In6() {
		return false
	}
	return ip.Unmap().IsLinkLocalUnicast()
}

// weightQPLinkLocalRemote ranks a timeout towards a link-local peer GID
// above the bare timeout it explains (1.0) and below the line that shows
// both ends (error.ib-qp-link-local-gid, 1.1).
const weightQPLinkLocalRemote = 1.05

// qpLinkLocalRemote: a queue pair timed out moving to ready-to-receive
// (ETIMEDOUT: the peer's RoCE address was never resolved from this port)
// towards a peer GID that is an IPv4 link-local address, the local GID
// not in the lines. A RoCE v2 GID carries its port's IPv4 address, and
// 169.254.0.0/16 is what a port holds when none was configured, reachable
// only on its own link: the HCA this rank uses does not reach the peer's
// port on a link they share, so NCCL_IB_HCA (or NCCL's default, every
// active port) takes a port on no fabric (an unused ConnectX-7 twin) or
// one cabled to another port than the peer's. For: the timeout, the
// link-local remote GID on its line or the line a paste broke it onto.
// Against: a local GID shown (one end configured is
// error.ib-qp-link-local-gid's; both ends link-local, a direct-cabled
// pair's own addressing, leaves the bare timeout's reading), a remote GID
// not link-local, other errors (EINVAL is the GID index's).
func (a *analysis) qpLinkLocalRemote(q qpTimeout) {
	if !q.found || q.local != "" || !linkLocalV4GID(q.remote) {
		return
	}
	a.cause(weightQPLinkLocalRemote, report.Fail, "rdma.qp-link-local-remote",
		fmt.Sprintf("the RDMA connection timed out towards remote GID %s, an IPv4 link-local address: a RoCE v2 GID carries its port's IPv4 address, and 169.254.0.0/16 is what a port holds when none was configured (an unused ConnectX-7 twin, a port on no fabric), reachable only on its own link: the HCA this rank uses does not reach the peer's port on a link they share (NCCL_IB_HCA takes a port on no fabric, such as an unused ConnectX-7 twin, or one cabled to another port than the peer's)", q.remote),
		fmt.Sprintf("line %d: %s", q.n, q.line),
		"set NCCL_IB_HCA on every node to the HCA ports that face the peers (ibdev2netdev and ip -br addr: leave out ports whose netdev holds only a 169.254.x.y address and no cable to a peer), and give each port NCCL uses an address on the subnet of the port it is cabled to (on DGX Spark, each twin its own subnet); leave NCCL_IB_GID_INDEX unset on NCCL >= 2.21 or point it at the RoCE v2 entry of that address (show_gids)",
		"NVIDIA/nccl src/misc/ibvwrap.cc v2.30.7-1 (ibv_modify_qp's failure: \"local GID %s, remote GID %s\"); RFC 3927 (169.254.0.0/16, IPv4 link-local, not forwarded beyond the link); https://github.com/sonusflow/spark-vllm-docker/blob/89cdbcc41dad161e63ecfe0d6791af4a917b9f6a/docs/qwen35-397b-tp4.md (four DGX Sparks: NCCL_IB_HCA held two twins with only link-local addresses, the QP timed out towards ::ffff:169.254.60.178; naming the fabric HCA fixed it)")
}

// isWordByte: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
