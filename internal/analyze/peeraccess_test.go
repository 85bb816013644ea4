package analyze

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
)

const peerAccessID = "error.nccl-peer-access-unsupported"

// peerAccessCase is NCCL failing a CUDA call with error 217
// (cudaErrorPeerAccessUnsupported) in each release's words: CUCHECK's
// "Cuda failure %d '%s'" (cudawrap.h from 2.19; NVIDIA/nccl#1838's
// transport/shm.cc:590), CUDACHECK's "Cuda failure '%s'" (checks.h),
// p2p.cc's "failed to open CUDA IPC handle : %d %s" (v2.7.8-1:237) and
// "failed to peer with device %d(=%lx): %d %s" (v2.30.7-1:355), net.cc's
// "failed to peer with device %d: %d %s" (v2.30.7-1:476), and
// PyTorch's traceback quoting NCCL's last error (field case 246).
var peerAccessCase = docSignatureCase{peerAccessID, func(r *rand.Rand, host string, rank, dev int) []string {
	p := ncclPrefix(host, rank, dev)
	const text = "peer access is not supported between these two devices"
	switch r.Intn(6) {
	case 0:
		return []string{p + fmt.Sprintf(" transport/shm.cc:%d NCCL WARN Cuda failure 217 '%s'", 500+r.Intn(100), text)}
	case 1:
		return []string{p + fmt.Sprintf(" transport/p2p.cc:%d NCCL WARN Cuda failure '%s'", 200+r.Intn(300), text)}
	case 2:
		return []string{p + fmt.Sprintf(" transport/p2p.cc:237 NCCL WARN failed to open CUDA IPC handle : 217 %s", text)}
	case 4:
		return []string{p + fmt.Sprintf(" transport/p2p.cc:355 NCCL WARN failed to peer with device %d(=%x000): 217 %s", (dev+1)%8, 0x10+dev, text)}
	case 3:
		return []string{p + fmt.Sprintf(" transport/net.cc:476 NCCL WARN failed to peer with device %d: 217 %s", (dev+1)%8, text)}
	}
	return []string{
		fmt.Sprintf("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:%d, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.2%d.%d", 3000+r.Intn(900), 4+r.Intn(4), 1+r.Intn(5)),
		"ncclUnhandledCudaError: Call to CUDA function failed.",
		"Last error:",
		"Cuda failure 217 '" + text + "'",
	}
}}

// Field case 246 (NovaSky-AI/SkyRL#108, L4/L40S, NCCL 2.26.2): the four
// lines of PyTorch's error name the GPUs' missing peer access first, from
// the quoted CUDA error's line, with NCCL's generic CUDA failure after it.
func TestPeerAccessUnsupportedFieldPaste(t *testing.T) {
	b, err := os.ReadFile("testdata/field/train/246_l4_l40s_nccl_2_26_2_cuda_failure_217_peer_access_not_supported.txt")
	if err != nil {
		t.Fatal(err)
	}
	a := analyseText(string(b))
	if got := topCause(a); got != peerAccessID {
		t.Fatalf("first %q, want %s (%s)", got, peerAccessID, flagIDs(a))
	}
	f := flagOf(a, peerAccessID)
	if !strings.Contains(f.Evidence, "line 4: Cuda failure 217 'peer access is not supported between these two devices'") {
		t.Errorf("observed %q does not quote line 4", f.Evidence)
	}
	if !strings.Contains(f.Fix, "NCCL_CUMEM_HOST_ENABLE=0") {
		t.Errorf("fix %q does not name NCCL_CUMEM_HOST_ENABLE=0", f.Fix)
	}
	if !hasFlag(a, "error.cuda-failure") {
		t.Errorf("the generic CUDA failure is gone (%s)", flagIDs(a))
	}
}

// Any rank count, host count, share of failing ranks and prefix: the
// failure ranks first, in a job's lines and alone.
func TestPeerAccessUnsupportedAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(217))
	firstAnyRanksAnyPrefix(t, r, []docSignatureCase{peerAccessCase}, 5)
	for _, pre := range causePrefixes(r) {
		for range 8 {
			lines := peerAccessCase.line(r, "node001", r.Intn(8), r.Intn(8))
			if got := topCause(analyseText(prefixed(pre, lines))); got != peerAccessID {
				t.Errorf("%q behind %q: first %q", lines, pre, got)
			}
		}
	}
}

// What it is not: another CUDA error in the same words' places, NCCL's
// peer-access fallback (cudaDeviceEnablePeerAccess 0x2c0 is 704, already
// enabled), an ignored failure (CUDACHECKIGNORE's INFO line), P2P turned
// off by the topology, a framework's own kernel (its own signature), and
// a bare PyTorch CUDA error that is no NCCL call.
func TestPeerAccessUnsupportedMustNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, tc := range map[string]struct {
		lines []string
		first string
	}{
		"another driver error":      {[]string{p + " transport/shm.cc:590 NCCL WARN Cuda failure 1 'invalid argument'"}, "error.cuda-failure"},
		"error 2170":                {[]string{p + " transport/shm.cc:590 NCCL WARN Cuda failure 2170 'unknown error'"}, "error.cuda-failure"},
		"another IPC error":         {[]string{p + " transport/p2p.cc:237 NCCL WARN failed to open CUDA IPC handle : 201 invalid device context"}, ""},
		"another peering error":     {[]string{p + " transport/net.cc:476 NCCL WARN failed to peer with device 1: 101 invalid device ordinal"}, ""},
		"a P2P peering error":       {[]string{p + " transport/p2p.cc:355 NCCL WARN failed to peer with device 1(=1b000): 2170 unknown error"}, ""},
		"peer access fallback":      {[]string{p + " NCCL INFO init.cc:1070 -> cudaDeviceEnablePeerAccess returned (0x2c0)"}, ""},
		"ignored failure":           {[]string{p + " NCCL INFO transport/p2p.cc:420 Cuda failure 'peer access is not supported between these two devices'"}, ""},
		"P2P off by the topology":   {[]string{p + " NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1."}, ""},
		"P2P could not be enabled":  {[]string{p + " NCCL INFO Could not enable P2P between dev 1(=2000) and dev 0(=1000)"}, ""},
		"a custom all-reduce":       {[]string{"Failed: Cuda error /workspace/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'"}, "error.custom-allreduce-no-peer-access"},
		"a PyTorch CUDA error":      {[]string{"RuntimeError: CUDA error: peer access is not supported between these two devices"}, ""},
		"a healthy P2P/IPC channel": {[]string{p + " NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"}, ""},
	} {
		a := analyseText(prefixed("", tc.lines))
		if hasFlag(a, peerAccessID) {
			t.Errorf("%s: %s raised (%s)", name, peerAccessID, flagIDs(a))
		}
		if tc.first != "" && topCause(a) != tc.first {
			t.Errorf("%s: first %q, want %q (%s)", name, topCause(a), tc.first, flagIDs(a))
		}
	}
}

// No fixture but the field paste it was read from raises it.
func TestPeerAccessUnsupportedNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{peerAccessID}, map[string]bool{
		"field/train/246_l4_l40s_nccl_2_26_2_cuda_failure_217_peer_access_not_supported.txt": true,
	})
}
