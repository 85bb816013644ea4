package capped

import "sync"

// Buffer keeps the first Max bytes written to it, safe for concurrent
// writers (a command's stdout and stderr copiers). Past Max it drops the
// rest quietly or, with OnFull set, fails the write with Err and calls
// OnFull once, so the writer stops the command instead of feeding it.
type Buffer struct {
	Max    int
	OnFull func()
	Err    error

	mu   sync.Mutex
	b    []byte
	full bool
}

func (c *Buffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.Max - len(c.b); len(p) > room {
		c.b = append(c.b, p[:max(room, 0)]...)
		if c.OnFull == nil {
			return len(p), nil
		}
		if !c.full {
			c.full = true
			c.OnFull()
		}
		return 0, c.Err
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

// Overflowed reports whether a write passed Max with OnFull set.
func (c *Buffer) Overflowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full
}

// Bytes returns a copy of what was kept.
func (c *Buffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.b...)
}
