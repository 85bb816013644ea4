package bench

import (
	"path"
	"strings"
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
