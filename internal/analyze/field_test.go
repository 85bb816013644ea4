package analyze

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestBenchDocumentKeepsFieldCauses: a bench run's document keeps the
// evidence about its links; analyze of that document names the same
// look-alike causes bench named, in the same order, for each slow result.
// The result is the real two-Spark all_gather of the pasted corpus (below
// its expectation); the evidence is a translated IOMMU with both rails near
// the 12.7 Gb/s cap and NCCL moving more than they carry.
func TestBenchDocumentKeepsFieldCauses(t *testing.T) {
	a := analyseFixture(t, "pasted/23_spark_all_gather_no_footer.txt", Options{})
	if a.Status != report.VerdictWarning {
		t.Fatalf("fixture status %s", a.Status)
	}
	ev := report.LinkEvidence{LinkGbps: 200, PCIeFull: true, IOMMU: "translated",
		RawGbps: map[string]float64{"enp1s0f1np1": 12.6, "enP2p1s0f1np1": 12.9}, NCCLBusGBps: 15.2, NCCLExpectGBps: 21.99}
	want := diagnose.FieldCauses(ev)
	if len(want) == 0 {
		t.Fatal("the evidence names no cause")
	}
	doc := report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "bench", Analyses: []report.AnalysisResult{a}, LinkEvidence: &ev}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := ReaderAll("run.json", bytes.NewReader(data), Options{})
	if len(got) != 1 || len(got[0].Items) == 0 {
		t.Fatalf("%+v", got)
	}
	for _, it := range got[0].Items {
		if it.Verdict != report.VerdictWarning && it.Verdict != report.VerdictCritical {
			continue
		}
		tail := it.Causes[len(it.Causes)-len(want):]
		if d := cmp.Diff(want, tail); d != "" {
			t.Errorf("%s: analyze's field causes differ from bench's (-bench +analyze):\n%s", it.Subject, d)
		}
	}
	// Without the evidence (a plain paste) no field cause is invented.
	doc.LinkEvidence = nil
	data, _ = json.Marshal(doc)
	for _, it := range ReaderAll("run.json", bytes.NewReader(data), Options{})[0].Items {
		for _, c := range it.Causes {
			for _, w := range want {
				if c.ID == w.ID {
					t.Errorf("cause %s named without the run's evidence", c.ID)
				}
			}
		}
	}
}
