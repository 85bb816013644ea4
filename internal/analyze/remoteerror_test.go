package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The surviving rank of a job whose peer pod was deleted: ncclRemoteError,
// PyTorch's watchdog terminating the process, then a segmentation fault
// in that teardown. The remote error is ranked first.
func TestRemoteErrorBeforeTeardownCrash(t *testing.T) {
	a := analyseText(fieldTrain(t, "353_gke_peer_pod_deleted_ncclremoteerror_watchdog.txt"))
	if got := topCause(a); got != "error.nccl-remote-error" {
		t.Fatalf("first %q: %+v", got, flagIDs(a))
	}
	if !hasFlag(a, "error.process-segfault") {
		t.Errorf("the crash is no longer named: %s", flagIDs(a))
	}
}

// Any rank, any prefix: a segfault printed after the remote error ranks
// below it; one printed before it (a crash that may be the peer's exit)
// keeps its place above.
func TestRemoteErrorCrashOrderAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(353, 11))
	for range 30 {
		rank := r.IntN(64)
		p := anyPrefix(r)
		remote := fmt.Sprintf("[rank%d]:[E722 08:55:15.721744728 ProcessGroupNCCL.cpp:542] [Rank %d] Collective WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=268435456, NumelOut=268435456, Timeout(ms)=60000) raised the following async exception: NCCL error: remote process exited or there was a network error, NCCL version 2.22.3", rank, rank, 1+r.IntN(99))
		crash := fmt.Sprintf("[node-%d:%d :0:98] Caught signal 11 (Segmentation fault: Sent by the kernel at address (nil))", rank, 100+r.IntN(9000))
		after := analyseText(prefixed(p, []string{remote, "terminate called after throwing an instance of 'c10::DistBackendError'", crash}))
		if got := topCause(after); got != "error.nccl-remote-error" {
			t.Errorf("crash after, rank %d behind %q: first %q", rank, p, got)
		}
		before := analyseText(prefixed(p, []string{crash, remote}))
		if got := topCause(before); got != "error.process-segfault" {
			t.Errorf("crash before, rank %d behind %q: first %q", rank, p, got)
		}
	}
}

// The two-Spark write-up's line of a pinned GID index that moved
// (ibv_modify_qp: errno 61, ENODATA): the empty GID entry is named, with
// the pinned index among its meanings.
func TestModifyQPNoDataPinnedGIDIndex(t *testing.T) {
	a := analyseText(fieldTrain(t, "349_gb10_stale_roce_gid_index_enodata.txt"))
	if got := topCause(a); got != "error.ib-gid-missing" {
		t.Fatalf("first %q: %s", got, flagIDs(a))
	}
	if !strings.Contains(a.Flags[0].Message, "NCCL_IB_GID_INDEX pinned on every node") {
		t.Errorf("%q", a.Flags[0].Message)
	}
}
