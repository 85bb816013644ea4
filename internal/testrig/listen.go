package testrig

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Listen opens a listener inside the host's network namespace, from the
// test process: a stand-in service on the host's loopback (a recorded
// NCCL RAS service on 127.0.0.1:28028, say) that the host's own commands
// reach, served by the test's goroutines. The socket stays in the host's
// namespace; the calling thread goes back to its own.
func (h *Host) Listen(network, addr string) (net.Listener, error) {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer self.Close()
	target, err := os.Open("/run/netns/" + h.NS)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer target.Close()
	if err := setns(target); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("enter %s: %w", h.NS, err)
	}
	l, lerr := net.Listen(network, addr)
	if err := setns(self); err != nil {
		// the thread cannot go back: leave it locked so it dies with the
		// goroutine instead of serving others in the host's namespace
		if l != nil {
			l.Close()
		}
		return nil, fmt.Errorf("leave %s: %w", h.NS, err)
	}
	runtime.UnlockOSThread()
	return l, lerr
}

func setns(f *os.File) error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) }
