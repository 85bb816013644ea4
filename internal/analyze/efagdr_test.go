package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// efaCUDAWarn is libfabric's EFA warning when a GPU buffer cannot be
// registered, in its two placements: efa_domain.c of libfabric 1.18 to
// 1.21 (domain subsystem) and efa_hmem.c later (core subsystem).
func efaCUDAWarn(r *rand.Rand) string {
	where := []string{"efa:domain:efa_domain_hmem_info_init_cuda():169", "efa:core:efa_hmem_info_check_p2p_support_cuda():" + fmt.Sprint(180+r.Intn(60))}[r.Intn(2)]
	return fmt.Sprintf("libfabric:%d:%d::%s<warn> Failed to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will fail.", 20+r.Intn(900), 1725400000+r.Intn(99999), where)
}

// efaJob is the channel lines of a ring over hosts × gpus ranks, the hops
// between hosts via the network transport named by via (its device
// number appended, before a /GDRDMA it ends with: one socket device, as NCCL uses with one routable
// interface), the hops inside a host via P2P/IPC, and the EFA warning
// printed by the ranks in warn.
func efaJob(r *rand.Rand, hosts, gpus int, via string, warn map[int]bool) []string {
	n := hosts * gpus
	var out []string
	for rank := range n {
		h, g := rank/gpus, rank%gpus
		host := fmt.Sprintf("worker-%d", h)
		next := (rank + 1) % n
		t := "P2P/IPC"
		if next/gpus != h {
			t = fmt.Sprintf("%s/%d", via, r.Intn(4))
			if base, ok := strings.CutSuffix(via, "/GDRDMA"); ok {
				t = fmt.Sprintf("%s/%d/GDRDMA", base, r.Intn(4))
			}
			if via == "NET/Socket" {
				t = via + "/0"
			}
		}
		out = append(out, fmt.Sprintf("%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via %s", ncclPrefix(host, rank, g), r.Intn(4), rank, g, next, next%gpus, t))
		if warn[rank] {
			out = append(out, efaCUDAWarn(r))
		}
	}
	return out
}

// someRanks is a random non-empty set of the n ranks.
func someRanks(r *rand.Rand, n int) map[int]bool {
	w := map[int]bool{}
	for _, k := range r.Perm(n)[:1+r.Intn(n)] {
		w[k] = true
	}
	return w
}

// The EFA warning with NCCL's traffic between nodes over sockets names the
// missing GPUDirect RDMA first, for any host, GPU and warning-rank count
// and any prefix; without the warning the socket fallback is what is
// named, and EFA carrying the traffic without GPUDirect RDMA (instance
// types without it) or with it raises no failure from the warning.
func TestEFANoGDRAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(474))
	for _, pre := range causePrefixes(r) {
		for range 3 {
			hosts, gpus := 2+r.Intn(6), 1+r.Intn(8)
			warn := someRanks(r, hosts*gpus)
			text := prefixed(pre, efaJob(r, hosts, gpus, "NET/Socket", warn))
			if a := analyseText(text); topCause(a) != "nccl.efa-gdr-unavailable" {
				t.Fatalf("%d hosts × %d GPUs, %d warning, behind %q: first %q (%s)\n%s", hosts, gpus, len(warn), pre, topCause(a), flagIDs(a), text)
			}
			if a := analyseText(prefixed(pre, efaJob(r, hosts, gpus, "NET/Socket", nil))); hasFlag(a, "nccl.efa-gdr-unavailable") || topCause(a) != "nccl.net-socket" {
				t.Errorf("sockets without the EFA warning behind %q: first %q (%s)", pre, topCause(a), flagIDs(a))
			}
			for _, via := range []string{"NET/AWS Libfabric", "NET/Libfabric", "NET/AWS Libfabric/GDRDMA"} {
				a := analyseText(prefixed(pre, efaJob(r, hosts, gpus, via, warn)))
				if hasFlag(a, "nccl.efa-gdr-unavailable") || firstFail(a) != "" {
					t.Errorf("EFA via %s behind %q: %s", via, pre, flagIDs(a))
				}
			}
		}
	}
}

// The warning alone is a warning that GPUDirect RDMA is unavailable, not
// a failure: instance types without it print it on every healthy run.
func TestEFAWarningAloneWarns(t *testing.T) {
	r := rand.New(rand.NewSource(169))
	for _, pre := range causePrefixes(r) {
		a := analyseText(prefixed(pre, []string{efaCUDAWarn(r)}))
		if got := topCause(a); got != "error.efa-gpu-memory-unregistrable" || firstFail(a) != "" {
			t.Errorf("behind %q: first %q, fail %q", pre, got, firstFail(a))
		}
	}
}

// No fixture but the field paste it was read from raises the failure;
// the warning comes only from that paste and its thread's quote of it.
func TestEFANoGDRNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.efa-gdr-unavailable", "error.efa-gpu-memory-unregistrable"}, map[string]bool{
		"field/train/184_eks_p5_bad_ami_gdr_unavailable_socket_fallback.txt":        true,
		"field/train/184_eks_p5_bad_ami_gdr_unavailable_socket_fallback.txt.SOURCE": true,
	})
}
