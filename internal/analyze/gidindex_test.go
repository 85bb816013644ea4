package analyze

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// gidJob is a RoCE job of n ranks over the hosts in NCCL's line format:
// each rank's version line, the environment line when gid is not "", its
// NET/IB device line, and on the failing ranks a connection failure in
// one of NCCL's formats (the completion with status 12 of 2.20 and later
// or "with error 12," before; ibv_modify_qp of 2.18 and of 2.27).
func gidJob(r *rand.Rand, version, gid, link string, n, hosts int, bad []int, gidLine int) []string {
	var out []string
	for rank := range n {
		h := rank % hosts
		p := ncclPrefix(fmt.Sprintf("node%03d", h+1), rank, rank/hosts)
		out = append(out, p+" NCCL INFO NCCL version "+version+"+cuda12.2")
		if gid != "" {
			out = append(out, p+" NCCL INFO NCCL_IB_GID_INDEX set by environment to "+gid+".")
		}
		out = append(out, p+fmt.Sprintf(" NCCL INFO NET/IB : Using [0]mlx5_0:1/%s [1]mlx5_1:1/%s ; OOB eth0:10.20.%d.10<0>", link, link, h))
		if gidLine >= 0 {
			out = append(out, p+fmt.Sprintf(" NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 704 mtu 5 GID %d (0/A140A8C0FFFF0000)", gidLine))
		}
	}
	for _, rank := range bad {
		h := rank % hosts
		p := ncclPrefix(fmt.Sprintf("node%03d", h+1), rank, rank/hosts)
		peer := fmt.Sprintf("10.20.%d.10<%d>", (h+1)%hosts, 40000+r.Intn(20000))
		switch r.Intn(4) {
		case 0:
			out = append(out, p+" transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "+peer+" with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.20.0.10 remoteGids::ffff:10.20.1.10")
		case 1:
			out = append(out, p+" transport/net_ib.cc:1016 NCCL WARN NET/IB : Got completion from peer "+peer+" with error 12, opcode 0, len 0, vendor err 129")
		case 2:
			out = append(out, p+" misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out")
		default:
			out = append(out, p+" misc/ibvwrap.cc:301 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::1, remote GID fe80::2")
		}
	}
	return out
}

// Any rank and host count, any share of failing ranks, any prefix: NCCL
// before 2.21 with NCCL_IB_GID_INDEX unset names the default index 0, and
// 2.21 or later with it set names the override, ranked above the failure
// they explain; the other combinations, no release, no failure, no
// device line (the link layer unseen), an InfiniBand link layer or an index other than 0 in use raise neither.
func TestIBGIDIndexAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(221))
	old := []string{"2.7.8", "2.12.12", "2.18.3", "2.20.5"}
	auto := []string{"2.21.5", "2.23.4", "2.27.7", "2.30.7"}
	ids := []string{"nccl.ib-gid-index-set", "nccl.ib-gid-index-default"}
	for _, pre := range causePrefixes(r) {
		for range 3 {
			hosts := 2 + r.Intn(7)
			n := hosts * (1 + r.Intn(4))
			bad := r.Perm(n)[:1+r.Intn(n)]
			slices.Sort(bad)
			vo, va := old[r.Intn(len(old))], auto[r.Intn(len(auto))]
			gid := fmt.Sprint(r.Intn(8))
			for want, job := range map[string][]string{
				"nccl.ib-gid-index-default": gidJob(r, vo, "", "RoCE", n, hosts, bad, -1),
				"nccl.ib-gid-index-set":     gidJob(r, va, gid, "RoCE", n, hosts, bad, -1),
			} {
				a := analyseText(prefixed(pre, job))
				if got := topCause(a); got != want {
					t.Fatalf("%d ranks on %d hosts, %d failing, behind %q: first %q, want %q (%s)\n%s", n, hosts, len(bad), pre, got, want, flagIDs(a), prefixed(pre, job))
				}
			}
			noVersion := gidJob(r, vo, "", "RoCE", n, hosts, bad, -1)
			noVersion = slices.DeleteFunc(noVersion, func(s string) bool { return strings.Contains(s, "NCCL version") })
			noDevices := slices.DeleteFunc(gidJob(r, vo, "", "RoCE", n, hosts, bad, -1), func(s string) bool { return strings.Contains(s, "NET/IB : Using") })
			for name, job := range map[string][]string{
				"link layer not in the lines":      noDevices,
				"2.21 or later, unset":             gidJob(r, va, "", "RoCE", n, hosts, bad, -1),
				"2.21 or later, set to -1":         gidJob(r, va, "-1", "RoCE", n, hosts, bad, -1),
				"before 2.21, set":                 gidJob(r, vo, gid, "RoCE", n, hosts, bad, -1),
				"no failure, before 2.21":          gidJob(r, vo, "", "RoCE", n, hosts, nil, -1),
				"no failure, 2.21 or later":        gidJob(r, va, gid, "RoCE", n, hosts, nil, -1),
				"InfiniBand":                       gidJob(r, vo, "", "IB", n, hosts, bad, -1),
				"before 2.21, GID 3 in use":        gidJob(r, vo, "", "RoCE", n, hosts, bad, 3),
				"no release in the lines, unset":   noVersion,
				"InfiniBand, 2.21 or later, set":   gidJob(r, va, gid, "IB", n, hosts, bad, -1),
				"2.21 or later, set, no failure 2": gidJob(r, va, gid, "RoCE", n, hosts, []int{}, 0),
			} {
				a := analyseText(prefixed(pre, job))
				for _, id := range ids {
					if hasFlag(a, id) {
						t.Errorf("%s, %d ranks on %d hosts, behind %q: %s raised", name, n, hosts, pre, id)
					}
				}
			}
		}
	}
}

// ibv_modify_qp's errors that name a device or a route of their own (field
// case 31: No such device, an HCA that could not carry the traffic) are
// left to their signatures.
func TestIBGIDIndexLeavesOtherQPErrors(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for _, e := range []string{"error No such device", "19 No such device, on dev mlx5_3:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::1, remote GID fe80::2", "error Network is unreachable"} {
		job := []string{p + " NCCL INFO NCCL version 2.7.8+cuda10.2", p + " NCCL INFO NET/IB : Using [0]mlx5_3:1/RoCE ; OOB eth1:9.73.133.81<0>",
			p + " misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with " + e}
		if a := analyseText(prefixed("", job)); hasFlag(a, "nccl.ib-gid-index-default") {
			t.Errorf("%q: %s", e, flagIDs(a))
		}
	}
}
