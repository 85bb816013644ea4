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
// benchmark outputs and checks the plots in the browser: one per
// collective, one point per message size and run.
func TestHTMLSamplesInChromium(t *testing.T) {
	runs, rails := sampleBench(t)
	f, png := loadPageInChromium(t, newPage(twoSparks(), HTMLOptions{Inputs: sampleInputs}, runs, rails, nil), false)
	// nccl-tests/01 has 31 rows, two of them 0 bytes (no place on a log axis);
	// nccl-tests/03 has five tables of four sizes.
	want := map[string]int{"all_gather": 1, "all_reduce": 29 + 5*4}
	if f.PlotCount != 2 || f.Plots["all_gather"] != want["all_gather"] || f.Plots["all_reduce"] != want["all_reduce"] {
		t.Errorf("plots %d %v, want 2 %v", f.PlotCount, f.Plots, want)
	}
	if f.Rails != 2 || f.CompareRows != 2 {
		t.Errorf("rails %d, comparison rows %d; want 2, 2", f.Rails, f.CompareRows)
	}
	if f.Findings != 7 {
		t.Errorf("findings %d, want 7", f.Findings)
	}
	saveShot(t, "report.png", png)
	_, dark := loadPageInChromium(t, newPage(twoSparks(), HTMLOptions{Inputs: sampleInputs}, runs, rails, nil), true)
	saveShot(t, "report-dark.png", dark)
}

var sampleInputs = []string{"doctor.json", "04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt",
	"01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt", "03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt",
	"01_ib_write_bw_dgx-spark_run_infinitely_2rails.txt"}
