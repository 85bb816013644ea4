package analyze

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// avgFooter is nccl-tests' average line (src/util.cu writeResultFooter,
// v2.19.6: "# %-20s : %g %s").
var avgFooter = regexp.MustCompile(`(?m)^(# Avg bus bandwidth +: [0-9.e+-]+)$`)

// withMinBW gives the run's footers the word nccl-tests adds when
// NCCL_TESTS_MIN_BW is set: FAILED on the footers picked, OK on the rest.
func withMinBW(text string, failed func(i int) bool) string {
	i := 0
	return avgFooter.ReplaceAllStringFunc(text, func(l string) string {
		defer func() { i++ }()
		if failed(i) {
			return l + " FAILED"
		}
		return l + " OK"
	})
}

// Any table of a run whose footer says FAILED, behind any prefix, raises
// the check's warning once; OK footers and footers without the check raise
// nothing new, and the analysis is otherwise the same.
func TestMinBWFailedAnyTableAnyPrefix(t *testing.T) {
	base := string(verbatim(t, "nccl-tests/03_all_reduce_intranode_nvlink_vs_p2p-disabled.txt"))
	n := len(avgFooter.FindAllString(base, -1))
	if n != 5 {
		t.Fatalf("%d footers in the fixture", n)
	}
	r := rand.New(rand.NewSource(8801))
	for _, pre := range causePrefixes(r) {
		plain := analyseText(prefixed(pre, strings.Split(strings.TrimSuffix(base, "\n"), "\n")))
		if hasFlag(plain, "nccl-tests.min-bw-failed") {
			t.Fatalf("behind %q: raised without the check", pre)
		}
		ok := analyseText(prefixed(pre, strings.Split(strings.TrimSuffix(withMinBW(base, func(int) bool { return false }), "\n"), "\n")))
		if hasFlag(ok, "nccl-tests.min-bw-failed") || ok.Status != plain.Status {
			t.Errorf("behind %q: OK footers changed the analysis (%s, %s)", pre, flagIDs(ok), ok.Status)
		}
		bad := r.Intn(n)
		failed := analyseText(prefixed(pre, strings.Split(strings.TrimSuffix(withMinBW(base, func(i int) bool { return i == bad }), "\n"), "\n")))
		count := 0
		for _, f := range failed.Flags {
			if f.ID == "nccl-tests.min-bw-failed" {
				count++
				if f.Severity != report.Warn || !strings.Contains(f.Evidence, "FAILED") {
					t.Errorf("behind %q: %+v", pre, f)
				}
			}
		}
		if count != 1 {
			t.Errorf("behind %q, table %d failing: %d warnings (%s)", pre, bad, count, flagIDs(failed))
		}
	}
}

// The words alone, outside a footer, are not the check.
func TestMinBWFailedOnlyInTheFooter(t *testing.T) {
	for _, text := range []string{
		"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5\n# note: NCCL_TESTS_MIN_BW FAILED to parse\n",
		"Avg bus bandwidth FAILED\n",
	} {
		if a := analyseText(text); hasFlag(a, "nccl-tests.min-bw-failed") {
			t.Errorf("%q: raised", text)
		}
	}
}
