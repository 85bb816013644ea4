package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// Field case 287: four DGX Sparks whose NCCL_IB_HCA held two twins with
// only link-local addresses; the write-up quotes NCCL's failure broken
// after its comma, the remote GID alone on the second line. The timeout
// towards the link-local GID ranks first, with both lines as evidence.
func TestQPLinkLocalRemoteFieldCase(t *testing.T) {
	a := analyseText(readTrain(t, "287_spark_link_local_twin_hcas_in_nccl_ib_hca_qp_timeout.txt"))
	if got := topCause(a); got != "rdma.qp-link-local-remote" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := flagOf(a, "rdma.qp-link-local-remote")
	if want := "line 1: ibv_modify_qp failed with 110 Connection timed out, remote GID ::ffff:169.254.60.178"; f.Evidence != want {
		t.Errorf("evidence %q, want %q", f.Evidence, want)
	}
	if !strings.Contains(f.Message, "remote GID ::ffff:169.254.60.178") || !strings.Contains(f.Fix, "NCCL_IB_HCA") {
		t.Errorf("message %q, fix %q", f.Message, f.Fix)
	}
}

// qpTimeoutLines is a timed-out ibv_modify_qp towards remote, as NCCL
// prints it without its local GID part: on one line, or broken after the
// comma as a paste or a narrow terminal leaves it.
func qpTimeoutLines(r *rand.Rand, remote string) []string {
	head := []string{"ibv_modify_qp failed with 110 Connection timed out,", "Call to ibv_modify_qp failed with error 110 Connection timed out,", "ibv_modify_qp failed with Connection timed out,"}[r.Intn(3)]
	if r.Intn(2) == 0 {
		return []string{head + " remote GID " + remote}
	}
	return []string{head, "remote GID " + remote}
}

func randomLinkLocalGID(r *rand.Rand) string {
	return fmt.Sprintf("::ffff:169.254.%d.%d", r.Intn(256), 1+r.Intn(254))
}

// Any prefix, alone or after other ranks' healthy startup lines: the
// timeout towards a link-local remote GID ranks first.
func TestQPLinkLocalRemoteAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2871))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			lines := qpTimeoutLines(r, randomLinkLocalGID(r))
			if r.Intn(2) == 0 {
				hosts := 1 + r.Intn(4)
				var job []string
				for rank := range hosts * (1 + r.Intn(4)) {
					job = append(job, startup(fmt.Sprintf("node%03d", rank%hosts+1), rank, rank/hosts, rank%hosts, "2.21.5")...)
				}
				lines = append(job, lines...)
			}
			text := prefixed(pre, lines)
			if got := topCause(analyseText(text)); got != "rdma.qp-link-local-remote" {
				t.Fatalf("behind %q: first %q\n%s", pre, got, text)
			}
		}
	}
}

// What it is not: a remote GID on a configured network, both ends shown
// (one configured is error.ib-qp-link-local-gid's, both link-local a
// direct-cabled pair's own addressing), another errno, the GID line not
// the one right after the broken failure, the GID alone.
func TestQPLinkLocalRemoteDoesNotFire(t *testing.T) {
	r := rand.New(rand.NewSource(2872))
	for name, lines := range map[string][]string{
		"a configured remote GID": {"ibv_modify_qp failed with 110 Connection timed out,", "remote GID ::ffff:10.0.12.7"},
		"an IPv6 link-local GID":  {"ibv_modify_qp failed with 110 Connection timed out, remote GID fe80::946d:ae03:fc:e52c"},
		"both ends link-local":    {"node1:1:2 [0] misc/ibvwrap.cc:330 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:169.254.3.4, remote GID ::ffff:169.254.60.178"},
		"one end configured":      {"node1:1:2 [0] misc/ibvwrap.cc:330 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:192.168.200.1, remote GID ::ffff:169.254.60.178"},
		"EINVAL":                  {"ibv_modify_qp failed with 22 Invalid argument,", "remote GID ::ffff:169.254.60.178"},
		"a line between":          {"ibv_modify_qp failed with 110 Connection timed out,", "NCCL WARN something else", "remote GID ::ffff:169.254.60.178"},
		"the GID alone":           {"remote GID ::ffff:169.254.60.178"},
	} {
		for _, pre := range causePrefixes(r) {
			if a := analyseText(prefixed(pre, lines)); hasFlag(a, "rdma.qp-link-local-remote") {
				t.Errorf("%s behind %q: raised (%s)", name, pre, flagIDs(a))
			}
		}
	}
}

func TestQPLinkLocalRemoteNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"rdma.qp-link-local-remote"}, map[string]bool{
		"field/train/287_spark_link_local_twin_hcas_in_nccl_ib_hca_qp_timeout.txt": true,
		"field/CATEGORIES.md": true,
	})
}

func TestLinkLocalV4GID(t *testing.T) {
	for gid, want := range map[string]bool{"::ffff:169.254.60.178": true, "::ffff:169.254.0.1": true, "::ffff:169.253.1.1": false,
		"::ffff:10.0.0.1": false, "fe80::1": false, "169.254.1.1": false, "": false, "::ffff:xxx.xx.xx.xx": false} {
		if got := linkLocalV4GID(gid); got != want {
			t.Errorf("%q: %v", gid, got)
		}
	}
}
