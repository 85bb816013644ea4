package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// mtuOwnSide is the first NCCL release whose connecting side sets its
// queue pair's path MTU to its own port's active MTU (src/transport/
// net_ib.cc v2.20.3-1, ncclIbConnect: devInfo->mtu = portAttr.active_mtu,
// then path_mtu = info->mtu); only the accepting side takes the smaller
// of the two. Before it both sides used the smaller (v2.19.3-1,
// ncclIbAccept: std::min(remQpInfo.mtu, portAttr.active_mtu), handed back
// to the connecting side).
const mtuOwnSide = "2.20.3"

// weightIBMTU ranks the mismatch above the NIC errors it explains (an
// async access violation, 0.9; a local protection error, 1.0; flushed
// work, 0.4).
const weightIBMTU = 1.1

// ibMTUMismatch: NCCL's queue pair lines ("NET/IB: NCCL Dev 0 IbDev 0
// Port 1 qpn 704 mtu 5 … GID 3 …", NCCL_DEBUG_SUBSYS with NET) show two
// path MTUs in one job, and NET/IB traffic failed. From 2.20.3 the side
// that connects uses its own port's MTU, so a port with a larger MTU
// sends packets its peer's smaller MTU does not take, and the receiving
// NIC reports an error (a local access violation, then flushed work).
// For: two MTUs among the lines, a NET/IB completion error or async event
// in the WARN lines. Against: one MTU, a release before 2.20.3 (both
// sides then use the smaller), no traffic failure.
func (a *analysis) ibMTUMismatch(l *results.NCCLLog) {
	var mtus []int
	for _, g := range l.GIDs {
		if g.MTU > 0 && !slices.Contains(mtus, g.MTU) {
			mtus = append(mtus, g.MTU)
		}
	}
	if len(mtus) < 2 {
		return
	}
	v := leadingVersion([]byte(l.Version))
	if v != "" && facts.CompareVersions(v, mtuOwnSide) < 0 {
		return
	}
	fail := ""
	for _, w := range l.Warnings {
		if strings.Contains(w, "Got completion") || strings.Contains(w, "local access violation") {
			fail = w
			break
		}
	}
	if fail == "" {
		return
	}
	slices.Sort(mtus)
	var names []string
	for _, m := range mtus {
		names = append(names, fmt.Sprint(m))
	}
	ver := "the NCCL release is not in the lines read (this applies from " + mtuOwnSide + ")"
	if v != "" {
		ver = "NCCL " + v
	}
	a.cause(weightIBMTU, report.Fail, "nccl.ib-mtu-mismatch",
		fmt.Sprintf("the RDMA ports of this job run different MTUs (%s B): from NCCL %s the connecting side uses its own port's MTU, so the larger one sends packets the smaller port does not take, and its NIC fails the transfer", strings.Join(names, ", "), mtuOwnSide),
		fmt.Sprintf("NET/IB queue pair lines with mtu %s B; %s; %s", strings.Join(names, " and "), ver, strings.TrimSpace(fail)),
		"set one MTU on every RDMA port of the job (ibv_devinfo -v: active_mtu; the netdev's MTU for RoCE, ip link set <dev> mtu 9000 on every node and the switch ports between them), then run again",
		"NVIDIA/nccl src/transport/net_ib.cc v2.19.3-1 (ncclIbAccept: the smaller of the two MTUs, handed to both sides) and v2.20.3-1 (ncclIbConnect: devInfo->mtu = the local port's active_mtu, the QP's path_mtu; the INFO line \"NET/IB: %s %d IbDev %d Port %d qpn %d mtu %d …\" prints it as the ibv_mtu enum, 3 = 1024 B, 5 = 4096 B); https://github.com/NVIDIA/nccl/issues/1524 (two servers with different MTUs: local access violation, then completion status 5; one MTU fixed it)")
}

// weightIBMTUGuess ranks the MTU mismatch read from the release alone above
// the access violation it explains (0.9) and below the reading from two
// MTUs in the lines (weightIBMTU).
const weightIBMTUGuess = 1.0

// asyncEventLines are the lines of src/transport/net_ib.cc that print
// "NET/IB : %s:%d Got async event : %s" in each release, by whether the
// release is 2.20.3 or later (git show <tag>:src/transport/net_ib.cc,
// v2.4.2-1 to v2.22.3-1); from 2.23.4 a QP's event reads "async fatal
// event on QP" (src/transport/net_ib.cc v2.23.4-1:152), and from 2.28.9 the
// other events "Got non-fatal async event" (v2.28.9-1:253,
// src/transport/net_ib/common.cc v2.30.7-1:179), every one of them later
// than 2.20.3.
var asyncEventLines = map[int]bool{
	73: false, 74: false, 80: false, 93: false, 94: false, 95: false, // 2.4.2 to 2.19.4
	100: true, 101: true, 103: true, // 2.20.3 to 2.22.3
}

