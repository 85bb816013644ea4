package analyze

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// archLog is an nccl-tests run with NCCL_DEBUG=INFO in the format of
// field case 231 (NVIDIA/nccl-tests#291): the header, one device line per
// rank naming the GPU, NCCL's banner, then its startup lines; fail adds
// nccl-tests' own failure line.
func archLog(ranks, hosts int, gpu, version string, fail bool) []string {
	out := []string{
		"# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 1048576(bytes) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
		"#",
		"# Using devices",
	}
	for r := range ranks {
		out = append(out, fmt.Sprintf("#  Rank %2d Group  0 Pid %d on node%02d device  %d [0000:%02x:00] %s", r, 12225+r, r%hosts, r%8, 0x16+r%8, gpu))
	}
	for r := range ranks {
		head := fmt.Sprintf("node%02d:%d:%d [%d]", r%hosts, 12225+r, 12255+r, r%8)
		if r == 0 && version != "" {
			out = append(out, head+" NCCL INFO NCCL version "+version+"+cuda12.4")
		}
		out = append(out,
			head+" NCCL INFO cudaDriverVersion 12080",
			head+" NCCL INFO NET/Socket : Using [0]ens49f1np1:192.168.30.122<0>",
			head+" NCCL INFO Using network Socket")
	}
	if fail {
		out = append(out, "node00: Test NCCL failure alltoall.cu:62 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '")
	}
	return out
}

// archTable is the same run without NCCL_DEBUG, in the format of the
// nccl-tests 2.17 and later fixtures (field cases 04 and 235): the release
// only in the header's nccl-library, then a table of all_reduce rows.
func archTable(ranks, hosts int, gpu, version string) []string {
	var maj, mnr, pat int
	fmt.Sscanf(version, "%d.%d.%d", &maj, &mnr, &pat)
	out := []string{
		fmt.Sprintf("# nccl-tests version 2.17.8 nccl-headers=%d nccl-library=%d", maj*10000+mnr*100+pat, maj*10000+mnr*100+pat),
		"# Collective test starting: all_reduce_perf",
		"# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0",
		"#",
		"# Using devices",
	}
	for r := range ranks {
		out = append(out, fmt.Sprintf("#  Rank %2d Group  0 Pid %d on node%02d device  %d [0000:%02x:00] %s", r, 3617715+r, r%hosts, r%8, 1+r%8, gpu))
	}
	return append(out,
		"#",
		"#                                                              out-of-place                       in-place          ",
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
		"           8             2     float     sum      -1    14.59    0.00    0.00       0    13.78    0.00    0.00       0",
		"   134217728      33554432     float     sum      -1   2693.2   49.84   87.22       0   2556.4   52.50   91.88       0",
		"# Out of bounds values : 0 OK",
		"# Avg bus bandwidth    : 22.1205 ",
		"#",
		"# Collective test concluded: all_reduce_perf")
}

// archMessage marks the rule's flag among other nccl.too-old flags.
const archMessage = "the first release that supports this GPU's architecture"

func archFlag(a report.AnalysisResult) *report.AnalysisFlag {
	for i := range a.Flags {
		if a.Flags[i].ID == "nccl.too-old" && strings.Contains(a.Flags[i].Message, archMessage) {
			return &a.Flags[i]
		}
	}
	return nil
}

