package render

import "testing"

func TestHTMLDoctorInChromium(t *testing.T) {
	f, png := loadInChromium(t, twoSparks(), false)
	if f.Findings != 7 || f.VisibleFindings != 6 || f.AfterFilter != 4 {
		t.Errorf("findings %d, visible %d (ok hidden), after unticking fail %d; want 7, 6, 4", f.Findings, f.VisibleFindings, f.AfterFilter)
	}
	if f.Nodes != 2 || f.Links != 2 || f.BadLinks != 1 || f.Status != "critical" {
		t.Errorf("topology %d nodes %d links %d bad, status %q", f.Nodes, f.Links, f.BadLinks, f.Status)
	}
	saveShot(t, "doctor.png", png)
}

// TestHTMLSamplesInChromium renders real outputs only: the doctor's JSON
// from the test rig (a Spark pair with an MTU mismatch on one link) and
// benchmark outputs run through the analyze stage. It checks the page in the
// browser: every finding row, the filter, the topology, one plot per
// collective with one point per message size and run, and the rails.
func TestHTMLSamplesInChromium(t *testing.T) {
	r := rigDoctor(t)
	r.Analyses = analysedSamples(t)
	f, png := loadInChromium(t, r, false)
	// 10 host findings (8 warn, 2 info), 26 cluster findings (2 fail,
	// 1 warn, 1 info, 22 ok) and the perftest sample's two info notes of
	// its 1024 B path MTU; ok rows start hidden.
	if f.Findings != 38 || f.VisibleFindings != 16 || f.AfterFilter != 14 {
		t.Errorf("findings %d, visible %d, after unticking fail %d; want 38, 16, 14", f.Findings, f.VisibleFindings, f.AfterFilter)
	}
	if f.Nodes != 2 || f.Links != 2 || f.BadLinks != 1 || f.Status != "critical" {
		t.Errorf("topology %d nodes %d links %d bad, status %q; want 2, 2, 1, critical", f.Nodes, f.Links, f.BadLinks, f.Status)
	}
	// nccl-tests/01 has 31 rows, two of them 0 bytes (no place on a log axis);
	// nccl-tests/03 has five tables of four sizes.
	want := map[string]int{"all_gather": 1, "all_reduce": 29 + 5*4}
	if f.PlotCount != 2 || f.Plots["all_gather"] != want["all_gather"] || f.Plots["all_reduce"] != want["all_reduce"] {
		t.Errorf("plots %d %v, want 2 %v", f.PlotCount, f.Plots, want)
	}
	// The DGX Spark all_gather is judged: expected 21.97 GB/s, and one
	// QSFP port (25 GB/s) is the wire limit.
	if f.Expected != "21.97" || f.Wire != "25" {
		t.Errorf("all_gather reference lines: expected %q, wire %q; want 21.97, 25", f.Expected, f.Wire)
	}
	if f.Rails != 2 || f.CompareRows != 7 || f.CompareColls != 2 {
		t.Errorf("rails %d, comparison runs %d collectives %d; want 2, 7, 2", f.Rails, f.CompareRows, f.CompareColls)
	}
	// one judged item per NCCL table (1 + 1 + 5), per ib_write_bw run (2)
	// and their sum (1)
	if f.Results != 10 {
		t.Errorf("%d judged results, want 10", f.Results)
	}
	saveShot(t, "report.png", png)
	_, dark := loadInChromium(t, r, true)
	saveShot(t, "report-dark.png", dark)
}

// A report over the doctor's, qualify's and triage's documents: the
// findings of all three among the page's, the 8×8 heatmap with its two
// confirmed suspects, the triage's three ranks.
func TestHTMLMergedInChromium(t *testing.T) {
	f, png := loadInChromium(t, merged(t), false)
	// the doctor's 36 findings (8 warn, 2 info of the hosts; 2 fail, 1 warn,
	// 1 info, 22 ok of the cluster), the run's 2 fail and the triage's 1
	if f.Findings != 39 || f.VisibleFindings != 17 || f.AfterFilter != 12 {
		t.Errorf("findings %d, visible %d, after unticking fail %d; want 39, 17, 12", f.Findings, f.VisibleFindings, f.AfterFilter)
	}
	if f.HeatCells != 64 || f.Suspects != 2 || f.TriageRanks != 3 || f.Status != "critical" {
		t.Errorf("heatmap %d cells, %d suspects, %d triage ranks, status %q; want 64, 2, 3, critical", f.HeatCells, f.Suspects, f.TriageRanks, f.Status)
	}
	saveShot(t, "merged.png", png)
}
