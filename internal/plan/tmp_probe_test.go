package plan

import (
	"fmt"
	"testing"
)

func TestTmpProbe(t *testing.T) {
	a, _ := DefaultAssumptions()
	for _, r := range fieldRows(t) {
		if r.ID != "kubis-nemotron3super-tp1-c1" {
			continue
		}
		e, _, err := rowEstimator(r, a)
		if err != nil {
			t.Fatal(err)
		}
		s := e.stored()
		fmt.Printf("stored %+v\n", *s)
		fmt.Printf("mixer %.3g B ffn %.3g B head %.3g expert %.3g x %d x %d, perTok experts %.3g\n", e.p.Mixer, e.p.FFN, e.p.head(), e.p.Expert, e.m.Experts, e.m.MoELayers, e.expertsPerNode(1, 1))
		fmt.Printf("dense bytes %.3g GB, mixerB %.3f ffnB %.3f headB %.3f expertB %.3f\n", e.denseBytes()/1e9, e.mixerBytes(), e.ffnBytes(), e.headBytes(), e.expertBytes())
		fmt.Printf("expert bytes/token %.3g GB\n", e.expertsPerNode(1, 1)*e.p.Expert*float64(e.m.MoELayers)*e.expertBytes()/1e9)
	}
}
