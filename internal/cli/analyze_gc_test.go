package cli

import (
	"runtime/debug"
	"testing"
)

func TestLessFrequentGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	t.Setenv("GOGC", "")
	restore := lessFrequentGC()
	if got := debug.SetGCPercent(analyzeGCPercent); got != analyzeGCPercent {
		t.Errorf("GOGC unset: GC percent %d while analyze reads, want %d", got, analyzeGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after restore, want 100", got)
	}

	t.Setenv("GOGC", "50")
	restore = lessFrequentGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent changed to %d, want it left at 100", got)
	}
	restore()
}
