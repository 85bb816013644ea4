package analyze

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// launchPrefixes are real line prefixes (MPI output tags, a pod name, a
// timestamp) and none.
var launchPrefixes = []string{"", "[1,0]<stdout>:", "worker-0: ", "2024-05-08T10:11:12.123Z ", "        "}

func hasFlag(a report.AnalysisResult, id string) bool {
	for _, f := range a.Flags {
		if f.ID == id {
			return true
		}
	}
	return false
}

func withPrefix(lines []string, pre string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(pre + l + "\n")
	}
	return b.Bytes()
}

// oneProcessHeader is the header a process of nccl-tests built without
// MPI=1 prints: it is rank 0 of its own one-rank test.
func oneProcessHeader(host string) []string {
	return []string{
		"# nThread 1 nGpus 1 minBytes 1310720000 maxBytes 1310720000 step: 1048576(bytes) warmup iters: 5 iters: 20 validation: 1",
		"#",
		"# Using devices",
		fmt.Sprintf("#   Rank  0 Pid   %d on %s device  0 [0x00] Tesla V100-SXM2-16GB", 1000+len(host), host),
	}
}

// Any number of processes, each printing its own header with "Rank 0" on
// its host (no row kept), or its own footer (footers pasted alone), is
// read as nccl-tests run once per process, behind any prefix.
func TestSeparateTestsAnyProcessCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3612, 1))
	for n := 2; n <= 9; n++ {
		for _, pre := range launchPrefixes {
			var headers []string
			for i := range n {
				headers = append(headers, oneProcessHeader(fmt.Sprintf("node%02d", i))...)
			}
			headers = append(headers, "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error")
			a := Reader("h.txt", bytes.NewReader(withPrefix(headers, pre)), Options{})
			if !hasFlag(a, "nccl-tests.not-built-with-mpi") || a.Status != report.VerdictCritical {
				t.Errorf("%d headers, prefix %q: %s %+v", n, pre, a.Status, a.Flags)
			}
			var footers []string
			base := 1 + r.Float64()*20
			for range n {
				footers = append(footers, "# Out of bounds values : 0 OK", fmt.Sprintf("# Avg bus bandwidth    : %.5f ", base*(1+r.Float64()*0.05)), "#")
			}
			a = Reader("f.txt", bytes.NewReader(withPrefix(footers, pre)), Options{})
			if !hasFlag(a, "nccl-tests.not-built-with-mpi") {
				t.Errorf("%d footers, prefix %q: %+v", n, pre, a.Flags)
			}
		}
	}
}

// Cases that must not fire: one MPI-launched test over any number of
// hosts (one rank 0), two complete runs on other hosts pasted one after
// the other (each rank 0 with its own table and footer), one footer, and
// footers of different tests far apart.
func TestSeparateTestsMustNotFire(t *testing.T) {
	run := func(hosts []string, ranksPerHost int) []string {
		out := []string{"# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"}
		rank := 0
		for _, h := range hosts {
			for d := range ranksPerHost {
				out = append(out, fmt.Sprintf("#  Rank %2d Group  0 Pid %6d on %10s device  %d [0x%02x] NVIDIA H100 80GB HBM3", rank, 4000+rank, h, d, 0x18+d))
				rank++
			}
		}
		return append(out,
			"#",
			"#                                                              out-of-place                       in-place",
			"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
			"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
			"   536870912     134217728     float     sum      -1    10052   53.41   93.46      0   9676.9   55.48   97.09      0",
			"# Out of bounds values : 0 OK",
			"# Avg bus bandwidth    : 95.3009",
			"#")
	}
	for nh := 1; nh <= 6; nh++ {
		var hosts, others []string
		for i := range nh {
			hosts = append(hosts, fmt.Sprintf("gpu%02d", i))
			others = append(others, fmt.Sprintf("gpu%02d", 40+i))
		}
		for _, pre := range launchPrefixes {
			cases := map[string][]string{
				"one run":         run(hosts, 4),
				"two runs":        append(run(hosts, 2), run(others, 2)...),
				"one footer":      {"# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 3.94145 "},
				"different tests": {"# Avg bus bandwidth    : 1.2", "#", "# Avg bus bandwidth    : 92.3405 "},
			}
			for name, lines := range cases {
				a := Reader(name+".txt", bytes.NewReader(withPrefix(lines, pre)), Options{})
				if hasFlag(a, "nccl-tests.not-built-with-mpi") {
					t.Errorf("%s on %d hosts, prefix %q: fired: %+v", name, nh, pre, a.Flags)
				}
			}
		}
	}
	if strings.Contains(fmt.Sprint(launchPrefixes), "\n") {
		t.Fatal("a prefix holds a newline")
	}
}

// ncclInfo writes NCCL INFO lines as rank r of host h prints them.
func ncclInfo(h string, r int, msgs ...string) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, fmt.Sprintf("%s:%d:%d [%d] NCCL INFO %s", h, 7000+r, 7100+r, r%8, m))
	}
	return out
}

