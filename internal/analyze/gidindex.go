package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// gidIndexAuto is the first NCCL release that picks the RoCE GID index by
// itself: NCCL_IB_GID_INDEX defaults to -1 from v2.21.5-1, to 0 before
// (src/transport/net_ib.cc, NCCL_PARAM(IbGidIndex, ...)).
const gidIndexAuto = "2.21"

// weightGIDIndex ranks a GID index choice above the connection failures
// it explains (ibv_modify_qp errors and completion status 12: 1.0, and up
// to 0.05 more for a line repeated ten times) and below messages that name
// a cause of their own (1.1 and up).
const weightGIDIndex = 1.08

// gidSource is what the guide and the source say of the GID index.
const gidSource = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/networking_troubleshooting.html (RoCE, Troubleshooting NCCL errors: a common RoCE issue is the incorrect GID index; with NCCL 2.21 and later the GID index is selected dynamically and NCCL_IB_GID_INDEX should not be set, with prior versions set it to the RoCE v2 index show_gids lists), as NVIDIA/nccl docs/userguide/source/troubleshooting/networking_troubleshooting.rst v2.30.7-1; NVIDIA/nccl src/transport/net_ib.cc v2.20.5-1 (NCCL_PARAM(IbGidIndex, \"IB_GID_INDEX\", 0)) and v2.21.5-1 (default -1: chosen by NCCL)"

// ibConnFailure is the first WARN of NET/IB connection setup or traffic
// that a GID which does not route between the ports gives: a queue pair
// that cannot be moved to ready-to-receive because its address was
// refused (EINVAL, the error NCCL's guide names) or never answered
// (ETIMEDOUT), or a completion with status 12, transport retries
// exhausted ("with status=12 " from 2.20, "with error 12, " before); ""
// when there is none. ibv_modify_qp's other errors (ENODEV, ENETUNREACH)
// name a device or route of their own.
func ibConnFailure(warnings []string) string {
	for _, w := range warnings {
		if _, rest, ok := strings.Cut(w, "ibv_modify_qp failed with "); ok {
			rest = strings.TrimPrefix(rest, "error ")
			for _, e := range []string{"Invalid argument", "22 ", "Connection timed out", "110 "} {
				if strings.HasPrefix(rest, e) {
					return w
				}
			}
			continue
		}
		if strings.Contains(w, "Got completion from peer") && (strings.Contains(w, "status=12 ") || strings.Contains(w, "error 12,")) {
			return w
		}
	}
	return ""
}

// ibGIDIndex: a NET/IB connection failure in a log whose release and
// environment say how the GID index was chosen, as NCCL's troubleshooting
// guide names it the common RoCE error. From 2.21 NCCL picks the RoCE v2
// GID itself, so an NCCL_IB_GID_INDEX set by the environment overrides
// that choice (nccl.ib-gid-index-set); before 2.21 the index is 0 unless
// set, on RoCE the link-local RoCE v1 entry (nccl.ib-gid-index-default).
// Against: no release in the lines (the default is unknown), no failure,
// no RoCE device in the lines (the link layer unseen, or InfiniBand), an
// index other than 0 in use before 2.21 (the GID lines show it), the
// variable unset from 2.21.
func (a *analysis) ibGIDIndex(l *results.NCCLLog) {
	v := leadingVersion([]byte(l.Version))
	if v == "" {
		return
	}
	fail := ibConnFailure(l.Warnings)
	if fail == "" {
		return
	}
	roce := false
	for _, d := range l.IBDevices {
		if d.Link == "RoCE" {
			roce = true
		}
	}
	if !roce {
		return
	}
	set := strings.TrimSpace(l.Env["NCCL_IB_GID_INDEX"])
	auto := facts.CompareVersions(v, gidIndexAuto) >= 0
	switch {
	case auto && set != "" && set != "-1":
		a.cause(weightGIDIndex, report.Fail, "nccl.ib-gid-index-set",
			fmt.Sprintf("NCCL %s picks the RoCE v2 GID of each port by itself, but NCCL_IB_GID_INDEX=%s overrides it; an index that is not a routable RoCE v2 address on every port (GID tables differ between NICs and nodes) makes RDMA connection setup fail or time out", v, set),
			fmt.Sprintf("NCCL version %s; NCCL_IB_GID_INDEX set by environment to %s; %s", v, set, strings.TrimSpace(fail)),
			"unset NCCL_IB_GID_INDEX on every node (the job's environment, a container image, /etc/nccl.conf) and let NCCL choose; if a fabric needs another address family, set NCCL_IB_ADDR_FAMILY or NCCL_IB_ROCE_VERSION_NUM instead; check show_gids on each node",
			gidSource)
	case !auto && set == "":
		for _, g := range l.GIDs {
			if g.GIDIndex > 0 {
				return
			}
		}
		a.cause(weightGIDIndex, report.Fail, "nccl.ib-gid-index-default",
			fmt.Sprintf("NCCL %s uses GID index 0 unless NCCL_IB_GID_INDEX is set (releases before %s do not pick one); on RoCE, index 0 is the port's link-local RoCE v1 entry, which does not route between subnets, so RDMA connection setup fails or times out", v, gidIndexAuto),
			fmt.Sprintf("NCCL version %s; NCCL_IB_GID_INDEX not set in the lines read; RoCE devices; %s", v, strings.TrimSpace(fail)),
			"run show_gids on each node and set NCCL_IB_GID_INDEX to the index of the RoCE v2 IPv4 entry of the port in use (often 3) on every rank, or install NCCL "+gidIndexAuto+" or later ("+sparkNCCLRelease()+"), which picks it and needs the variable unset",
			gidSource)
	}
}
