package gpu

import (
	"context"
	"fmt"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// MemCap is the free-memory cap: the most one benchmark may allocate on a device.
type MemCap struct {
	Bytes  uint64
	Reason string // how it was derived, for the refusal message
}

// NewMemCap takes fraction of the device's free memory, or, when the GPU
// shares the host's memory (integrated, e.g. GB10), fraction of MemAvailable
// split among the node's gpus: there cudaMemGetInfo does not count what the
// page cache could give back. sparkrig bench sizes nccl-tests the same way.
func NewMemCap(d Device, memAvailable uint64, fraction float64, gpus int) MemCap {
	if d.Integrated && memAvailable > 0 {
		gpus = max(1, gpus)
		share := ""
		if gpus > 1 {
			share = fmt.Sprintf(" shared by %d GPUs", gpus)
		}
		return MemCap{Bytes: uint64(float64(memAvailable)*fraction) / uint64(gpus),
			Reason: fmt.Sprintf("%.0f%% of MemAvailable %s%s (unified memory)", fraction*100, report.HumanBytes(int64(memAvailable)), share)}
	}
	return MemCap{Bytes: uint64(float64(d.MemFreeBytes) * fraction),
		Reason: fmt.Sprintf("%.0f%% of GPU %d's free memory %s", fraction*100, d.Index, report.HumanBytes(int64(d.MemFreeBytes)))}
}

// Allow returns an error when need exceeds the cap.
func (c MemCap) Allow(what string, need uint64) error {
	if need > c.Bytes {
		return fmt.Errorf("%s needs %s per GPU, above the cap of %s (%s); lower the size or raise --mem-fraction",
			what, report.HumanBytes(int64(need)), report.HumanBytes(int64(c.Bytes)), c.Reason)
	}
	return nil
}

// RunLocal runs every collective of o over devs in this process and returns
// one table per collective. row is called after each size.
func (s *Stack) RunLocal(ctx context.Context, devs []int, o CollectiveOptions, h Hooks) ([]results.NCCLTable, error) {
	defer lockThread()()
	g, err := s.NewLocalGroup(devs)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return g.runAll(ctx, o, h)
}

// Hooks let a caller print a table as it is measured. Any may be nil.
type Hooks struct {
	Start func(results.NCCLTable) // header fields filled, no rows yet
	Row   func(results.NCCLRow)
	End   func(results.NCCLTable)
}

func (g *Group) runAll(ctx context.Context, o CollectiveOptions, h Hooks) ([]results.NCCLTable, error) {
	if err := g.alloc(uint64(o.MaxBytes)); err != nil {
		return nil, err
	}
	_, ver := g.nccl.Version()
	var tables []results.NCCLTable
	for _, op := range o.Ops {
		t := g.newTable(op, ver)
		if h.Start != nil {
			h.Start(t)
		}
		err := g.Sweep(ctx, &t, o, h.Row)
		if err != nil {
			return tables, err
		}
		if h.End != nil {
			h.End(t)
		}
		tables = append(tables, t)
	}
	return tables, nil
}

func (g *Group) newTable(op, ncclVersion string) results.NCCLTable {
	devs := g.devices()
	if g.peers != nil {
		devs = append([]results.NCCLDevice(nil), g.peers...)
	}
	return results.NCCLTable{Collective: op, Tool: "sparkrig", NCCLVersion: ncclVersion,
		Ranks: g.nranks, Nodes: countHosts(devs), Devices: devs, Rows: []results.NCCLRow{}}
}

// countHosts is the number of distinct hosts among devs (at least 1): a
// single-process run leaves Host empty, that is this host.
func countHosts(devs []results.NCCLDevice) int {
	hosts := map[string]bool{}
	for _, d := range devs {
		hosts[d.Host] = true
	}
	return max(1, len(hosts))
}

func (g *Group) devices() []results.NCCLDevice {
	var ds []results.NCCLDevice
	for _, r := range g.local {
		bus, _ := g.s.RT.PCIBusID(r.dev)
		ds = append(ds, results.NCCLDevice{Rank: r.index, Device: r.dev, PCIBus: bus, Name: g.s.Driver.DeviceName(r.dev)})
	}
	return ds
}
