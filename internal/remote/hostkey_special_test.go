package remote

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestKnownHostsFIFOIsRefusedAtOnce: a known_hosts file that is a FIFO
// blocked the read (and the whole run, past --host-timeout); it is refused
// by type before it is opened. /dev/null, as UserKnownHostsFile /dev/null
// asks, holds no keys.
func TestKnownHostsFIFOIsRefusedAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "known_hosts")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := newHostKeyChecker([]string{fifo}, nil, false, false)
		done <- err
	}()
	err := <-done // blocked for ever before: the test binary's timeout is the failure
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO known_hosts: %v", err)
	}
	k, err := newHostKeyChecker([]string{os.DevNull}, nil, false, false)
	if err != nil || len(k.files) != 0 {
		t.Errorf("/dev/null: %v, files %q", err, k.files)
	}
}
