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
