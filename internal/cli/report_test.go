package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/triage"
)

// TestReportScripts runs the report scripts (testdata/report). $NODES is the
// repository's testdata/nodes (snapshot trees), $BENCH testdata/bench
// (recorded bench runs), $RENDER internal/render/testdata (recorded doctor,
// qualify and triage documents, each with its SOURCE).
func TestReportScripts(t *testing.T) {
	nodes, err := filepath.Abs("../../testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	bench, err := filepath.Abs("testdata/bench")
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := filepath.Abs("../render/testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/report",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"status": cmdStatus},
		Setup: func(e *testscript.Env) error {
			e.Setenv("NODES", nodes)
			e.Setenv("BENCH", bench)
			e.Setenv("RENDER", rendered)
			return nil
		},
	})
}

// A missing input is a mistake on the command line: one line, exit 3, and
// no report written that silently lacks it.
func TestReportMissingInputWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut := runMain(t, "report", filepath.Join(t.TempDir(), "nonexistent.json"), nodeSnapshot("spark-healthy"), "-o", out)
	if code != ExitUnknown || !strings.Contains(errOut, "nonexistent.json: no such file or directory (no report written)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the report was written without its missing input")
	}
}

// The report's verdict and exit status are those of its documents'
// commands: the document's own over one document, the worst over several.
// The qualify, triage and doctor documents are recorded
// (../render/testdata, each with its SOURCE); the healthy doctor's and the
// fix plan's are made here from snapshot fixtures.
func TestReportVerdictIsTheDocuments(t *testing.T) {
	dir := t.TempDir()
	record := func(name string, args ...string) string {
		code, out, errOut := runMain(t, args...)
		var doc report.Report
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v (exit %d, %s)", name, err, code, errOut)
		}
		if code != exitFor(doc.Status) {
			t.Fatalf("%s: exit %d, status %s", name, code, doc.Status)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	healthy := record("healthy.json", "doctor", "--format", "json", "--snapshot", nodeSnapshot("spark-healthy"), "--snapshot", nodeSnapshot("spark-healthy-peer"))
	mtu := record("mtu.json", "doctor", "--format", "json", "--snapshot", nodeSnapshot("spark-mtu-1500"))
	fix := record("fix.json", "fix", "--plan", "--format", "json", "--snapshot", nodeSnapshot("spark-twin-unaddressed"), "--snapshot", nodeSnapshot("spark-healthy-peer"))
	qualify, triaged, rig := "../render/testdata/allpairs-rig.json", "../render/testdata/triage-rig.json", "../render/testdata/doctor_rig_spark-pair_mtu-mismatch.json"
	status := func(path string) report.Verdict {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc report.Report
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Status
	}
	for _, inputs := range [][]string{
		{qualify}, {triaged}, {fix}, {healthy}, {mtu}, {rig},
		{healthy, mtu},
		{healthy, qualify},
		{mtu, qualify, triaged},
		{rig, qualify, triaged},
		{healthy, fix},
	} {
		want := report.VerdictNone
		for _, in := range inputs {
			want = report.Worse(want, status(in))
		}
		code, out, errOut := runMain(t, append([]string{"report", "--format", "json"}, inputs...)...)
		var got report.Report
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v (%s)", inputs, err, errOut)
		}
		if got.Status != want || code != exitFor(want) {
			t.Errorf("%v: status %s, exit %d; the documents' worst is %s (exit %d)", inputs, got.Status, code, want, exitFor(want))
		}
	}
}

// The triage verdicts the report reads as unknown are triage's own.
func TestTriageVerdictNames(t *testing.T) {
	if report.TriageNoJob != triage.VerdictNoJob || report.TriageUnknown != triage.VerdictUnknown {
		t.Errorf("report reads %q and %q as unknown, triage says %q and %q", report.TriageNoJob, report.TriageUnknown, triage.VerdictNoJob, triage.VerdictUnknown)
	}
}

// An all-pairs document whose matrix does not match its nodes is named as
// a bad input; the other inputs are still rendered.
func TestReportRejectsAMalformedMatrix(t *testing.T) {
	b, err := os.ReadFile("../render/testdata/allpairs-rig.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ap := doc["all_pairs"].(map[string]any)
	ap["nodes"] = ap["nodes"].([]any)[1:]
	bad := filepath.Join(t.TempDir(), "bad.json")
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut := runMain(t, "report", bad, "../render/testdata/triage-rig.json", "-o", out)
	if code != ExitCritical || !strings.Contains(errOut, "bad.json: all_pairs: the matrix is not one row and one column per node (7 nodes)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), `<h2 id="triage">Triage</h2>`) || strings.Contains(string(page), `id="all-pairs"`) {
		t.Errorf("the page lost the triage or kept the bad run (%v)", err)
	}
}
