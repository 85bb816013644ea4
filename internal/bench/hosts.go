package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
)

// SSH runs scripts on hosts over SSH, one connection per host kept for the
// whole run.
type SSH struct {
	Dialer *remote.Dialer

	mu      sync.Mutex
	clients map[string]*remote.Client
}

// ExitError is a remote command's non-zero exit status.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode returns the status.
func (e *ExitError) ExitCode() int { return e.Code }

// Exec runs script on host. Cancelling ctx kills the remote command.
func (s *SSH) Exec(ctx context.Context, host, script string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := s.client(ctx, host)
	if err != nil {
		return err
	}
	p, err := c.Start(script, stdin, stdout, stderr)
	if err != nil {
		return err
	}
	code, err := p.WaitContext(ctx)
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

func (s *SSH) client(ctx context.Context, host string) (*remote.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[host]; c != nil {
		return c, nil
	}
	c, err := s.Dialer.Dial(ctx, host)
	if err != nil {
		return nil, err
	}
	if s.clients == nil {
		s.clients = map[string]*remote.Client{}
	}
	s.clients[host] = c
	return c, nil
}

// Close closes every connection.
func (s *SSH) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, c := range s.clients {
		c.Close()
		delete(s.clients, h)
	}
}

// Gather captures every host's evidence with the capture script, in
// parallel, and returns their facts in host order. A host that fails has a
// nil node and its error; the others are kept.
func Gather(ctx context.Context, t Transport, hosts []string, toolVersion string) ([]*facts.Node, []error) {
	nodes := make([]*facts.Node, len(hosts))
	errs := make([]error, len(hosts))
	script := capture.Script()
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil { // one host's bad capture must not take the others down
					nodes[i], errs[i] = nil, fmt.Errorf("capture on %s: unreadable (%v)", h, r)
				}
			}()
			var out, errb bytes.Buffer
			start := time.Now()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if err := t.Exec(cctx, h, script, nil, &out, &errb); err != nil && out.Len() == 0 {
				errs[i] = fmt.Errorf("capture on %s: %w %s", h, err, firstLine(errb.String()))
				return
			}
			snap, err := capture.ReadScriptOutput(&out, capture.ScriptMeta{Host: h, ToolVersion: toolVersion, CapturedAt: start, Duration: time.Since(start)})
			if err != nil {
				errs[i] = fmt.Errorf("capture on %s: %w", h, err)
				return
			}
			nodes[i] = facts.FromSnapshot(snap)
			nodes[i].Host = h
		}()
	}
	wg.Wait()
	return nodes, errs
}