// ibMTUAccessViolation: NET/IB's async event "local access violation work
// queue error" from an NCCL release of 2.20.3 or later, where the
// connecting side sets its queue pair's MTU to its own port's (mtuOwnSide)
// and a port of a larger MTU sends packets its peer's NIC refuses. The
// release is the one the lines name or, without one, the one the event's
// own form tells: the net_ib.cc line of "Got async event" (asyncEventLines)
// or 2.23's "async ... event on QP" form. For: the event and such a
// release. Against: an earlier release (both sides then use the smaller
// MTU), a release that neither the lines nor the event tell, the queue
// pair lines showing one MTU or already read as two (ibMTUMismatch).
func (a *analysis) ibMTUAccessViolation(hits []diagnose.ErrorHit, c cudaFacts, l *results.NCCLLog) {
	var h *diagnose.ErrorHit
	for i := range hits {
		if hits[i].Signature.ID == "ib-async-access-violation" {
			h = &hits[i]
			break
		}
	}
	if h == nil {
		return
	}
	for _, c := range a.causes {
		if c.flag.ID == "nccl.ib-mtu-mismatch" {
			return
		}
	}
	if l != nil {
		var mtus []int
		for _, g := range l.GIDs {
			if g.MTU > 0 && !slices.Contains(mtus, g.MTU) {
				mtus = append(mtus, g.MTU)
			}
		}
		if len(mtus) == 1 {
			return
		}
	}
	v := c.version
	if l != nil && l.Version != "" {
		v = l.Version
	}
	v = leadingVersion([]byte(v))
	var ver string
	switch {
	case v != "" && facts.CompareVersions(v, mtuOwnSide) < 0:
		return
	case v != "":
		ver = "NCCL " + v
	default:
		w, ok := asyncEventRelease(h.First)
		if !ok {
			return
		}
		ver = w
	}
	a.cause(weightIBMTUGuess, report.Fail, "nccl.ib-mtu-mismatch",
		fmt.Sprintf("the NIC refused a work request (local access violation) under NCCL %s or later, whose connecting side sets the queue pair's MTU to its own port's: the RDMA ports of the two ends likely run different MTUs, so the larger one sends packets the smaller port does not take", mtuOwnSide),
		fmt.Sprintf("line %d: %s; %s", h.Line, h.First, ver),
		"compare the active MTU of the RDMA ports on both ends (ibv_devinfo -v: active_mtu; for RoCE the MTU of the netdev, ip link) and set one MTU on every port of the job and the switch ports between them, then run again",
		"NVIDIA/nccl src/transport/net_ib.cc v2.19.3-1 (ncclIbAccept: the smaller of the two MTUs, handed to both sides) and v2.20.3-1 (ncclIbConnect: the local port's active_mtu), the line of the \"Got async event\" WARN in each release from v2.4.2-1 to v2.22.3-1 and the \"async fatal event on QP\" form from v2.23.4-1; https://github.com/NVIDIA/nccl/issues/1524 (NCCL 2.20.3 with two MTUs: this event, then completion status 5; one MTU fixed it)")
}

// asyncEventRelease says which releases a NET/IB async event line comes
// from when they are all 2.20.3 or later, and whether it can tell.
func asyncEventRelease(line string) (string, bool) {
	if strings.Contains(line, "async fatal event on QP") {
		return "the event's form (\"async fatal event on QP\") is that of NCCL 2.23.4 and later", true
	}
	if strings.Contains(line, "Got non-fatal async event") {
		return "the event's form (\"Got non-fatal async event\") is that of NCCL 2.28.9 and later", true
	}
	i := strings.Index(line, "NCCL WARN")
	if i < 0 || !strings.Contains(line, "Got async event") {
		return "", false
	}
	f, n := sourceLineBefore([]byte(line[:i+len("NCCL WARN")]))
	if f != "net_ib.cc" || !asyncEventLines[n] {
		return "", false
	}
	return fmt.Sprintf("the event comes from net_ib.cc:%d, the line of that WARN in NCCL 2.20.3 to 2.22.3 only", n), true
}
