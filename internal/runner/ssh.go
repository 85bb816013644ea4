package runner

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/sparkrig/sparkrig/internal/remote"
)

// SSH runs commands over SSH. By default it keeps one connection per host
// for its whole life, dialled on first use, so a command that captures a
// node and the benchmarks that follow share it; Fresh opens a connection per
// command instead, so that a command that succeeds also proves the host
// answers now (fix checks back after changing addresses that way).
type SSH struct {
	Dialer *remote.Dialer
	Fresh  bool

	mu    sync.Mutex
	conns map[string]*sshConn
}

// sshConn is one host's connection, dialled once under its own lock so
// that hosts are dialled in parallel.
type sshConn struct {
	mu sync.Mutex
	c  *remote.Client
	// users counts the commands running on c; release closes c once the
	// last of them ends (Release was asked while they ran).
	users   int
	release bool
}

// Exec runs cmdline on host. Cancelling ctx kills the remote command's
// process group.
func (s *SSH) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, hc, err := s.client(ctx, host)
	if err != nil {
		return err
	}
	if s.Fresh {
		defer c.Close()
	} else {
		defer hc.done()
	}
	p, err := c.Start(cmdline, stdin, stdout, stderr)
	if err != nil {
		s.forget(host, c)
		return err
	}
	code, err := p.WaitContext(ctx)
	if err != nil {
		if errors.Is(err, ErrDropped) {
			s.forget(host, c)
		}
		return err
	}
	if code != 0 {
		return &ExitError{Host: host, Exit: code}
	}
	return nil
}

// Client returns host's connection, dialling it if need be, counted as in
// use until hc.done.
func (s *SSH) client(ctx context.Context, host string) (*remote.Client, *sshConn, error) {
	if s.Fresh {
		c, err := s.Dialer.Dial(ctx, host)
		return c, nil, err
	}
	s.mu.Lock()
	if s.conns == nil {
		s.conns = map[string]*sshConn{}
	}
	hc := s.conns[host]
	if hc == nil {
		hc = &sshConn{}
		s.conns[host] = hc
	}
	s.mu.Unlock()
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.c == nil {
		c, err := s.Dialer.Dial(ctx, host)
		if err != nil {
			return nil, nil, err
		}
		hc.c = c
	}
	hc.users++
	hc.release = false
	return hc.c, hc, nil
}

func (hc *sshConn) done() {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.users--
	if hc.users == 0 && hc.release && hc.c != nil {
		hc.c.Close()
		hc.c = nil
		hc.release = false
	}
}

// Release closes host's connection once no command runs on it; the next
// command dials again. A fan-out over thousands of hosts releases each once
// captured, so it holds connections for the hosts it works on, not for
// every host it has reached.
func (s *SSH) Release(host string) {
	if s.Fresh {
		return
	}
	s.mu.Lock()
	hc := s.conns[host]
	s.mu.Unlock()
	if hc == nil {
		return
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.users > 0 {
		hc.release = true
		return
	}
	if hc.c != nil {
		hc.c.Close()
		hc.c = nil
	}
}

// forget drops a connection that failed, so the next command dials again.
func (s *SSH) forget(host string, c *remote.Client) {
	if s.Fresh {
		return
	}
	s.mu.Lock()
	hc := s.conns[host]
	s.mu.Unlock()
	if hc == nil {
		return
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.c == c {
		hc.c = nil
		c.Close()
	}
}

// Close closes every connection.
func (s *SSH) Close() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, hc := range conns {
		hc.mu.Lock()
		if hc.c != nil {
			hc.c.Close()
			hc.c = nil
		}
		hc.mu.Unlock()
	}
}

// String names the transport.
func (s *SSH) String() string { return "ssh" }
