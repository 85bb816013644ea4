package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The failure of field case 369 as pasted: broken after each comma, the
// octets masked; the peer's GID is its fe80:: entry (its netdev has no
// IPv4 address).
func TestQPGIDFamilyBrokenQuote(t *testing.T) {
	paste := "Call to ibv_modify_qp failed with 22 Invalid argument,\non dev roceP2p1s0f0:1,\nlocal GID ::ffff:10.x.x.94,\nremote GID fe80::xxxx:xxxx:xxxx:xxxx\n"
	a := analyseText(paste)
	if got := topCause(a); got != "rdma.qp-gid-family-mismatch" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := flagOf(a, "rdma.qp-gid-family-mismatch")
	if !strings.Contains(f.Message, "GID ::ffff:10.x.x.94") || !strings.Contains(f.Message, "fe80::xxxx:xxxx:xxxx:xxxx") || !strings.Contains(f.Message, "the peer's HCA") || !strings.Contains(f.Evidence, "line 1: Call to ibv_modify_qp failed with 22 Invalid argument, on dev roceP2p1s0f0:1, local GID ::ffff:10.x.x.94, remote GID fe80::") {
		t.Errorf("%+v", f)
	}
	if !hasFlag(a, "error.roce-gid-index-wrong") {
		t.Errorf("the errno's reading is no longer shown (%s)", flagIDs(a))
	}
}

// qpFailureLines is NCCL's ibv_modify_qp failure (src/misc/ibvwrap.cc
// v2.30.7-1) with the GIDs given, broken after the commas in breaks.
func qpFailureLines(r *rand.Rand, errno, dev, local, remote string, breaks bool) []string {
	parts := []string{
		"NCCL WARN Call to ibv_modify_qp failed with " + errno,
		"on dev " + dev + ":1",
		"curr state INIT",
		"next state RTR",
		fmt.Sprintf("local GID index %d", r.Intn(8)),
		"local GID " + local,
		"remote GID " + remote,
	}
	p := ncclPrefix("gpu"+fmt.Sprint(r.Intn(99)), r.Intn(64), r.Intn(8)) + " misc/ibvwrap.cc:207 "
	if !breaks {
		return []string{p + strings.Join(parts, ", ")}
	}
	var out []string
	cur := p + parts[0]
	for _, s := range parts[1:] {
		if r.Intn(2) == 0 {
			out = append(out, cur+",")
			cur = s
		} else {
			cur += ", " + s
		}
	}
	return append(out, cur)
}

// randomV4 is a configured IPv4 address (not link-local, loopback or
// multicast); randomFE80 a GID made from a link-local IPv6 address.
func randomV4(r *rand.Rand) string {
	first := []int{10, 172, 192, 100, 11, 203}[r.Intn(6)]
	return fmt.Sprintf("%d.%d.%d.%d", first, r.Intn(256), r.Intn(256), 1+r.Intn(254))
}

func randomFE80(r *rand.Rand) string {
	return fmt.Sprintf("fe80::%x:%xff:fe%02x:%x", r.Intn(0x10000), r.Intn(0x100), r.Intn(0x100), r.Intn(0x10000))
}

// Either end's fe80:: GID against the other's IPv4 GID names the
// unaddressed end first, for EINVAL and a timeout alike, on one line or
// broken after any commas, behind any prefix; both ends of one kind, an
// IPv4 link-local end or one end alone do not.
func TestQPGIDFamilyAnyBreakAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(369))
	const id = "rdma.qp-gid-family-mismatch"
	for _, pre := range causePrefixes(r) {
		for range 8 {
			errno := []string{"22 Invalid argument", "110 Connection timed out"}[r.Intn(2)]
			v4, ll := "::ffff:"+randomV4(r), randomFE80(r)
			localBare := r.Intn(2) == 0
			local, remote, end := v4, ll, "the peer's HCA"
			if localBare {
				local, remote, end = ll, v4, "this rank's HCA (mlx5_3 port 1)"
			}
			lines := qpFailureLines(r, errno, "mlx5_3", local, remote, r.Intn(2) == 0)
			a := analyseText(prefixed(pre, lines))
			if got := topCause(a); got != id {
				t.Errorf("%s, local %s remote %s behind %q: first %q (%s)\n%q", errno, local, remote, pre, got, flagIDs(a), lines)
				continue
			}
			if f := flagOf(a, id); !strings.Contains(f.Message, end) || !strings.Contains(f.Message, ll) {
				t.Errorf("%s", f.Message)
			}
		}
		notCases := map[string][]string{
			"both fe80":       qpFailureLines(r, "110 Connection timed out", "roceP2p1s0f0", randomFE80(r), randomFE80(r), r.Intn(2) == 0),
			"both IPv4":       qpFailureLines(r, "22 Invalid argument", "mlx5_0", "::ffff:"+randomV4(r), "::ffff:"+randomV4(r), r.Intn(2) == 0),
			"IPv4 link-local": qpFailureLines(r, "110 Connection timed out", "mlx5_0", "::ffff:169.254.3.4", randomFE80(r), r.Intn(2) == 0),
			"one end":         {ncclPrefix("gpu1", 0, 0) + " misc/ibvwrap.cc:207 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, remote GID " + randomFE80(r)},
			"another failure": {ncclPrefix("gpu1", 0, 0) + " misc/ibvwrap.cc:207 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument", "local GID ::ffff:" + randomV4(r) + ", remote GID " + randomFE80(r)},
		}
		for name, lines := range notCases {
			if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
				t.Errorf("%s behind %q: %s raised (%s)\n%q", name, pre, id, flagIDs(a), lines)
			}
		}
	}
}

// No fixture but field case 369 raises it.
func TestQPGIDFamilyNothingOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"rdma.qp-gid-family-mismatch"}, map[string]bool{
		"field/train/369_switched_fabric_second_hca_no_ipv4_gid_mismatch_modify_qp_22.txt": true,
	})
}
