package analyze

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// seedBytes bounds each FuzzReader seed. An execution costs about a
// millisecond per KB, and go minimises every input that finds new coverage
// with tries that grow with the square of its size: with whole samples of
// up to 14 KB the workers spent a 10 s run minimising (93 executions). The
// whole samples are the unit tests' inputs.
const seedBytes = 1024

// excerpt keeps the whole lines of b that fit in its first and last
// seedBytes/2 bytes: a sample's header and its last rows or lines.
func excerpt(b []byte) []byte {
	if len(b) <= seedBytes {
		return b
	}
	head := b[:seedBytes/2]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	tail := b[len(b)-seedBytes/2:]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return append(append([]byte{}, head...), tail...)
}

// FuzzReader runs the whole analysis (detect, parse, judge, diagnose) on
// mutated real samples, excerpts of at most seedBytes: any input gives a
// verdict or one error line, never a panic.
func FuzzReader(f *testing.F) {
	for _, name := range []string{
		"nccl-tests/01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt",
		"nccl-tests/03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt",
		"nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt",
		"nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt",
		"nccl-logs/03_net-socket_fallback_hpcx-ibext_p2p-ipc-read.txt",
		"perftest/01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt",
		"perftest/03_ib_write_lat_dgx-spark_rdma_cm.txt",
		"nvbandwidth/02_h2d_memcpy_sm_a100_full-run.txt",
		"iperf3/01_iperf3-3.9_tcp_client_omit3.json",
		"nccl-tests-json/01_all_gather_2.17.6-keys_spark-values.json",
		"all_reduce_bench/01_all_reduce_bench_README_table.txt",
	} {
		f.Add(excerpt(verbatim(f, name)))
	}
	// sparkrig's own collective output, bare and as its report document
	raw, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.h200x2.json")
	if err != nil {
		f.Fatal(err)
	}
	var tables []results.NCCLTable
	if err := json.Unmarshal(raw, &tables); err != nil {
		f.Fatal(err)
	}
	// the first table's first two rows, bare and as a report document
	tables = tables[:1]
	tables[0].Rows = tables[0].Rows[:2]
	if raw, err = json.Marshal(tables); err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	doc, err := json.Marshal(report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "bench gpu collective",
		Status: report.VerdictOK, GPU: &report.GPU{Collectives: tables}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	addPastedSeeds(f, excerpt)
	f.Fuzz(func(t *testing.T, in []byte) {
		a := Reader("fuzz", bytes.NewReader(in), Options{})
		if a.Status == "" || strings.Contains(a.Error, "\n") {
			t.Fatalf("status %q error %q", a.Status, a.Error)
		}
		if a.Error != "" && a.Status != report.VerdictUnknown {
			t.Fatalf("error %q with status %s", a.Error, a.Status)
		}
	})
}
