package bench

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
)

// Refusal is a reason not to run. Forceable ones yield to --force.
type Refusal struct {
	Host      string `json:"host"`
	Reason    string `json:"reason"`
	Forceable bool   `json:"forceable"`
}

// gpuBusy refuses when a GPU already runs a process: a benchmark beside a
// model server measures neither, and on unified memory can freeze the node.
// A node's live state, where read, counts compute processes only: the
// facts count every process, and a Spark with a display shows Xorg and
// gnome-shell there.
func gpuBusy(nodes []*facts.Node, live []Live) []Refusal {
	var out []Refusal
	for i, n := range nodes {
		if i < len(live) && live[i].GPUProcesses != nil {
			if k := *live[i].GPUProcesses; k > 0 {
				out = append(out, Refusal{Host: n.Host, Forceable: true,
					Reason: fmt.Sprintf("the GPUs already run %d compute process(es); stop them or pass --force", k)})
			}
			continue
		}
		for _, g := range n.GPUs {
			if g.Processes > 0 {
				out = append(out, Refusal{Host: n.Host, Forceable: true,
					Reason: fmt.Sprintf("GPU %d (%s) already runs %d process(es); stop them or pass --force", g.Index, g.Name, g.Processes)})
			}
		}
	}
	return out
}

// unifiedMemory reports whether the node's GPUs share system memory (GB10:
// NVML reports no framebuffer size), so free memory is MemAvailable.
func unifiedMemory(n *facts.Node) bool {
	for _, g := range n.GPUs {
		if g.MemoryTotalMiB == nil || platform.FromGPUName(g.Name) == platform.DGXSpark {
			return true
		}
	}
	return len(n.GPUs) == 0
}

// budget returns the bytes one rank on the node may allocate: the set
// fraction of MemAvailable shared by the node's ranks on unified memory, or
// of the GPU's memory on a discrete GPU. ok is false when the facts lack it.
func budget(n *facts.Node, fraction float64) (uint64, string, bool) {
	ranks := uint64(max(1, len(n.GPUs)))
	if unifiedMemory(n) {
		if n.Memory.AvailableBytes == nil {
			return 0, "", false
		}
		avail := *n.Memory.AvailableBytes
		return uint64(float64(avail)*fraction) / ranks, fmt.Sprintf("MemAvailable %s", human(avail)), true
	}
	least := uint64(0)
	for i, g := range n.GPUs {
		b := *g.MemoryTotalMiB << 20
		if i == 0 || b < least {
			least = b
		}
	}
	return uint64(float64(least) * fraction), fmt.Sprintf("GPU memory %s", human(least)), true
}

// footprint estimates the bytes one nccl-tests rank allocates for a largest
// message of size bytes on n ranks: send and receive buffers plus the
// expected-result buffer validation keeps (nccl-tests' -c 1 default).
func footprint(collective string, size int64, n int) int64 {
	nf := float64(max(1, n))
	var f float64
	switch collective {
	case "all_gather":
		f = 2 + 1/nf // recv + expected, send is one rank's share
	case "reduce_scatter":
		f = 1 + 2/nf
	default:
		f = 3
	}
	return int64(float64(size) * f)
}

// capMaxBytes lowers max by halves until a rank's footprint fits the
// smallest budget of any node. It returns 0 when not even min fits.
func capMaxBytes(collective string, min, max int64, ranks int, least uint64) int64 {
	for size := max; size >= min && size > 0; size /= 2 {
		if uint64(footprint(collective, size, ranks)) <= least {
			return size
		}
	}
	return 0
}

func human(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

// SizeString writes a byte count the way nccl-tests reads -b/-e: "16G",
// "32M", plain bytes otherwise. Not results.HumanSize, which writes "1T" and
// "100 B": nccl-tests takes neither as an argument.
func SizeString(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dG", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprintf("%d", b)
}
