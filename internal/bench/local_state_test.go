package bench

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// On a machine without nvidia-smi and ibv_devinfo the sampler reads
// nothing and says so: unsampled, never an invalid verdict by default.
func TestSampleLocal(t *testing.T) {
	s := SampleLocal(context.Background(), "here", 50*time.Millisecond)
	time.Sleep(120 * time.Millisecond)
	v := s.Stop()
	_, smi := exec.LookPath("nvidia-smi")
	_, ibv := exec.LookPath("ibv_devinfo")
	if smi == nil || ibv == nil {
		t.Skipf("nvidia-smi or ibv_devinfo installed (sampled %v, valid %v): bench gpu on a GPU machine exercises it", v.Sampled, v.Valid)
	}
	if v.Sampled || !v.Valid {
		t.Errorf("no tools: %+v", v)
	}
}
