package analyze

import (
	"fmt"
	"slices"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightSystemErrorOneNode ranks the reading just above the bare system
// error (0.5) it explains and below every message that names its call.
const weightSystemErrorOneNode = 0.55

// systemErrorOneNode: NCCL failed with a system error (ncclSystemError,
// "unhandled system error") in a job whose GPUs are all on one host, and
// no line names the failing call. Such a job needs no network; the system
// resources NCCL's init then takes are shared memory segments
// (/dev/shm, between processes and even between threads of one process)
// and pinned host memory, which a container limits by default (64 MB
// /dev/shm). For: two or more GPUs on one host (nccl-tests' device lines
// or the log's ranks). Against: another host, any NCCL WARN line (it
// names the call), a signature that names a cause.
func (a *analysis) systemErrorOneNode(o *results.NCCLOutput, hits []diagnose.ErrorHit) {
	sys := -1
	for i, h := range hits {
		switch {
		case h.Signature.ID == "nccl-system-error":
			sys = i
		case h.Signature.Weight > 0.5:
			return
		}
	}
	l := &o.Log
	if sys < 0 || l.WarnCount > 0 || l.NNodes > 1 || len(l.Hosts) > 1 {
		return
	}
	hosts, gpus := slices.Clone(l.Hosts), max(l.NRanks, l.LocalRanks)
	if nr := o.Launch.NoRows; nr != nil {
		for _, h := range nr.Hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		gpus = max(gpus, nr.Ranks)
	}
	if len(hosts) != 1 || gpus < 2 {
		return
	}
	host := hosts[0]
	if host == "" {
		host = "one process"
	}
	a.cause(weightSystemErrorOneNode, report.Fail, "nccl.system-error-one-node",
		"NCCL failed a system call during init on a job whose GPUs are all on one host, and no line names the call: such a job moves no data over a network (its bootstrap sockets stay on the host), and what NCCL's init then takes from the system is shared memory (segments in /dev/shm, between processes and even between threads of one process) and pinned host memory, both limited by default in a container (64 MB /dev/shm)",
		fmt.Sprintf("line %d: %s; %d GPUs on %s; no NCCL WARN line", hits[sys].Line, hits[sys].First, gpus, host),
		"run the container with --ipc=host, or --shm-size=1g (or more) and --ulimit memlock=-1; check df -h /dev/shm and ulimit -l where the job runs; rerun with NCCL_DEBUG=WARN to see the call that failed",
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/runtime_and_mpi_issues.html (Shared memory: NCCL creates shared memory segments in /dev/shm and fails to initialize without enough; Docker: containers default to limited shared and pinned memory, --shm-size=1g --ulimit memlock=-1); https://github.com/NVIDIA/nccl/issues/473")
}
