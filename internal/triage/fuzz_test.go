package triage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/results"
)

// FuzzParse feeds the RAS parser, the nvidia-smi parsers, the sample
// parser and BuildID arbitrary bytes, seeded with every recording.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/ras/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
		for _, e := range recording(f, filepath.Base(p)) {
			f.Add(e.answer)
		}
	}
	gpu, _ := filepath.Glob("testdata/ras-gpu/*/*/s*.txt")
	for _, p := range gpu {
		b, _ := os.ReadFile(p)
		f.Add(b)
		if m := replyHeader.FindIndex(b); m != nil {
			f.Add(b[m[1]:])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		results.ParseRASAnswer(b)
		ParseGPUs(b)
		ParseApps(b)
		capture.BuildID(b)
		s := ParseSample("h", b)
		s.Status()
		Diagnose([]Sample{s}, []Sample{s}, 1)
	})
}
