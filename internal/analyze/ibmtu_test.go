package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// mtuJob is a RoCE job of hosts × gpus ranks whose hosts' ports run the
// MTUs of mtu (the ibv_mtu enum, one per host), with NCCL's queue pair
// lines in the 2.20.3 format (src/transport/net_ib.cc, NCCL_DEBUG_SUBSYS
// with NET), the release banner when version is set, and the failure
// lines of issue 1524 on the ranks of the last host when fail is set.
func mtuJob(r *rand.Rand, hosts, gpus int, mtu []int, version string, fail bool) []string {
	var out []string
	if version != "" {
		out = append(out, "NCCL version "+version+"+cuda12.4")
	}
	for rank := range hosts * gpus {
		h, g := rank/gpus, rank%gpus
		host := fmt.Sprintf("gpu-server-%d", h+1)
		p := ncclPrefix(host, rank, g)
		out = append(out, p+fmt.Sprintf(" NCCL INFO NET/IB : Using [0]mlx5_%d:1/RoCE ; OOB eth0:10.20.%d.%d<0>", g, h, 10+g),
			p+fmt.Sprintf(" NCCL INFO NET/IB: NCCL Dev 0 IbDev %d Port 1 qpn %d mtu %d query_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0} GID 3 (0/%X) fifoRkey=0x%x fifoLkey=0x%x",
				g, 300+r.Intn(5000), mtu[h], r.Uint32(), r.Intn(1<<20), r.Intn(1<<20)))
		if fail && h == hosts-1 {
			out = append(out, p+fmt.Sprintf(" transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_%d:1 Got async event : local access violation work queue error", g),
				p+fmt.Sprintf(" transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.20.0.%d<%d> with status=5 opcode=1 len=0 vendor err 249 (Recv) localGid fe80::e61d:2dff:fef2:9c94 remoteGidsfe80::e61d:2dff:fef2:9fa0", 10+g, 40000+r.Intn(20000)))
		}
	}
	return out
}

// Two MTUs among a failing RoCE job's queue pair lines name the mismatch
// first, for any host and GPU count, which hosts differ, a release from
// 2.20.3 or none printed, and any prefix; one MTU, a release before
// 2.20.3 (both sides then take the smaller) or a job that did not fail
// raise nothing of it.
func TestIBMTUMismatchAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(1524))
	for _, pre := range causePrefixes(r) {
		for range 3 {
			hosts, gpus := 2+r.Intn(6), 1+r.Intn(8)
			same := 3 + r.Intn(3)
			mtu := make([]int, hosts)
			for i := range mtu {
				mtu[i] = same
			}
			one := append([]int(nil), mtu...)
			mtu[r.Intn(hosts)] = []int{3, 4, 5}[(same-3+1+r.Intn(2))%3]
			version := []string{"", "2.20.3", "2.21.5", "2.27.7"}[r.Intn(4)]
			text := prefixed(pre, mtuJob(r, hosts, gpus, mtu, version, true))
			if a := analyseText(text); topCause(a) != "nccl.ib-mtu-mismatch" {
				t.Fatalf("%d hosts × %d GPUs, MTUs %v, NCCL %q, behind %q: first %q (%s)\n%s", hosts, gpus, mtu, version, pre, topCause(a), flagIDs(a), text)
			}
			for name, lines := range map[string][]string{
				"one MTU":       mtuJob(r, hosts, gpus, one, version, true),
				"NCCL 2.19.3":   mtuJob(r, hosts, gpus, mtu, "2.19.3", true),
				"no failure":    mtuJob(r, hosts, gpus, mtu, version, false),
				"NCCL 2.18.6-1": mtuJob(r, hosts, gpus, mtu, "2.18.6", true),
			} {
				if a := analyseText(prefixed(pre, lines)); hasFlag(a, "nccl.ib-mtu-mismatch") {
					t.Errorf("%s, MTUs %v behind %q: raised (%s)", name, mtu, pre, flagIDs(a))
				}
			}
		}
	}
}

// No fixture raises it but the field case whose thread found two MTUs
// (NVIDIA/nccl#1524: NCCL 2.20.3's async access violation).
func TestIBMTUMismatchNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.ib-mtu-mismatch"}, map[string]bool{"field/train/26_mtu_mismatch_local_access_violation.txt": true})
}

// The forms of NET/IB's async event lines tell their release: "async
// fatal event on QP" from 2.23.4 (src/transport/net_ib.cc v2.23.4-1:152),
// "Got non-fatal async event" from 2.28.9 (v2.28.9-1:253,
// src/transport/net_ib/common.cc v2.30.7-1:179); a form no release prints
// tells nothing.
func TestAsyncEventReleaseForms(t *testing.T) {
	for line, want := range map[string]string{
		"gpu3:2219:2290 [0] transport/net_ib.cc:152 NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP (0x7309dc3b0010): local access violation work queue error": "2.23.4",
		"gpu3:2219:2290 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port active(9)":                                  "2.28.9",
		"gpu3:2219:2290 [0] NCCL WARN NET/IB : mlx5_0:1 async non-fatal event: port active":                                                                        "",
	} {
		got, ok := asyncEventRelease(line)
		if ok != (want != "") || !strings.Contains(got, want) {
			t.Errorf("%q: %q %v, want %q", line, got, ok, want)
		}
	}
}
