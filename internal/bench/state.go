package bench

import (
	"context"
	"sync"
	"time"
)

// stateInterval is how often the nodes' GPU and RoCE state is read while a
// step runs; maxStateReads bounds the readings a long step keeps per host.
const (
	stateInterval = 2 * time.Second
	maxStateReads = 300
)

// gated reports whether a step's result depends on the GPU and RoCE state
// the gate reads (NCCL and RDMA steps; a TCP test uses neither).
func gated(st Step) bool { return st.Kind == KindNCCL || st.Kind == KindRDMA }

// withState reads the state of the step's hosts when it starts and every
// stateInterval until it ends, and records the readings on the result.
func (s *Session) withState(ctx context.Context, st Step, runStep func() StepResult) StepResult {
	if !gated(st) {
		return runStep()
	}
	hosts := map[string]bool{}
	for _, c := range st.Commands() {
		hosts[c.Host] = true
	}
	var mu sync.Mutex
	var samples []StateSample
	reads := map[string]int{}
	read := func(ctx context.Context) {
		for h := range hosts {
			if reads[h] >= maxStateReads {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			out, err := run(cctx, s.Exec.T, h, stateScript)
			cancel()
			if err != nil && out == "" {
				continue
			}
			mu.Lock()
			samples = append(samples, ParseState(h, out)...)
			reads[h]++
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(stateInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				read(ctx)
			}
		}
	}()
	res := runStep()
	close(done)
	wg.Wait()
	if len(samples) == 0 {
		// A step shorter than one interval: read once at its end, which
		// still shows a stuck clock, a cap or a small active MTU.
		read(ctx)
	}
	res.State = samples
	return res
}
