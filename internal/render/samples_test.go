package render

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/report"
)

// verbatim returns the program output of a fixture: the text between its
// "=== BEGIN VERBATIM ===" and "=== END VERBATIM ===" lines (all blocks).
func verbatim(t testing.TB, name string) []byte {
	return fixture.Verbatim(fixture.Read(t, filepath.Join("testdata", name)))
}

// analysedSamples runs the real outputs through the analyze stage, as
// `sparkrig report` does with raw files.
func analysedSamples(t testing.TB) []report.AnalysisResult {
	t.Helper()
	var out []report.AnalysisResult
	for _, name := range []string{
		"04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt",
		"01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt",
		"03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt",
		"01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt",
	} {
		a := analyze.Reader(name, bytes.NewReader(verbatim(t, name)), analyze.Options{})
		if a.Error != "" {
			t.Fatalf("%s: %s", name, a.Error)
		}
		out = append(out, a)
	}
	return out
}

// rigDoctor is the doctor's JSON document from the test rig (see its SOURCE).
func rigDoctor(t testing.TB) *report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "doctor_rig_spark-pair_mtu-mismatch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}
