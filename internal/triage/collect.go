package triage

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"time"
)

// Transport runs a POSIX sh script on a host (SSH, or this machine); the
// same shape as bench's, so every transport doctor and bench use serves.
type Transport interface {
	Exec(ctx context.Context, host, script string, stdin io.Reader, stdout, stderr io.Writer) error
}

// MaxSampleBytes bounds what one node's sample may send back.
const MaxSampleBytes = 8 << 20

// Collect samples every host twice, interval apart (once when interval
// is 0), at most parallel hosts at a time, each sample within perHost.
// A host that fails keeps its place with Err set; the others go on.
func Collect(ctx context.Context, t Transport, hosts []string, o ScriptOptions, interval time.Duration, parallel int, perHost time.Duration) (first, second []Sample) {
	script := Script(o)
	once := func() []Sample {
		out := make([]Sample, len(hosts))
		sem := make(chan struct{}, max(parallel, 1))
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				start := time.Now()
				hctx, cancel := context.WithTimeout(ctx, perHost)
				defer cancel()
				var stdout capBuffer
				var stderr capBuffer
				stdout.max, stderr.max = MaxSampleBytes, 64<<10
				err := t.Exec(hctx, h, script, nil, &stdout, &stderr)
				s := ParseSample(h, stdout.b.Bytes())
				if err != nil && !strings.Contains(stdout.b.String(), marker+" end") {
					s.Err = err.Error()
					if e := strings.TrimSpace(stderr.b.String()); e != "" {
						s.Err += ": " + firstLine(e)
					}
				}
				if stdout.over {
					s.Err = "the node sent more than 8 MiB"
				}
				s.Elapsed = time.Since(start).Seconds()
				out[i] = s
			}()
		}
		wg.Wait()
		return out
	}
	first = once()
	if interval <= 0 || ctx.Err() != nil {
		return first, nil
	}
	select {
	case <-time.After(interval):
	case <-ctx.Done():
		return first, nil
	}
	return first, once()
}

type capBuffer struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.b.Write(p[:room])
		}
		return len(p), nil
	}
	return c.b.Write(p)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
