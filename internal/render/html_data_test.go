package render

import "testing"

// A bench step names its rails before each subject; the rail bars still
// find their expectation.
func TestPerftestRailsExpectation(t *testing.T) {
	a := analysedSamples(t)[3]
	for _, prefix := range []string{"", "rocep1s0f0+roceP2p1s0f0: "} {
		for i := range a.Items {
			a.Items[i].Subject = prefix + a.Items[i].Subject
		}
		rails := perftestRails(&a, "run")
		if len(rails) != 2 || rails[0].Rail != "rocep1s0f0" || rails[0].ExpectedGbps != 96 || rails[1].ExpectedGbps != 96 {
			t.Errorf("prefix %q: %+v", prefix, rails)
		}
	}
}
