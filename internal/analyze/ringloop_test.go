package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// ringLoopLog is an NCCL_DEBUG=INFO log whose ranks built rings that do
// not close, in the format of field case 233 (NVIDIA/nccl#1020): the
// banner when a release is given, then rings.cc's WARN on some ranks and
// NCCL's error-return trace after it.
func ringLoopLog(r *rand.Rand, ranks, hosts int, version string) []string {
	var out []string
	if version != "" {
		out = append(out, fmt.Sprintf("node00:%d:%d [0] NCCL INFO NCCL version %s+cuda12.2", 4000, 4000, version))
	}
	for k := range 1 + r.Intn(ranks) {
		head := fmt.Sprintf("node%02d:%d:%d [%d]", k%hosts, 4000+k, 4100+k, k%8)
		out = append(out,
			fmt.Sprintf("%s graph/rings.cc:%d NCCL WARN Error : ring %d does not loop back to start (%d != %d).", head, []int{38, 51}[r.Intn(2)], r.Intn(4), r.Intn(ranks), k),
			head+" NCCL INFO graph/connect.cc:496 -> 3")
	}
	return out
}

// The WARN names its cause first for any rank and host count behind any
// prefix; with a release before 2.19.4 in the lines, NCCL too old (the
// uninitialised link speed fixed there) ranks above it; with 2.19.4 or
// later, or no release, the message itself is first.
func TestRingNoLoopbackAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(1020))
	for _, pre := range causePrefixes(r) {
		n, hosts := 2+r.Intn(31), 1+r.Intn(4)
		for version, want := range map[string]string{
			"":       "error.nccl-ring-no-loopback",
			"2.19.4": "error.nccl-ring-no-loopback",
			"2.20.3": "error.nccl-ring-no-loopback",
			"2.27.7": "error.nccl-ring-no-loopback",
			"2.19.3": "nccl.too-old",
			"2.18.5": "nccl.too-old",
		} {
			a := analyseText(prefixed(pre, ringLoopLog(r, n, hosts, version)))
			if got := firstFail(a); got != want {
				t.Errorf("NCCL %q, %d ranks on %d hosts behind %q: first %q, want %q (%s)", version, n, hosts, pre, got, want, flagIDs(a))
			}
			if !hasFlag(a, "error.nccl-ring-no-loopback") {
				t.Errorf("NCCL %q behind %q: the WARN is not named (%s)", version, pre, flagIDs(a))
			}
		}
	}
}

// NCCL's ring lines of a healthy start do not raise it; no fixture but the
// field paste it was read from does.
func TestRingNoLoopbackMustNotFire(t *testing.T) {
	for _, l := range []string{
		"node00:4000:4100 [0] NCCL INFO Channel 00/02 :    0   1   2   3",
		"node00:4000:4100 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0",
		"node00:4000:4100 [0] NCCL INFO Connected all rings",
	} {
		if a := analyseText(l + "\n"); hasFlag(a, "error.nccl-ring-no-loopback") {
			t.Errorf("%q: raised", l)
		}
	}
	noneRaisedOnFixtures(t, []string{"error.nccl-ring-no-loopback"}, map[string]bool{
		"field/train/233_nccl_2_19_3_ring_does_not_loop_back_uninitialized_link_speed.txt": true,
	})
}
