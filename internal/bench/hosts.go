package bench

import (
	"context"
	"fmt"
	"io"
	"sync"

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
