package remote

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultParallel is how many hosts are worked on at once.
const DefaultParallel = 32

// FanOut says how to work on many hosts.
type FanOut struct {
	// Parallel bounds concurrent hosts (DefaultParallel when 0).
	Parallel int
	// PerHost bounds each host's work (none when 0); the caller's context
	// bounds the whole run.
	PerHost time.Duration
	// Progress, when set, is called after every change with the counts.
	Progress func(done, failed, pending int)
}

// HostResult is one host's outcome.
type HostResult struct {
	Host    string
	Err     error
	Elapsed time.Duration
}

// graceAfterDeadline is how long Each waits for a host's work to notice its
// deadline before reporting it as timed out anyway.
const graceAfterDeadline = 500 * time.Millisecond

// Each runs fn for every host with bounded concurrency and returns the
// results in input order. A host's work gets a context that ends at its
// deadline; if fn ignores it, the host is reported as timed out shortly
// after and Each moves on, so no host holds the others past the deadline.
func (f FanOut) Each(ctx context.Context, hosts []string, fn func(ctx context.Context, i int, host string) error) []HostResult {
	par := f.Parallel
	if par <= 0 {
		par = DefaultParallel
	}
	res := make([]HostResult, len(hosts))
	var mu sync.Mutex
	done, failed := 0, 0
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed++
		} else {
			done++
		}
		if f.Progress != nil {
			f.Progress(done, failed, len(hosts)-done-failed)
		}
	}
	// par workers take the hosts in order: the goroutines and buffers of a
	// fan-out are bounded by its concurrency, not by the number of hosts.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(par, len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(hosts) {
					return
				}
				h := hosts[i]
				if ctx.Err() != nil {
					res[i] = HostResult{Host: h, Err: fmt.Errorf("%w: not started before the overall deadline", ErrTimeout)}
					if interrupted(ctx) {
						res[i].Err = fmt.Errorf("%w: not started", ErrInterrupted)
					}
				} else {
					res[i] = f.one(ctx, i, h, fn)
				}
				report(res[i].Err)
			}
		}()
	}
	wg.Wait()
	return res
}

func (f FanOut) one(ctx context.Context, i int, host string, fn func(context.Context, int, string) error) HostResult {
	start := time.Now()
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if f.PerHost > 0 {
		hctx, cancel = context.WithTimeoutCause(ctx, f.PerHost, fmt.Errorf("the per-host deadline (--host-timeout %s) passed", f.PerHost))
	}
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- fn(hctx, i, host) }()
	var err error
	select {
	case err = <-errc:
	case <-hctx.Done():
		select {
		case err = <-errc:
		case <-time.After(graceAfterDeadline):
			err = fmt.Errorf("%w: no answer: %v", ErrTimeout, deadlineWhy(hctx))
			if interrupted(hctx) {
				err = fmt.Errorf("%w: no answer yet", ErrInterrupted)
			}
		}
	}
	return HostResult{Host: host, Err: err, Elapsed: time.Since(start)}
}
