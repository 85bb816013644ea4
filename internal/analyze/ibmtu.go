package analyze

import (
	"fmt"
	"slices"
	"strings"

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
