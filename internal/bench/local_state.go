package bench

import (
	"context"
	"os/exec"
	"sync"
	"time"
)

// LocalSampler reads this machine's GPU and RoCE state (stateScript, run
// by sh) every interval while a local benchmark runs (`bench gpu`).
type LocalSampler struct {
	host    string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []StateSample
}

// SampleLocal starts reading at once and then every interval.
func SampleLocal(ctx context.Context, host string, interval time.Duration) *LocalSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &LocalSampler{host: host, cancel: cancel}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 0; n < maxStateReads; n++ {
			s.read(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *LocalSampler) read(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, "sh", "-c", stateScript).Output()
	if err != nil && len(out) == 0 {
		return
	}
	got := ParseState(s.host, string(out))
	s.mu.Lock()
	s.samples = append(s.samples, got...)
	s.mu.Unlock()
}

// Stop ends the sampling, reads once more (a run shorter than one
// interval still shows a stuck clock) and gates the readings.
func (s *LocalSampler) Stop() Validity {
	s.cancel()
	s.wg.Wait()
	s.read(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	return Gate(s.samples)
}
