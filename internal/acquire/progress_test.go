package acquire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sparkrig/sparkrig/internal/remote"
)

// openPTY returns the controlling and the terminal side of a new
// pseudo-terminal, or skips where the system has none.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ctl.Close() })
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	return ctl, tty
}

// fanOutWithProgress runs a three-host fan-out one host at a time whose
// second host fails, drawing progress on stderr.
func fanOutWithProgress(stderr io.Writer) {
	p := newProgress(stderr, "capturing", 3)
	var calls atomic.Int32
	fan := remote.FanOut{Parallel: 1, Progress: p.update}
	fan.Each(context.Background(), []string{"spark-01", "spark-02", "spark-03"}, func(context.Context, int, string) error {
		if calls.Add(1) == 2 {
			return errors.New("refused")
		}
		return nil
	})
	p.finish()
}

func TestProgressOnATerminal(t *testing.T) {
	ctl, tty := openPTY(t)
	fanOutWithProgress(tty)
	tty.Close()
	got, _ := io.ReadAll(ctl) // ends with EIO once the terminal side is closed
	want := strings.Join([]string{
		"\r\033[Kcapturing 3 hosts: 0 done, 0 failed, 3 pending",
		"\r\033[Kcapturing 3 hosts: 1 done, 0 failed, 2 pending",
		"\r\033[Kcapturing 3 hosts: 1 done, 1 failed, 1 pending",
		"\r\033[Kcapturing 3 hosts: 2 done, 1 failed, 0 pending",
		"\r\033[K",
	}, "")
	if string(got) != want {
		t.Errorf("terminal got %q\nwant %q", got, want)
	}
}

func TestNoProgressOffATerminal(t *testing.T) {
	var buf bytes.Buffer
	fanOutWithProgress(&buf)
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fanOutWithProgress(f)
	b, _ := os.ReadFile(f.Name())
	if buf.Len() != 0 || len(b) != 0 {
		t.Errorf("progress written off a terminal: buffer %q, file %q", buf.String(), b)
	}
}
