package exporter

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimit caps the connections the server holds open. Where
// golang.org/x/net/netutil.LimitListener makes a new connection wait for a
// free slot (so idle keep-alive connections, or ones that never send a
// byte, would hold every slot and make scrapes queue behind them), a new
// connection past the cap closes the connection idle the longest; only
// when every held connection is busy with a request is the new one refused.
// Wrap the listener with Listener and set the server's ConnState to
// ConnState.
type ConnLimit struct {
	Max int

	mu   sync.Mutex
	open int
	idle map[net.Conn]time.Time // new (no request yet) or idle between requests, since
}

// Listener wraps l so that it holds at most Max connections.
func (c *ConnLimit) Listener(l net.Listener) net.Listener { return &limitedListener{Listener: l, c: c} }

// ConnState tracks which connections are idle (http.Server.ConnState).
func (c *ConnLimit) ConnState(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle = map[net.Conn]time.Time{}
	}
	switch st {
	case http.StateNew, http.StateIdle:
		c.idle[conn] = time.Now()
	default:
		delete(c.idle, conn)
	}
}

// Open is how many connections the server holds.
func (c *ConnLimit) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// admit makes room for one more connection: it closes the longest idle
// one while the cap is reached, and reports false when none is idle.
func (c *ConnLimit) admit() bool {
	for {
		c.mu.Lock()
		if c.open < c.Max {
			c.open++
			c.mu.Unlock()
			return true
		}
		var oldest net.Conn
		var since time.Time
		for conn, t := range c.idle {
			if oldest == nil || t.Before(since) {
				oldest, since = conn, t
			}
		}
		delete(c.idle, oldest)
		c.mu.Unlock()
		if oldest == nil {
			return false
		}
		oldest.Close() // gives its slot back (limitedConn.Close)
	}
}

func (c *ConnLimit) release() {
	c.mu.Lock()
	c.open--
	c.mu.Unlock()
}

type limitedListener struct {
	net.Listener
	c *ConnLimit
}

func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.c.admit() {
			return &limitedConn{Conn: conn, c: l.c}, nil
		}
		conn.Close() // every held connection is busy: refused
	}
}

type limitedConn struct {
	net.Conn
	c    *ConnLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.c.release)
	return err
}
