package cli

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

// sparkrigProcess starts sparkrig as its own process (testscript's copy of
// this test binary on PATH, see TestMain), so a SIGINT reaches it alone.
func sparkrigProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	path, err := exec.LookPath("sparkrig")
	if err != nil {
		t.Skipf("no sparkrig on PATH: %v", err)
	}
	var stderr bytes.Buffer
	cmd := dieWithTest(exec.Command(path, args...))
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// waitExit waits for cmd and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sparkrig did not end within 60 s of the interrupt")
		return -1
	}
}

// An interrupt while analyze reads a pipe that never closes ends it at once
// with 130 and says "interrupted", not the reader's "context canceled".
func TestInterruptWhileReadingStdin(t *testing.T) {
	cmd, stderr := sparkrigProcess(t, "analyze", "-")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	// One byte in the pipe; once it is gone, sparkrig is reading (its
	// signal handler is in place before it reads).
	pw.Write([]byte("#"))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(pw.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Skipf("FIONREAD on a pipe: %v", err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("sparkrig never read its stdin")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != ExitInterrupted || stderr.String() != "sparkrig: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 130 and one line saying interrupted", code, stderr.String())
	}
}

// An interrupt while a node has not answered the SSH handshake is told as
// an interrupt — the node's line and the run's — never as "timed out".
func TestInterruptDuringHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // silent: the SSH handshake never starts
		}
	}()
	defer ln.Close()
	dir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	identity, conf := filepath.Join(dir, "id"), filepath.Join(dir, "config")
	if err := os.WriteFile(identity, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("Host *\n  ConnectTimeout 300\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	cmd, stderr := sparkrigProcess(t, "doctor", "--hosts", addr, "--ssh-config", conf, "--identity", identity,
		"--known-hosts", filepath.Join(dir, "known_hosts"), "--host-timeout", "300s", "--timeout", "300s")
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-accepted:
		defer c.Close()
		// The client's version line says it is in the handshake.
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "SSH-2.0-") {
			cmd.Process.Kill()
			t.Fatalf("no SSH version line from sparkrig: %q, %v", line, err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sparkrig never connected")
	}
	cmd.Process.Signal(syscall.SIGINT)
	want := "sparkrig: doctor: " + addr + ": interrupted: SSH handshake with " + addr + " did not finish\nsparkrig: interrupted\n"
	if code := waitExit(t, cmd); code != ExitInterrupted || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 130 and %q", code, stderr.String(), want)
	}
}

// silentNode listens on loopback and accepts connections that never say a
// word, until the test ends.
func silentNode(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Each node's line names it once: the one never started before the whole
// run's deadline read "B: timed out: B: not started ...".
func TestHostNamedOnce(t *testing.T) {
	a, b := silentNode(t), silentNode(t)
	dir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	identity := filepath.Join(dir, "id")
	if err := os.WriteFile(identity, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	// One node at a time: the other waits for the first, which the whole
	// run's 1 s deadline ends; either may go first.
	code, _, errOut := runMain(t, "doctor", "--hosts", a+","+b, "--parallel", "1", "--timeout", "1s",
		"--identity", identity, "--known-hosts", filepath.Join(dir, "known_hosts"))
	// Whichever went first, each node has one line that names it once, and
	// the one that waited says so.
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != ExitUnknown || len(lines) != 2 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	waited := 0
	for i, h := range []string{a, b} {
		prefix := "sparkrig: doctor: " + h + ": "
		if !strings.HasPrefix(lines[i], prefix) || strings.Contains(strings.TrimPrefix(lines[i], prefix), h+": ") {
			t.Errorf("line %q does not name %s once at its start", lines[i], h)
		}
		if lines[i] == prefix+"timed out: not started before the overall deadline" {
			waited++
		}
	}
	if waited != 1 {
		t.Errorf("want one node that never started:\n%s", errOut)
	}
}