// A Blackwell GPU named on the device lines with an NCCL release older
// than the one that first supports its architecture is NCCL too old,
// first among the flags, for any rank and host count behind any prefix:
// a warning when nothing failed, a failure ranked first when the run
// failed. The floor's release, a later one, no release, or a GPU of
// another architecture (Ada's "RTX 5000", H200, B300) is not.
func TestArchTooOldAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(291))
	old := []struct{ gpu, version string }{
		{"NVIDIA GeForce RTX 5090", "2.25.1"},
		{"NVIDIA GeForce RTX 5080", "2.21.5"},
		{"NVIDIA GeForce RTX 5060 Ti", "2.23.4"},
		{"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "2.25.1"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "2.24.3"},
		{"NVIDIA B200", "2.21.5"},
		{"NVIDIA GB200", "2.24.3"},
	}
	fine := []struct{ gpu, version string }{
		{"NVIDIA GeForce RTX 5090", "2.26.2"},
		{"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "2.31.2"},
		{"NVIDIA B200", "2.25.1"},
		{"NVIDIA GB200", "2.27.7"},
		{"NVIDIA GeForce RTX 5090", ""},
		{"NVIDIA RTX 5000 Ada Generation", "2.18.5"},
		{"Quadro RTX 5000", "2.18.5"},
		{"NVIDIA H200", "2.21.5"},
		{"NVIDIA B300 SXM6 AC", "2.24.3"},
		{"NVIDIA GeForce RTX 4090", "2.18.5"},
	}
	for _, pre := range causePrefixes(r) {
		n, hosts := 1+r.Intn(16), 1+r.Intn(4)
		for _, c := range old {
			for _, fail := range []bool{false, true} {
				a := analyseText(prefixed(pre, archLog(n, hosts, c.gpu, c.version, fail)))
				f := archFlag(a)
				want := report.Warn
				if fail {
					want = report.Fail
				}
				if f == nil || f.Severity != want || len(a.Flags) == 0 || a.Flags[0].ID != "nccl.too-old" {
					t.Errorf("%s with NCCL %s, %d ranks on %d hosts, failed %v, behind %q: flag %+v, flags %+v", c.gpu, c.version, n, hosts, fail, pre, f, a.Flags)
				}
			}
			if f := archFlag(analyseText(prefixed(pre, archTable(n, hosts, c.gpu, c.version)))); f == nil || f.Severity != report.Warn {
				t.Errorf("%s with nccl-library %s in the header, %d ranks behind %q: flag %+v", c.gpu, c.version, n, pre, f)
			}
		}
		for _, c := range fine {
			if a := analyseText(prefixed(pre, archLog(n, hosts, c.gpu, c.version, true))); archFlag(a) != nil {
				t.Errorf("%s with NCCL %q behind %q: flagged %+v", c.gpu, c.version, pre, archFlag(a))
			}
			if c.version == "" {
				continue
			}
			if a := analyseText(prefixed(pre, archTable(n, hosts, c.gpu, c.version))); archFlag(a) != nil {
				t.Errorf("%s with nccl-library %s behind %q: flagged %+v", c.gpu, c.version, pre, archFlag(a))
			}
		}
	}
}

// Every field paste where the rule fires is one whose thread concluded
// that NCCL was too old; the healthy pastes that name Blackwell GPUs
// (cases 04 and 224, GB200; 35, RTX 5090) do not raise it.
func TestArchTooOldOnlyWhereNCCLWasTooOld(t *testing.T) {
	fired := 0
	err := filepath.WalkDir(filepath.Join("testdata", "field", "train"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txt") {
			return err
		}
		src, err := os.ReadFile(path + ".SOURCE")
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if archFlag(Reader(path, f, Options{})) == nil {
			return nil
		}
		fired++
		if !strings.Contains(string(src), "\nTRUTH: nccl-too-old\n") {
			t.Errorf("%s: raised, but the thread's truth is not nccl-too-old", filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fired == 0 {
		t.Error("raised on no field paste (case 231, RTX 5090 with NCCL 2.25.1, should raise it)")
	}
}

// archSpecific are the messages that name the release's fault themselves.
var archSpecific = map[string]bool{"error.nccl-not-built-for-gpu-arch": true, "error.nccl-kernel-shmem-exceeds": true, "error.nccl-2251-kernel-launch": true}

// The release's flag is a failure only for an error it explains: NCCL's
// code not running on the GPU (no kernel image, shared memory beyond the
// block's, 2.25.1's launch failure, a kernel's fault, NCCL's generic
// unhandled cuda error) in NCCL's, nccl-tests' or a framework's words.
// An error with a cause of its own (the network, the bootstrap, two ranks
// on one GPU, memory, peer access) leaves it a warning, and that error
// ranks first; for any rank and host count behind any prefix.
func TestArchTooOldFailsOnlyOnErrorsItExplains(t *testing.T) {
	r := rand.New(rand.NewSource(1611))
	p := ncclPrefix("node00", 0, 0)
	explained := [][]string{
		{"node00: Test NCCL failure alltoall.cu:62 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '"},
		{"node00: Test CUDA failure common.cu:516 'an illegal memory access was encountered'"},
		{p + " enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'"},
		{p + " enqueue.cc:1196 NCCL WARN Cuda failure 'invalid device function'"},
		{p + " init.cc:1320 NCCL WARN Cuda failure 'named symbol not found'"},
		{p + " NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856"},
		{"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
			"ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 'too many resources requested for launch'"},
	}
	own := []struct {
		lines []string
		first string
	}{
		{[]string{p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.30.123<40123> failed : No route to host"}, "error.socket-no-route"},
		{[]string{p + " init.cc:872 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 16000"}, "error.duplicate-gpu"},
		{[]string{p + " misc/ibvwrap.cc:301 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2"}, "error.ib-qp-timeout"},
		{[]string{p + " transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'"}, "error.nccl-peer-access-unsupported"},
		{[]string{p + " include/alloc.h:125 NCCL WARN Cuda failure 2 'out of memory'"}, "error.cuda-oom"},
		// NCCL reports every CUDA failure as "unhandled cuda error": beside
		// an error with a cause of its own, that phrase explains nothing
		{[]string{p + " transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'",
			"node00: Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '"}, "error.nccl-peer-access-unsupported"},
		{[]string{"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
			"ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 217 'peer access is not supported between these two devices'"}, "error.nccl-peer-access-unsupported"},
		{[]string{p + " include/alloc.h:125 NCCL WARN Cuda failure 2 'out of memory'",
			"node00: Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '"}, ""},
		{[]string{"node00: Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '"}, ""},
		{[]string{"node00: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / '"}, ""},
	}
	old := []struct{ gpu, version string }{
		{"NVIDIA GeForce RTX 5090", "2.25.1"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "2.24.3"},
		{"NVIDIA GB200", "2.21.5"},
	}
	for _, pre := range causePrefixes(r) {
		n, hosts := 1+r.Intn(16), 1+r.Intn(4)
		for _, c := range old {
			log := archLog(n, hosts, c.gpu, c.version, false)
			for _, e := range explained {
				a := analyseText(prefixed(pre, append(append([]string(nil), log...), e...)))
				// the release, or a message that names this very fault
				// (tied with it, see weightArchFloor)
				first := topCause(a)
				if f := archFlag(a); f == nil || f.Severity != report.Fail || first != "nccl.too-old" && !archSpecific[first] {
					t.Errorf("%s with NCCL %s behind %q, %q: flag %+v, first %q", c.gpu, c.version, pre, e, f, topCause(a))
				}
			}
			for _, e := range own {
				a := analyseText(prefixed(pre, append(append([]string(nil), log...), e.lines...)))
				if f := archFlag(a); f == nil || f.Severity != report.Warn {
					t.Errorf("%s with NCCL %s behind %q, %q: flag %+v", c.gpu, c.version, pre, e.lines, f)
				}
				if topCause(a) == "nccl.too-old" || e.first != "" && topCause(a) != e.first {
					t.Errorf("%s with NCCL %s behind %q, %q: first %q, want %q", c.gpu, c.version, pre, e.lines, topCause(a), e.first)
				}
			}
		}
	}
}
