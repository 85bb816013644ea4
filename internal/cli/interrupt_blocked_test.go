package cli

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptEndsABlockedRead: SIGINT or SIGTERM ends a command blocked
// reading a FIFO no one writes (analyze FIFO) or a pipe that never closes
// (report <(sleep 30)), with status 130, within a second — where before
// only SIGKILL ended it. waitExit calls it stuck after 60 s.
func TestInterruptEndsABlockedRead(t *testing.T) {
	t.Run("analyze FIFO", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "nccl.log")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		cmd, stderr := sparkrigProcess(t, "analyze", p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w := waitForReader(t, p)
		defer w.Close() // held open: the reader stays blocked in read
		interruptAndTime(t, cmd.Process, syscall.SIGINT, func() int { return waitExit(t, cmd) }, stderr.String)
	})
	t.Run("report pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pw.Close()
		cmd, stderr := sparkrigProcess(t, "report", "/dev/fd/3", "-o", filepath.Join(t.TempDir(), "r.html"))
		cmd.ExtraFiles = []*os.File{pr} // fd 3, as <(sleep 30) gives one
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pr.Close()
		waitDrained(t, pw)
		interruptAndTime(t, cmd.Process, syscall.SIGTERM, func() int { return waitExit(t, cmd) }, stderr.String)
	})
}

func interruptAndTime(t *testing.T, p *os.Process, sig syscall.Signal, wait func() int, stderr func() string) {
	t.Helper()
	sent := time.Now()
	p.Signal(sig)
	code := wait()
	took := time.Since(sent)
	t.Logf("ended %v after the signal", took)
	if code != ExitInterrupted || stderr() != "sparkrig: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 130 and one line saying interrupted", code, stderr())
	}
	if took > 5*time.Second {
		t.Errorf("ended %v after the signal; the grace is %v", took, interruptGrace)
	}
}

// waitForReader returns the FIFO p's write end once a reader has it open:
// opening it for writing without blocking fails (ENXIO) until then.
func waitForReader(t *testing.T, p string) *os.File {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("sparkrig never opened the FIFO: %v", err)
		}
	}
}

// waitDrained writes one byte into the pipe and returns once the reader has
// taken it: it is then blocked reading for more.
func waitDrained(t *testing.T, w *os.File) {
	t.Helper()
	w.Write([]byte("#"))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Skipf("FIONREAD on a pipe: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("sparkrig never read the pipe")
		}
	}
}
