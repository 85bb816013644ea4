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

// The Slurm harness's paste: two processes on one node each print
// "Rank 0" (no header, no table) because each ran a test of its own.
func TestSeparateTestsSameRankTwoPIDs(t *testing.T) {
	a := analyseText(fieldTrain(t, "370_nccl_tests_no_mpi_same_rank_repeated.txt"))
	if got := topCause(a); got != "nccl-tests.not-built-with-mpi" {
		t.Fatalf("first %q: %+v", got, a.Flags)
	}
}

// Device lines of one host alone, any process and GPU count, behind any
// prefix: "Rank 0" from two Pids is one test per process; one MPI test's
// ranks (each printed once), and one process's lines pasted twice, are
// not. (Behind a prefix, device lines alone are told to be nccl-tests
// output from four lines on, where the prefix repeats enough to be
// learnt: fewer are tested without one, as in the field paste.)
func TestSeparateTestsRankZeroPIDsAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(370, 2))
	for range 40 {
		procs, gpus := 2+r.IntN(15), 1+r.IntN(8)
		p := anyPrefix(r)
		if procs*gpus < 4 {
			p = ""
		}
		lines := func(mpi bool) string {
			var b strings.Builder
			rank := 0
			for pr := range procs {
				if !mpi {
					rank = 0
				}
				for g := range gpus {
					fmt.Fprintf(&b, "# Rank %2d Group  0 Pid %6d on cnode2-002 device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", rank, 223120+pr, g, 0x1b+g)
					rank++
				}
			}
			return prefixLines(b.String(), p)
		}
		if a := analyseText(lines(false)); topCause(a) != "nccl-tests.not-built-with-mpi" {
			t.Errorf("%d processes of %d GPUs behind %q: first %q", procs, gpus, p, topCause(a))
		}
		if a := analyseText(lines(true)); hasFlag(a, "nccl-tests.not-built-with-mpi") {
			t.Errorf("one MPI test of %d processes behind %q: raised", procs, p)
		}
		twice := "# Rank  0 Group  0 Pid 223120 on cnode2-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
		if a := analyseText(prefixLines(strings.Repeat(twice, 2+r.IntN(4)), p)); hasFlag(a, "nccl-tests.not-built-with-mpi") {
			t.Errorf("one process's line twice behind %q: raised", p)
		}
	}
}

// One MPI launch that failed before its table and its retry, both on one
// host: each header lists its own "Rank 0", and the retry's Pid differs.
// That is two launches, not one test per process.
func TestSeparateTestsRetryIsNotTwoProcesses(t *testing.T) {
	r := rand.New(rand.NewPCG(370, 3))
	for range 20 {
		procs := 2 + r.IntN(7)
		var b strings.Builder
		for launch := range 2 {
			b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
			for rank := range procs {
				fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on      nodeA device %2d [0x%02x] NVIDIA H100 80GB HBM3\n", rank, 4100+1000*launch+rank, rank, 7+rank)
			}
			if launch == 0 {
				b.WriteString("nodeA: Test CUDA failure common.cu:892 'out of memory'\n .. nodeA pid 4100: Test failure common.cu:1076\n")
			}
		}
		if a := analyseText(b.String()); hasFlag(a, "nccl-tests.not-built-with-mpi") {
			t.Errorf("an MPI launch of %d processes and its retry: raised\n%s", procs, b.String())
		}
	}
}
