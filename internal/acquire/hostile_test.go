package acquire_test

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
)

// A node that answers the capture with endless zeros is refused after the
// preamble bound and killed, while the node beside it is captured.
func TestHostileNodeStreamingZerosIsRefused(t *testing.T) {
	cmd := exec.Command("sh", "-s")
	cmd.Stdin = strings.NewReader(capture.Script())
	recorded, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var sent int64
	s, err := loopssh.Start(2, t.TempDir(), func(host int, cmd string, stdin io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			return 0
		}
		io.WriteString(stdout, "sparkrig-pgid 4242\n")
		if !strings.Contains(cmd, "sh -s") {
			return 0
		}
		if host == 0 {
			zeros := make([]byte, 32<<10)
			for {
				n, err := stdout.Write(zeros)
				sent += int64(n)
				if err != nil || sent > 4<<30 {
					return 1
				}
			}
		}
		io.Copy(io.Discard, stdin) // as sh -s reads its script
		stdout.Write(recorded)
		return 0
	})
	d := loopDialer(t, s, err)
	nodes := acquire.Remote(context.Background(), s.Hosts, acquire.Options{Dialer: d, Parallel: 1,
		HostTimeout: 60 * time.Second, Timeout: 120 * time.Second, NoPing: true})
	if err := nodes[0].Err; err == nil || !strings.Contains(err.Error(), "not a sparkrig capture stream: no record in the first 64 KiB") {
		t.Errorf("hostile node: %v", err)
	}
	if sent > 64<<20 {
		t.Errorf("the hostile node sent %d MiB before it was stopped; the bound is 64 KiB plus what the channel window holds", sent>>20)
	}
	if nodes[1].Err != nil || nodes[1].Facts == nil {
		t.Errorf("healthy node: %v", nodes[1].Err)
	}
}

// An interrupt (the context ending) ends a capture blocked on a node that
// never answers at once, not at the 60 s host deadline.
func TestInterruptEndsASilentNode(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	s, err := loopssh.Start(1, t.TempDir(), func(_ int, cmd string, _ io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			return 0
		}
		io.WriteString(stdout, "sparkrig-pgid 4242\n")
		<-block
		return 0
	})
	d := loopDialer(t, s, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	start := time.Now()
	nodes := acquire.Remote(ctx, s.Hosts, acquire.Options{Dialer: d, Parallel: 4,
		HostTimeout: 60 * time.Second, Timeout: 120 * time.Second, NoPing: true})
	if el := time.Since(start); el > 10*time.Second || nodes[0].Err == nil {
		t.Errorf("returned after %v with %v; want the interrupt to end it within about a second", el, nodes[0].Err)
	}
}

// loopDialer reaches the loopback servers s (started with err), and stops
// them when the test ends.
func loopDialer(t testing.TB, s *loopssh.Servers, err error) *remote.Dialer {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	d, err := remote.NewDialer(remote.Options{ConfigFile: s.SSHConfig, Home: t.TempDir(), ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
