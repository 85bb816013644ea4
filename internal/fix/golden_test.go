package fix_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/render"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/plan-*.golden")

// TestPlanGolden renders every topology's plan as `sparkrig fix --plan`
// prints it and compares it with testdata/plan-<case>.golden.
func TestPlanGolden(t *testing.T) {
	for name, p := range fix.GoldenPlans(t) {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := render.FixPlan(&out, p.Report(nil), render.Options{}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "plan-"+name+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if d := cmp.Diff(string(want), out.String()); d != "" {
				t.Errorf("plan differs from %s (-want +got):\n%s", golden, d)
			}
		})
	}
}
