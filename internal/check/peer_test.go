package check

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// TestHandFixSaysThePeerMoves: a hand fix that puts a twin on a subnet it
// is not on now breaks the link unless the peer's end moves too; the
// remedy says so for that twin only (the other keeps its address).
func TestHandFixSaysThePeerMoves(t *testing.T) {
	for _, tc := range []struct{ tree, id, want, not string }{
		{"spark-twins-same-subnet", "spark.twins-same-subnet",
			"# and PEER's twin cabled to enP2p1s0f1np1 into 192.168.101.0/24 too\n# (e.g. 192.168.101.12/24): a link's two ends share one subnet",
			"cabled to enp1s0f1np1"},
		{"spark-twin-unaddressed", "spark.twin-unaddressed", "# and PEER's twin cabled to enP2p1s0f1np1 into ", "cabled to enp1s0f1np1"},
	} {
		s, err := snapshot.Read(nodeTree(tc.tree))
		if err != nil {
			t.Fatal(err)
		}
		fs, _ := Run(facts.FromSnapshot(s), ProfileSpark)
		found := false
		for _, f := range fs {
			if f.ID != tc.id || f.Severity != report.Fail {
				continue
			}
			found = true
			if txt := f.Remedy.Steps[len(f.Remedy.Steps)-1].Text; !strings.Contains(txt, tc.want) || strings.Contains(txt, tc.not) {
				t.Errorf("%s: remedy\n%s\nwant it to hold %q and not %q", tc.tree, txt, tc.want, tc.not)
			}
		}
		if !found {
			t.Errorf("%s: no %s fail", tc.tree, tc.id)
		}
	}
}