// NCCL_GRAPH_FILE set by the environment is named on any rank count and
// behind any prefix; the dump and topology files are not.
func TestGraphFileSetAnyRanks(t *testing.T) {
	for n := 1; n <= 8; n++ {
		for _, pre := range launchPrefixes {
			for env, fire := range map[string]bool{"NCCL_GRAPH_FILE": true, "NCCL_GRAPH_DUMP_FILE": false, "NCCL_TOPO_FILE": false} {
				var lines []string
				for r := range n {
					lines = append(lines, ncclInfo(fmt.Sprintf("node%d", r/4), r,
						env+" set by environment to /opt/image/graph.xml",
						"NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>")...)
				}
				a := Reader("g.txt", bytes.NewReader(withPrefix(lines, pre)), Options{})
				if got := hasFlag(a, "nccl.graph-file-set"); got != fire {
					t.Errorf("%s, %d ranks, prefix %q: fired %v", env, n, pre, got)
				}
			}
		}
	}
}

// "NET/IB : No device found" with an NCCL_IB_* setting is named on any
// rank count and prefix; not when a rank lists NET/IB devices, when IB is
// turned off, or when nothing configures IB.
func TestIBRequestedNoDevice(t *testing.T) {
	for n := 1; n <= 8; n++ {
		for _, pre := range launchPrefixes {
			cases := map[string]struct {
				env, extra string
				fire       bool
			}{
				"asked":        {"NCCL_IB_DISABLE set by environment to 0.", "", true},
				"hca named":    {"NCCL_IB_HCA set by environment to mlx5_0", "", true},
				"ib off":       {"NCCL_IB_DISABLE set by environment to 1.", "", false},
				"nothing said": {"NCCL_SOCKET_IFNAME set by environment to eth0", "", false},
				"other rank":   {"NCCL_IB_DISABLE set by environment to 0.", "NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.2<0>", false},
			}
			for name, c := range cases {
				var lines []string
				for r := range n {
					lines = append(lines, ncclInfo(fmt.Sprintf("node%d", r/2), r, "NET/IB : No device found.", c.env)...)
				}
				if c.extra != "" {
					lines = append(lines, ncclInfo("node9", 9, c.extra)...)
				}
				a := Reader("i.txt", bytes.NewReader(withPrefix(lines, pre)), Options{})
				if got := hasFlag(a, "nccl.ib-no-device"); got != c.fire {
					t.Errorf("%s, %d ranks, prefix %q: fired %v (%+v)", name, n, pre, got, a.Flags)
				}
			}
		}
	}
}

// nccl-tests built against NCCL 1 is named behind any prefix and on any
// GPU count, with the failure it ends in or none; an NCCL 2 header is not.
func TestNCCLOneHeader(t *testing.T) {
	for g := 1; g <= 8; g++ {
		for _, pre := range launchPrefixes {
			for v, fire := range map[string]bool{"1.0": true, "1.3": true, "2.3": false} {
				lines := []string{
					fmt.Sprintf("nThread 1 nGpus %d minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1", g),
					"# NCCL Tests compiled with NCCL " + v,
					"# Using devices",
				}
				for d := range g {
					lines = append(lines, fmt.Sprintf("#   Rank  %d on     node03 device  %d [0x00] Tesla P100-PCIE-16GB", d, d))
				}
				if g%2 == 0 {
					lines = append(lines, "NCCL failure all_reduce.cu:95 'unhandled cuda error'")
				}
				a := Reader("n.txt", bytes.NewReader(withPrefix(lines, pre)), Options{})
				got := false
				for _, f := range a.Flags {
					if f.ID == "nccl.too-old" && f.Severity == report.Fail {
						got = true
					}
				}
				if got != fire {
					t.Errorf("NCCL %s, %d GPUs, prefix %q: fired %v (%+v)", v, g, pre, got, a.Flags)
				}
			}
		}
	}
}

// Headers of several processes printed one after another before any
// device line (field case 158: two 8-GPU processes of one mpirun on one
// host) are read as nccl-tests run once per process, for any process and
// GPU count, behind any prefix; a rerun after a failed start (an error
// line between the headers) and a header alone do not.
func TestStackedHeadersAnyProcessCount(t *testing.T) {
	r := rand.New(rand.NewPCG(158, 3618))
	header := func(gpus int) []string {
		return []string{fmt.Sprintf("# nThread 1 nGpus %d minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", gpus), "#", "# Using devices"}
	}
	for range 20 {
		procs, gpus := 2+r.IntN(7), 1+r.IntN(8)
		var lines []string
		for range procs {
			lines = append(lines, header(gpus)...)
		}
		for g := range gpus {
			lines = append(lines, fmt.Sprintf("#  Rank %2d Group  0 Pid %6d on       hw14 device  %d [0x%02x] NVIDIA H800", g, 798, g, 0x0f+g))
		}
		for _, pre := range append(append([]string{}, launchPrefixes...), realPrefixes...) {
			a := Reader("s.txt", bytes.NewReader(withPrefix(lines, pre)), Options{})
			if firstFail(a) != "nccl-tests.not-built-with-mpi" {
				t.Errorf("%d processes × %d GPUs, prefix %q: %+v", procs, gpus, pre, a.Flags)
			}
			rerun := append(append(header(gpus), "hw14: Test CUDA failure common.cu:892 'out of memory'"), header(gpus)...)
			for name, l := range map[string][]string{"rerun": rerun, "one header": header(gpus)} {
				if a := Reader(name+".txt", bytes.NewReader(withPrefix(l, pre)), Options{}); hasFlag(a, "nccl-tests.not-built-with-mpi") {
					t.Errorf("%s, prefix %q: fired: %+v", name, pre, a.Flags)
				}
			}
		}
	}
}
