package gpu

import (
	"fmt"
	"io"

	"github.com/sparkrig/sparkrig/internal/results"
)

// WriteTableHeader prints the nccl-tests-style header of one collective's
// table: the sweep's options, then one line per device of this process.
func WriteTableHeader(w io.Writer, t results.NCCLTable, o CollectiveOptions) {
	fmt.Fprintf(w, "# sparkrig %s bench gpu collective nccl-library=%s\n", t.ToolVersion, t.NCCLVersion)
	fmt.Fprintf(w, "# Collective test starting: %s\n", t.Collective)
	fmt.Fprintf(w, "# nRanks %d minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d validation: <=%d bytes\n",
		t.Ranks, o.MinBytes, o.MaxBytes, o.Factor, o.Warmup, o.Iters, o.CheckBytes)
	fmt.Fprintf(w, "#\n# Using devices\n")
	for _, d := range t.Devices {
		fmt.Fprintf(w, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", d.Rank, d.PID, d.Host, d.Device, d.PCIBus, d.Name)
	}
	fmt.Fprintf(w, "#\n")
	fmt.Fprintf(w, "#%73s%31s\n", "out-of-place", "in-place")
	fmt.Fprintf(w, "#%11s %13s %9s %7s %7s %8s %7s %7s %7s %8s %7s %7s %7s\n",
		"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong")
	fmt.Fprintf(w, "#%11s %13s %9s %7s %7s %8s %7s %7s %7s %8s %7s %7s\n",
		"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)")
}

// WriteRow prints one size.
func WriteRow(w io.Writer, r results.NCCLRow) {
	fmt.Fprintf(w, "%12d %13d %9s %7s %7d %s %s\n", r.SizeBytes, r.Count, r.Type, r.RedOp, r.Root, timing(r.OOP), timing(r.IP))
}

func timing(t results.Timing) string {
	if t.TimeUS == nil {
		return fmt.Sprintf("%8s %7s %7s %7s", "N/A", "N/A", "N/A", "N/A")
	}
	wrong := "N/A"
	if t.WrongErrs != nil {
		wrong = fmt.Sprint(*t.WrongErrs)
	}
	return fmt.Sprintf("%8s %7.2f %7.2f %7s", fmtTime(*t.TimeUS), *t.AlgBWGBs, *t.BusBWGBs, wrong)
}

// fmtTime follows nccl-tests: two decimals below 10 ms, fewer above.
func fmtTime(us float64) string {
	switch {
	case us >= 1e4:
		return fmt.Sprintf("%.0f", us)
	case us >= 1e3:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.2f", us)
}

// WriteTableFooter prints the out-of-bounds and average lines.
func WriteTableFooter(w io.Writer, t results.NCCLTable) {
	status := "OK"
	if t.WrongResults > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "# Out of bounds values : %d %s\n", t.WrongResults, status)
	if t.AvgBusBWGBs != nil {
		fmt.Fprintf(w, "# Avg bus bandwidth    : %g \n", round3(*t.AvgBusBWGBs))
	}
	fmt.Fprintf(w, "#\n")
}

func round3(v float64) float64 {
	var r float64
	fmt.Sscanf(fmt.Sprintf("%.3f", v), "%g", &r)
	return r
}

// WriteTable prints a whole table.
func WriteTable(w io.Writer, t results.NCCLTable, o CollectiveOptions) {
	WriteTableHeader(w, t, o)
	for _, r := range t.Rows {
		WriteRow(w, r)
	}
	WriteTableFooter(w, t)
}
