package analyze

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"
)

// topCause is the cause an analysis ranks first: its first fail flag, else
// the first likely cause of an item judged critical or warning, else its
// first warn flag; "" when it raises nothing.
func topCause(a report.AnalysisResult) string {
	for _, f := range a.Flags {
		if f.Severity == report.Fail {
			return f.ID
		}
	}
	for _, it := range a.Items {
		if it.Verdict != report.VerdictCritical && it.Verdict != report.VerdictWarning {
			continue
		}
		for _, c := range it.Causes {
			if c.Likelihood == "likely" {
				return c.ID
			}
		}
	}
	for _, f := range a.Flags {
		if f.Severity == report.Warn {
			return f.ID
		}
	}
	return ""
}

// alarm: the analysis raised a warn or fail (a flag, or an item below its
// expectation).
func alarm(a report.AnalysisResult) bool {
	return a.Status == report.VerdictWarning || a.Status == report.VerdictCritical
}

// truthIDs reads truth-ids.tsv: slug → the ids that name it.
func truthIDs(t testing.TB) map[string][]string {
	data, err := os.ReadFile("truth-ids.tsv")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		slug, ids, _ := strings.Cut(line, "\t")
		m[slug] = nil
		for _, id := range strings.Split(ids, ",") {
			if id = strings.TrimSpace(id); id != "" {
				m[slug] = append(m[slug], id)
			}
		}
	}
	return m
}

// fieldCase is one paste of the field corpus and its thread's conclusion.
type fieldCase struct {
	name, truth string
	text        []byte
}

func readFieldCases(t testing.TB, dir string) []fieldCase {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fieldCase
	for _, f := range files {
		src, err := os.ReadFile(f + ".SOURCE")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		truth := ""
		for _, l := range strings.Split(string(src), "\n") {
			if v, ok := strings.CutPrefix(l, "TRUTH:"); ok {
				truth = strings.TrimSpace(v)
			}
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if v := fixture.Verbatim(text); v != nil {
			text = v
		}
		out = append(out, fieldCase{name: filepath.Base(f), truth: truth, text: text})
	}
	return out
}

// scoreCase: "right", "wrong" or "false-alarm", and the cause ranked first.
func scoreCase(ids map[string][]string, c fieldCase) (string, string) {
	a := Reader(c.name, bytes.NewReader(c.text), Options{})
	top := topCause(a)
	if c.truth == "healthy" {
		if alarm(a) {
			return "false-alarm", top
		}
		return "right", top
	}
	if top != "" && slices.Contains(ids[c.truth], top) {
		return "right", top
	}
	return "wrong", top
}

// TestScoreField scores analyze on a directory of field cases (NN_slug.txt
// and its .SOURCE with TRUTH:), given by SPARKRIG_SCORE_DIR; it is what
// scripts/score-field.sh runs. Right: the thread's cause ranked first, or
// for a healthy paste no warn or fail; a false alarm is a warn or fail on
// a healthy paste.
func TestScoreField(t *testing.T) {
	dir := os.Getenv("SPARKRIG_SCORE_DIR")
	if dir == "" {
		t.Skip("SPARKRIG_SCORE_DIR not set (scripts/score-field.sh DIR)")
	}
	ids := truthIDs(t)
	counts := map[string]int{}
	cases := readFieldCases(t, dir)
	for _, c := range cases {
		if _, ok := ids[c.truth]; !ok {
			t.Errorf("%s: TRUTH %q is not in truth-ids.tsv", c.name, c.truth)
		}
		v, top := scoreCase(ids, c)
		counts[v]++
		if top == "" {
			top = "-"
		}
		fmt.Printf("%-12s %-58s truth=%-30s first=%s\n", v, c.name, c.truth, top)
	}
	fmt.Printf("total %d: right %d (%.0f %%), wrong %d, false alarm %d\n", len(cases), counts["right"],
		100*float64(counts["right"])/float64(max(len(cases), 1)), counts["wrong"], counts["false-alarm"])
}

// Every slug of the table is written once, and the table parses.
func TestTruthIDs(t *testing.T) {
	ids := truthIDs(t)
	if _, ok := ids["healthy"]; !ok || len(ids) < 30 {
		t.Fatalf("%d slugs", len(ids))
	}
}

// The field cases kept in testdata (one or more real pastes per cause
// class analyze names from them) are read right: the thread's cause first,
// nothing raised on a healthy paste.
func TestFieldCases(t *testing.T) {
	ids := truthIDs(t)
	cases := readFieldCases(t, "testdata/field-cases")
	if len(cases) < 15 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if v, top := scoreCase(ids, c); v != "right" {
			t.Errorf("%s: %s (truth %s, first %q)", c.name, v, c.truth, top)
		}
	}
}
