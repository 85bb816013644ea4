package analyze

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/fixture"
)

// addPastedSeeds adds each pasted sample as a seed, through each cut given.
func addPastedSeeds(f *testing.F, cut ...func([]byte) []byte) {
	files, err := filepath.Glob("testdata/pasted/*.txt")
	if err != nil || len(files) == 0 {
		f.Fatalf("no corpus: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		v := fixture.Verbatim(b)
		for _, c := range cut {
			v = c(v)
		}
		f.Add(v)
	}
}

// FuzzDetect: detection of any text names a format with evidence or
// refuses it with one of its errors, never panics, and the lines it
// normalises grow by at most the "NCCL " tag a cut line is given back.
func FuzzDetect(f *testing.F) {
	addPastedSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := DetectEvidence(in)
		if err == nil && (d.Format == "" || d.Sure == "") {
			t.Fatalf("format %q sure %q without an error", d.Format, d.Sure)
		}
		if err != nil && d.Format != "" {
			t.Fatalf("format %q with error %v", d.Format, err)
		}
		var st pasteStats
		for _, line := range bytes.Split(in, []byte("\n")) {
			if n := normaliseLine(line, &st); len(n) > len(line)+len("NCCL ") {
				t.Fatalf("%q normalised to the longer %q", line, n)
			}
		}
	})
}

// FuzzErrorMatcher: any line gives hits whose evidence is one bounded,
// valid line, ranked by score.
func FuzzErrorMatcher(f *testing.F) {
	addPastedSeeds(f)
	sigs, err := expect.Signatures()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m := diagnose.NewErrorMatcher(sigs)
		for _, line := range bytes.Split(in, []byte("\n")) {
			m.Observe(line)
		}
		hits := m.Hits()
		for i, h := range hits {
			if h.Count < 1 || len(h.First) > 400*3 || bytes.ContainsAny([]byte(h.First), "\n") {
				t.Fatalf("hit %+v", h)
			}
			if i > 0 && hits[i-1].Score < h.Score {
				t.Fatalf("not ranked: %v before %v", hits[i-1].Score, h.Score)
			}
		}
	})
}
