package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ncclTestsStart writes the start of nccl-tests output as procs processes
// print it: each its header when it does not use MPI (its own test, its
// ranks from 0), one header and one rank list over every process when it
// does. gpus is each process's GPU count.
func ncclTestsStart(r *rand.Rand, procs, gpus int, mpi, version bool) string {
	hdr := fmt.Sprintf("# nThread 1 nGpus %d minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n", gpus)
	if version {
		hdr = "# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903\n# Collective test starting: all_reduce_perf\n" + hdr
	}
	var b strings.Builder
	heads := procs
	if mpi {
		heads = 1
	}
	for range heads {
		b.WriteString(hdr)
	}
	rank := 0
	for p := range procs {
		if !mpi {
			rank = 0
		}
		for g := range gpus {
			fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] NVIDIA H800\n", rank, 700+p*13+r.IntN(5), fmt.Sprintf("hw%02d", 10+p), g, 15+g)
			rank++
		}
	}
	return b.String()
}

// cutLines keeps the first n lines of s (at least keep).
func cutLines(s string, keep, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:max(keep, min(n, len(lines)))], "")
}

// Processes that each ran their own test (nccl-tests without MPI under
// mpirun or srun) are named for any process count, any prefix, pastes cut
// anywhere after the second header; one MPI test over the same processes
// never is.
func TestSeparateTestsHeadersBeforeDevices(t *testing.T) {
	r := rand.New(rand.NewPCG(213, 27))
	for range 60 {
		procs, gpus := 2+r.IntN(15), 1+r.IntN(8)
		version := r.IntN(2) == 0
		p := anyPrefix(r)
		headerLines := 3
		if version {
			headerLines = 5
		}
		own := ncclTestsStart(r, procs, gpus, false, version)
		cut := cutLines(own, 2*headerLines-2, 2*headerLines-2+r.IntN(procs*gpus+procs*headerLines))
		a := Reader("own.txt", strings.NewReader(prefixLines(cut, p)), Options{})
		if topCause(a) != "nccl-tests.not-built-with-mpi" {
			t.Errorf("%d processes, prefix %q: first %q %+v\n%s", procs, p, topCause(a), a.Flags, cut)
		}
		one := ncclTestsStart(r, procs, gpus, true, version)
		one = cutLines(one, headerLines, headerLines+r.IntN(procs*gpus+1))
		a = Reader("mpi.txt", strings.NewReader(prefixLines(one, p)), Options{})
		if hasFlag(a, "nccl-tests.not-built-with-mpi") {
			t.Errorf("one MPI test of %d processes, prefix %q: %+v\n%s", procs, p, a.Flags, one)
		}
	}
}
