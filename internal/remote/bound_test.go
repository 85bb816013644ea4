package remote_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
)

// zeroServer is a node whose every command prints zeros until the client
// stops reading; killed counts the kill requests it got.
func zeroServer(t *testing.T, killed *atomic.Int32) *remote.Client {
	s, err := loopssh.Start(1, t.TempDir(), func(_ int, cmd string, _ io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			killed.Add(1)
			return 0
		}
		io.WriteString(stdout, "sparkrig-pgid 4242\n")
		zeros := make([]byte, 32<<10)
		for sent := 0; sent < 1<<30; sent += len(zeros) {
			if _, err := stdout.Write(zeros); err != nil {
				return 1
			}
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, err := remote.Dial(context.Background(), s.Hosts[0], remote.Options{ConfigFile: s.SSHConfig, Home: t.TempDir(), ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRunKeepsAtMostItsCap(t *testing.T) {
	var killed atomic.Int32
	c := zeroServer(t, &killed)
	out, _, _, err := c.Run(context.Background(), "cat /dev/zero", nil)
	if !errors.Is(err, remote.ErrTooMuchOutput) || !strings.Contains(err.Error(), "stdout passed 64 MiB") {
		t.Errorf("err = %v", err)
	}
	if len(out) != remote.MaxRunOutput || killed.Load() != 1 {
		t.Errorf("kept %d bytes (want %d), kill requests %d (want 1)", len(out), remote.MaxRunOutput, killed.Load())
	}
}

func TestStreamStopsWhenTheReaderDoes(t *testing.T) {
	var killed atomic.Int32
	c := zeroServer(t, &killed)
	read := 0
	_, _, err := c.Stream(context.Background(), "cat /dev/zero", nil, func(r io.Reader) error {
		n, _ := io.CopyN(io.Discard, r, 1<<20)
		read = int(n)
		return errors.New("not what was expected")
	})
	if err == nil || err.Error() != "not what was expected" || read != 1<<20 || killed.Load() != 1 {
		t.Errorf("err = %v, read %d, kill requests %d", err, read, killed.Load())
	}
}
