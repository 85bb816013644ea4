package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// perftestCases are perftest's failure messages (linux-rdma/perftest
// 26.04.17, src/), each printed the way the tool prints it: the message
// that names the cause, then the follow-up lines of the same failure.
var perftestCases = []toolCase{
	{"error.perftest-server-unreachable", func(r *rand.Rand) []string {
		// ethernet_client_connect, then the test's own line
		return []string{fmt.Sprintf("Couldn't connect to 192.168.%d.%d:%d", r.Intn(256), 1+r.Intn(254), 18515+r.Intn(3)),
			[]string{" Unable to init the socket connection", " Unable to set up socket connection"}[r.Intn(2)]}
	}},
	{"error.perftest-device-not-found", func(r *rand.Rand) []string {
		switch r.Intn(3) {
		case 0:
			return []string{fmt.Sprintf("IB device rocep%ds0f%d not found", 1+r.Intn(2), r.Intn(2)), " Unable to find the Infiniband/RoCE device"}
		case 1:
			return []string{"No IB devices found"}
		default:
			return []string{" Couldn't get context for the device"}
		}
	}},
	{"error.perftest-mr-failed", func(r *rand.Rand) []string {
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("Couldn't allocate MR with error=%d", []int{12, 14, 95}[r.Intn(3)]), "Failed to create MR", " Couldn't create IB resources"}
		}
		return []string{"Couldn't allocate MR", "failed to create mr", "Failed to create MR"}
	}},
	{"error.perftest-port-not-active", func(r *rand.Rand) []string {
		return []string{fmt.Sprintf(" Port number %d state is %s", 1+r.Intn(2), []string{"Down", "Init", "Armed"}[r.Intn(3)]), " Couldn't get context for the device"}
	}},
	{"error.perftest-gid-type-mismatch", func(r *rand.Rand) []string {
		return []string{"", " Found Incompatibility issue with GID types.", " Please Try to use a different IP version.", ""}
	}},
	// NOTIFY_COMP_ERROR_SEND since perftest 26.01: ibv_wc_status_str and the number
	{"error.ib-wc-retry-exceeded", func(r *rand.Rand) []string {
		return []string{" Completion with error at client", fmt.Sprintf(" Failed status-transport retry counter exceeded (12): wr_id %d syndrom 0x81", r.Intn(64)), fmt.Sprintf(" scnt=%d, ccnt=%d", 128+r.Intn(1000), r.Intn(128))}
	}},
	{"error.ib-wc-local-protection", func(r *rand.Rand) []string {
		return []string{" Completion with error at server", fmt.Sprintf(" Failed status-local protection error (4): wr_id %d syndrom 0x%x", r.Intn(64), r.Intn(256)), fmt.Sprintf(" rcnt=%d", r.Intn(1000))}
	}},
}

// Each of perftest's failure messages names its cause first, behind any
// prefix, read alone as error lines.
func TestPerftestMessagesAnyPrefix(t *testing.T) {
	toolLinesFirstAnyPrefix(t, rand.New(rand.NewSource(2604)), perftestCases)
}

// The completion error of perftest's newer wording with a status no
// signature names is not read as one that has its own: status 5 (flushed)
// stays the flushed reading.
func TestPerftestCompletionStatusNumberDecides(t *testing.T) {
	lines := []string{" Completion with error at client", " Failed status-Work Request Flushed Error (5): wr_id 0 syndrom 0xf9", " scnt=256, ccnt=0"}
	a := analyseText(prefixed("", lines))
	if got := topCause(a); got != "error.ib-wc-flushed" {
		t.Errorf("first %q (%s)", got, flagIDs(a))
	}
}

// A registration failure outranks the connection failure it brings
// (ib_send_bw -R, field case 40's lines: perftest prints "Unable to init
// the socket connection" after any failed set-up).
func TestPerftestMRFailureBeforeItsFollowUps(t *testing.T) {
	lines := []string{"Couldn't allocate MR", "failed to create mr", "Failed to create MR", " Unable to create the resources needed by comm struct", " Unable to perform rdma_client function", " Unable to init the socket connection"}
	for _, pre := range causePrefixes(rand.New(rand.NewSource(26))) {
		if a := analyseText(prefixed(pre, lines)); topCause(a) != "error.perftest-mr-failed" {
			t.Errorf("behind %q: first %q (%s)", pre, topCause(a), flagIDs(a))
		}
	}
}

// No fixture raises the perftest signatures but the field pastes that
// print the messages.
func TestPerftestSignaturesNothingNewOnFixtures(t *testing.T) {
	var ids []string
	for _, c := range perftestCases[:5] {
		ids = append(ids, c.id)
	}
	noneRaisedOnFixtures(t, ids, perftestCarriers)
}

// perftestCarriers are the fixtures that print a perftest failure message.
var perftestCarriers = map[string]bool{
	// ib_send_bw -R: the registration failed, then the connection set-up
	"field/train/40_ib_send_bw_rdmacm_couldnt_allocate_mr.txt": true,
	// ib_write_bw in a container whose rdma-core is older than the node's
	// kernel: no device found
	"field/train/230_k8s_pod_ubuntu1804_image_perftest_no_device_on_2204_node.txt": true,
	// ib_read_bw client in a pod with a 64 KiB memlock limit
	"field/train/261_k8s_pod_memlock_64k_ib_read_bw_client_couldnt_allocate_mr.txt": true,
	// the cause list quotes perftest's no-device message
	"field/CATEGORIES.md": true,
}
