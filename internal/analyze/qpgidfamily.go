package analyze

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// maxQPContinuation is the most lines a paste may have broken one
// ibv_modify_qp failure into after its first ("on dev …,", "curr state
// …,", "local GID index …,", "local GID …,", "remote GID …").
const maxQPContinuation = 8

// qpFailure is the first ibv_modify_qp failure of a paste, whatever its
// errno, with the GIDs NCCL printed after it ("Call to ibv_modify_qp
// failed with %d %s, on dev %s:%d, curr state %s, next state %s, local GID
// index %d, local GID %s, remote GID %s", src/misc/ibvwrap.cc v2.30.7-1),
// read from its line and from the lines a paste broke it onto after a
// comma.
type qpFailure struct {
	// open is the number of the last line read while the message goes on
	// (it ended with a comma), 0 otherwise
	open, more    int
	found         bool
	line          string
	n             int
	local, remote string
}

// observe reads line number n of the paste.
func (q *qpFailure) observe(n int, line []byte) {
	t := bytes.TrimSpace(line)
	if q.open != 0 {
		if n != q.open+1 {
			q.open, q.found = 0, true
			return
		}
		readQPGIDs(t, &q.local, &q.remote)
		q.line += " " + string(t)
		q.more++
		if bytes.HasSuffix(t, []byte(",")) && q.more < maxQPContinuation {
			q.open = n
		} else {
			q.open, q.found = 0, true
		}
		return
	}
	if q.found || !bytes.Contains(t, litModifyQPFailed) {
		return
	}
	q.line, q.n = string(t), n
	readQPGIDs(t, &q.local, &q.remote)
	if bytes.HasSuffix(t, []byte(",")) {
		q.open = n
		return
	}
	q.found = true
}

// end closes a failure whose continuation never came.
func (q *qpFailure) end() {
	if q.open != 0 {
		q.open, q.found = 0, true
	}
}

// configuredV4GID: a RoCE v2 GID that holds an IPv4 address outside
// 169.254.0.0/16 (::ffff:a.b.c.d), told from its first octet where a
// paste masked the others ("::ffff:10.x.x.94").
func configuredV4GID(gid string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(gid), "::ffff:")
	if !ok {
		return false
	}
	if ip, err := netip.ParseAddr(rest); err == nil {
		return ip.Is4() && !ip.IsLinkLocalUnicast() && !ip.IsUnspecified()
	}
	first, _, _ := strings.Cut(rest, ".")
	o, err := strconv.Atoi(first)
	return err == nil && o > 0 && o < 224 && o != 169 && o != 127
}

// linkLocalV6GID: a GID made from a port's IPv6 link-local address
// (fe80::/10), the entry at index 0 of every RoCE port.
func linkLocalV6GID(gid string) bool {
	g := strings.ToLower(gid)
	for _, p := range []string{"fe8", "fe9", "fea", "feb"} {
		if strings.HasPrefix(g, p) && strings.Contains(g, ":") {
			return true
		}
	}
	return false
}

// qpDev is the device of the failure, "on dev roceP2p1s0f0:1".
var qpDev = regexp.MustCompile(`on dev (\S+?):(\d+)`)

// weightQPGIDFamily ranks the mismatch above the errno's own reading (a
// wrong GID index for EINVAL, 1.0; a timeout, 1.0).
const weightQPGIDFamily = 1.1

// qpGIDFamily: a queue pair failed between a GID that holds a configured
// IPv4 address and a GID made from an IPv6 link-local address (fe80::).
// NCCL picks a RoCE port's GID itself (from 2.21): it starts at index 0,
// the port's fe80:: entry, and moves only to a GID of the address family
// NCCL_IB_ADDR_FAMILY names (IPv4 by default); a port whose netdev has no
// IPv4 address keeps the fe80:: GID. So the end that shows fe80:: is an
// HCA NCCL_IB_HCA (or NCCL's default, every active port) includes without
// an address on the fabric, and the two ends cannot connect (EINVAL, or a
// timeout). For: the failure, both GIDs on its line or the lines a paste
// broke it onto. Against: both ends of one kind (two fe80:: GIDs, a
// direct cable's own addressing; two IPv4 GIDs, another cause), one end
// not shown, an IPv4 link-local end (error.ib-qp-link-local-gid's).
func (a *analysis) qpGIDFamily(q qpFailure) {
	if !q.found {
		return
	}
	var bare, other, end string
	switch {
	case configuredV4GID(q.local) && linkLocalV6GID(q.remote):
		bare, other, end = q.remote, q.local, "the peer's HCA"
	case linkLocalV6GID(q.local) && configuredV4GID(q.remote):
		bare, other, end = q.local, q.remote, "this rank's HCA"
		if m := qpDev.FindStringSubmatch(q.line); m != nil {
			end += " (" + m[1] + " port " + m[2] + ")"
		}
	default:
		return
	}
	a.cause(weightQPGIDFamily, report.Fail, "rdma.qp-gid-family-mismatch",
		fmt.Sprintf("the RDMA connection joined GID %s, which holds an IPv4 address, with GID %s, made from an IPv6 link-local address: NCCL takes a port's IPv4 GID when its netdev has an IPv4 address and keeps the fe80:: GID at index 0 when it has none, so %s has no address on the fabric and the two ends cannot connect", other, bare, end),
		fmt.Sprintf("line %d: %s", q.n, q.line),
		"give the netdev of every HCA NCCL uses an IPv4 address on the fabric's subnet on every node (ibdev2netdev; ip -br addr), or leave the unaddressed HCA out: NCCL_IB_HCA set to the HCAs whose netdevs carry the fabric's addresses, on every node; leave NCCL_IB_GID_INDEX unset on NCCL >= 2.21",
		"NVIDIA/nccl src/transport/net_ib/connect.cc v2.30.7-1:298-330 (ncclIbGetGidIndex: the GID index starts at 0 and moves only to a GID of NCCL_IB_ADDR_FAMILY, AF_INET by default); src/misc/ibvwrap.cc v2.30.7-1 (ibv_modify_qp's failure: \"local GID %s, remote GID %s\"); RFC 4291 (fe80::/10, IPv6 link-local)")
}
