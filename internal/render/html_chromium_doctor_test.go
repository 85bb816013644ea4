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

// TestHTMLSamplesInChromium renders the doctor report together with real
// benchmark outputs run through the analyze stage, and checks the plots in
// the browser: one per collective, one point per message size and run.
func TestHTMLSamplesInChromium(t *testing.T) {
	r := twoSparks()
	r.Analyses = analysedSamples(t)
	f, png := loadInChromium(t, r, false)
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
	if f.Findings != 7 {
		t.Errorf("findings %d, want 7", f.Findings)
	}
	saveShot(t, "report.png", png)
	_, dark := loadInChromium(t, r, true)
	saveShot(t, "report-dark.png", dark)
}
