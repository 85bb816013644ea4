// Package results holds the typed model of benchmark results and the parsers
// that produce it from the outputs of nccl-tests, perftest, iperf3 and
// nvbandwidth. sparkrig's own benchmarks emit the same model, so analysis,
// expectations and reports treat both alike.
package results

import "strconv"

// Collective results use nccl-tests' definitions: algbw = size/time and
// busbw = algbw × factor, where the factor depends on the collective and the
// rank count n (all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall
// (n−1)/n; broadcast, reduce, sendrecv 1).

// NCCLRow is one message size of a collective table. Pointers are nil where
// the output says N/A or the column is absent.
type NCCLRow struct {
	SizeBytes int64  `json:"size_bytes"`
	Count     int64  `json:"count"`
	Type      string `json:"type"`
	RedOp     string `json:"redop,omitempty"`
	Root      int    `json:"root"`
	OOP       Timing `json:"out_of_place"`
	IP        Timing `json:"in_place"`
}

// Timing is one half (out-of-place or in-place) of a collective row.
type Timing struct {
	TimeUS    *float64 `json:"time_us,omitempty"`
	AlgBWGBs  *float64 `json:"algbw_gbs,omitempty"`
	BusBWGBs  *float64 `json:"busbw_gbs,omitempty"`
	WrongErrs *int64   `json:"wrong,omitempty"`
}

// NCCLDevice is a rank's device line from the nccl-tests header.
type NCCLDevice struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host"`
	PID    int    `json:"pid,omitempty"`
	Device int    `json:"device"`
	PCIBus string `json:"pci_bus,omitempty"`
	Name   string `json:"name,omitempty"`
}

// NCCLTable is one collective run: a header, a table of sizes and a footer.
type NCCLTable struct {
	// Collective is the canonical name: all_reduce, all_gather, reduce_scatter,
	// broadcast, reduce, alltoall, sendrecv, scatter, gather, hypercube.
	Collective  string       `json:"collective"`
	Tool        string       `json:"tool"` // "nccl-tests" or "sparkrig"
	ToolVersion string       `json:"tool_version,omitempty"`
	NCCLVersion string       `json:"nccl_version,omitempty"`
	Ranks       int          `json:"ranks,omitempty"` // 0: not told by the input
	Nodes       int          `json:"nodes,omitempty"` // 0: not told by the input
	Devices     []NCCLDevice `json:"devices"`
	Rows        []NCCLRow    `json:"rows"`
	AvgBusBWGBs *float64     `json:"avg_busbw_gbs,omitempty"` // the footer; averages every size
	// Footers counts the "Avg bus bandwidth" footers read into this table:
	// more than one means several processes each ran a test of their own
	// (nccl-tests built without MPI=1 and started by a launcher).
	Footers      int   `json:"footers,omitempty"`
	WrongResults int64 `json:"wrong_results"`
	// PeakBusBWGBs is the best busbw of any row (either placement) and PeakSize its message size.
	PeakBusBWGBs float64 `json:"peak_busbw_gbs"`
	PeakSize     int64   `json:"peak_size_bytes"`

	// CollectiveGuessed is true when no line named the collective and it was
	// told from the redop column and busbw/algbw.
	CollectiveGuessed bool `json:"collective_guessed,omitempty"`
	// RanksInferred is true when Ranks was recovered from busbw/algbw
	// because the output printed no device lines.
	RanksInferred bool `json:"ranks_inferred,omitempty"`
	NThreads      int  `json:"nthreads,omitempty"`
	NGpus         int  `json:"ngpus,omitempty"`
	// OutOfBounds is the footer's "Out of bounds values" count.
	OutOfBounds *int64 `json:"out_of_bounds,omitempty"`
	// MinBWFailed: the footer's "Avg bus bandwidth" line ended in FAILED,
	// nccl-tests' own check against NCCL_TESTS_MIN_BW (the average below 90 %
	// of it; the process then exits non-zero).
	MinBWFailed bool `json:"min_bw_failed,omitempty"`
	// Complete is true when the footer was seen; false means a truncated table.
	Complete bool `json:"complete"`
	// Line is the input line where the table's column header was read.
	Line int `json:"line,omitempty"`
}

// BusBWFactor returns nccl-tests' bus-bandwidth factor for a collective on n ranks.
func BusBWFactor(collective string, n int) float64 {
	if n <= 0 {
		return 0
	}
	nf := float64(n)
	switch collective {
	case "all_reduce":
		return 2 * (nf - 1) / nf
	case "all_gather", "reduce_scatter", "alltoall":
		return (nf - 1) / nf
	default: // broadcast, reduce, sendrecv, scatter, gather, hypercube
		return 1
	}
}

// FinishPeak fills PeakBusBWGBs, PeakSize and WrongResults from Rows.
func (t *NCCLTable) FinishPeak() {
	t.PeakBusBWGBs, t.PeakSize, t.WrongResults = 0, 0, 0
	for _, r := range t.Rows {
		for _, tm := range []Timing{r.OOP, r.IP} {
			if tm.BusBWGBs != nil && *tm.BusBWGBs > t.PeakBusBWGBs {
				t.PeakBusBWGBs, t.PeakSize = *tm.BusBWGBs, r.SizeBytes
			}
			if tm.WrongErrs != nil && *tm.WrongErrs > 0 {
				t.WrongResults += *tm.WrongErrs
			}
		}
	}
}

// HumanSize writes a byte count the way nccl-tests' -b/-e take it: 16 GiB
// as "16G", 32 MiB as "32M", others in bytes.
func HumanSize(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// TCPProbeResult is one run of sparkrig's own TCP probe (`bench tcp --native`):
// multi-stream throughput and round trips, in the units analysis judges.
type TCPProbeResult struct {
	Streams    int     `json:"streams"`
	DurationS  float64 `json:"duration_s"`
	Gbps       float64 `json:"gbps"`
	RTTSamples int     `json:"rtt_samples"`
	RTTMinUS   float64 `json:"rtt_min_us"`
	RTTAvgUS   float64 `json:"rtt_avg_us"`
	RTTP99US   float64 `json:"rtt_p99_us"`
}
