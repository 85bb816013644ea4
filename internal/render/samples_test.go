package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/results"
)

// verbatim returns the program output of a fixture: the text between its
// "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===" lines (all blocks).
func verbatim(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		switch strings.TrimRight(line, "\n") {
		case "=== BEGIN VERBATIM ===":
			in = true
		case "=== END VERBATIM ===":
			in = false
		default:
			if in {
				out.WriteString(line)
			}
		}
	}
	return out.Bytes()
}

func ncclTables(t testing.TB, name string) []results.NCCLTable {
	t.Helper()
	out, err := results.ParseNCCLTests(bytes.NewReader(verbatim(t, name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.Tables
}

// DGX Spark expectations (docs: platform facts). all_gather busbw at 16 GiB:
// ~22 GB/s (seed 001; NVIDIA's setup script passes at ≥ 21.875 GB/s); one QSFP
// port carries 200 Gb/s = 25 GB/s; ib_write_bw ~96 Gb/s per twin (seed 001).
const (
	sparkAllGatherGBs = 21.875
	sparkPortGBs      = 25.0
	sparkTwinGbps     = 96.0
)

// sampleBench is the benchmark part of a report made from real outputs: the
// DGX Spark all_gather at 16 GiB with MTU 1500 (nccl-tests/04), a 2-node
// all_reduce sweep from 1 B to 1 GiB (nccl-tests/01), five all_reduce runs
// of one article as a run-to-run comparison (nccl-tests/03), and the two
// twins of a Spark port under ib_write_bw (perftest/01).
func sampleBench(t testing.TB) ([]ncclRun, []railResult) {
	t.Helper()
	var runs []ncclRun
	for _, tb := range ncclTables(t, "04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt") {
		tb := tb
		runs = append(runs, ncclRun{Run: "spark mtu1500", Table: &tb, ExpectedGBs: sparkAllGatherGBs, WireGBs: sparkPortGBs,
			Verdicts: []string{"out-of-place 18.94 GB/s at 16G is below the 21.875 GB/s DGX Spark pass mark: set MTU 9000 on both ends"}})
	}
	for _, tb := range ncclTables(t, "01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt") {
		tb := tb
		runs = append(runs, ncclRun{Run: "efa 2×T4", Table: &tb})
	}
	labels := []string{"NVLink pair", "P2P off, SYS", "P2P off, NODE", "NVSwitch ×4", "NVSwitch ×4, P2P off"}
	for i, tb := range ncclTables(t, "03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt") {
		tb := tb
		runs = append(runs, ncclRun{Run: labels[i], Table: &tb})
	}
	out, err := results.ParsePerftest(bytes.NewReader(verbatim(t, "01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt")))
	if err != nil {
		t.Fatal(err)
	}
	var rails []railResult
	for _, r := range out {
		g, _ := r.BestAvgGbps()
		rails = append(rails, railResult{Run: "spark-bd26", Rail: r.Device, Gbps: g, ExpectedGbps: sparkTwinGbps})
	}
	return runs, rails
}
