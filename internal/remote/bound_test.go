package remote_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
	"golang.org/x/crypto/ssh"
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

// An interrupt while a node has not answered the SSH handshake is told as
// one, neither as the connect timeout (which was 30 s away) nor as any
// other "timed out".
func TestInterruptedHandshakeSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the listener closes
		}
	}()
	dir := t.TempDir()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	identity, conf := filepath.Join(dir, "id"), filepath.Join(dir, "config")
	os.WriteFile(identity, pem.EncodeToMemory(block), 0o600)
	os.WriteFile(conf, []byte("Host *\n  ConnectTimeout 30\n"), 0o600)
	d, err := remote.NewDialer(remote.Options{ConfigFile: conf, Home: dir, IdentityFiles: []string{identity}, KnownHosts: []string{filepath.Join(dir, "known_hosts")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err = d.Dial(ctx, ln.Addr().String())
	if want := ln.Addr().String() + ": interrupted: SSH handshake with " + ln.Addr().String() + " did not finish"; err == nil || !errors.Is(err, remote.ErrInterrupted) || err.Error() != want {
		t.Errorf("Dial: %v", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the interrupt took %v to end the handshake", el)
	}
}
