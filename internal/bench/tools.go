package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"path"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/shell"
)

// Tools says where the benchmark programs live on the nodes. Empty fields
// mean "found through PATH".
type Tools struct {
	Perftest  string `json:"perftest,omitempty"`   // directory of ib_write_bw, ib_write_lat
	IPerf3    string `json:"iperf3,omitempty"`     // path of iperf3
	MPIRun    string `json:"mpirun,omitempty"`     // path of mpirun
	NCCLTests string `json:"nccl_tests,omitempty"` // directory of all_reduce_perf, all_gather_perf, ...
}

// Path returns the command to run for a tool name ("ib_write_bw",
// "all_gather_perf", "iperf3", "mpirun").
func (t Tools) Path(tool string) string {
	dir := ""
	switch {
	case tool == "iperf3" && t.IPerf3 != "":
		return t.IPerf3
	case tool == "mpirun" && t.MPIRun != "":
		return t.MPIRun
	case strings.HasPrefix(tool, "ib_"):
		dir = t.Perftest
	case strings.HasSuffix(tool, "_perf"):
		dir = t.NCCLTests
	}
	if dir == "" {
		return tool
	}
	return path.Join(dir, tool)
}

// HowToGet says how to install a missing tool, in one line.
func HowToGet(tool string) string {
	switch {
	case strings.HasPrefix(tool, "ib_"):
		return "install perftest (Ubuntu/Debian: sudo apt install perftest), or pass --perftest DIR"
	case tool == "iperf3":
		return "install iperf3 (Ubuntu/Debian: sudo apt install iperf3), or use --native for sparkrig's own TCP probe"
	case tool == "mpirun":
		return "install Open MPI (Ubuntu/Debian: sudo apt install openmpi-bin libopenmpi-dev), or pass --mpirun PATH"
	case strings.HasSuffix(tool, "_perf"):
		return "build nccl-tests on every node (git clone https://github.com/NVIDIA/nccl-tests && make -C nccl-tests MPI=1 MPI_HOME=/usr/lib/$(uname -m)-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda), then pass --nccl-tests nccl-tests/build"
	}
	return "install " + tool
}

// NCCLJSONSupported asks the nccl-tests build on host whether it has -J
// (2.17.3 and later list --output_file in their help).
func NCCLJSONSupported(ctx context.Context, t runner.Runner, host string, tools Tools) bool {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := run(cctx, t, host, shell.QuoteIfNeeded(tools.Path("all_reduce_perf"))+" -h 2>&1 | grep -q output_file && echo yes")
	return err == nil && strings.TrimSpace(out) == "yes"
}

// HaveTool reports whether host finds tool (a name on PATH or a path).
func HaveTool(ctx context.Context, t runner.Runner, host, tool string) bool {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := run(cctx, t, host, "command -v "+shell.QuoteIfNeeded(tool)+" >/dev/null")
	return err == nil
}
