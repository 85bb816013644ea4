package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptEndsABlockedRead: SIGINT or SIGTERM ends a command blocked
// reading a FIFO no one writes (analyze FIFO) or a pipe that never closes
// (report <(sleep 30)), with status 130, within a second — where before
// only SIGKILL ended it. The test waits up to 30 s before it calls the
// command stuck.
func TestInterruptEndsABlockedRead(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		args func(t *testing.T) ([]string, func())
	}{
		{"analyze FIFO", syscall.SIGINT, func(t *testing.T) ([]string, func()) {
			p := filepath.Join(t.TempDir(), "nccl.log")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			return []string{"analyze", p}, func() { waitForReader(t, p) }
		}},
		{"report pipe", syscall.SIGTERM, func(t *testing.T) ([]string, func()) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return []string{"report", fmt.Sprintf("/dev/fd/%d", r.Fd()), "-o", filepath.Join(t.TempDir(), "r.html")}, func() { time.Sleep(300 * time.Millisecond) }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, ready := c.args(t)
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- Main(args, strings.NewReader(""), &stdout, &stderr) }()
			ready()
			sent := time.Now()
			if err := syscall.Kill(os.Getpid(), c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case code := <-done:
				took := time.Since(sent)
				t.Logf("ended %v after the signal", took)
				if code != ExitInterrupted || !strings.Contains(stderr.String(), "sparkrig: interrupted") {
					t.Errorf("exit %d, stderr %q", code, stderr.String())
				}
				if took > 5*time.Second {
					t.Errorf("ended %v after the signal; the grace is %v", took, interruptGrace)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("still blocked 30 s after the signal")
			}
		})
	}
}

// waitForReader returns once a reader has the FIFO p open: opening it for
// writing without blocking fails (ENXIO) until then. The write end is
// held open until the test ends, so the reader stays blocked in read.
func waitForReader(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			t.Cleanup(func() { f.Close() })
			time.Sleep(100 * time.Millisecond) // into the read
			return
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("the command never opened the FIFO: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
