package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// TestModuleZips checks the repository the way the module proxy will: a file
// path it rejects (a ':' in a name, say) makes `go install …@version` fail
// for every user.
func TestModuleZips(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a git checkout: the module zip is built from the checkout's files")
	}
	files, err := zip.CheckDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files.Invalid {
		t.Errorf("the module zip would reject %s: %v", f.Path, f.Err)
	}
	if len(files.Valid) < 100 {
		t.Fatalf("only %d files would go into the module zip", len(files.Valid))
	}
	out := filepath.Join(t.TempDir(), "sparkrig.zip")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := zip.CreateFromVCS(w, module.Version{Path: "github.com/sparkrig/sparkrig", Version: "v0.0.0-20261123000000-000000000000"}, root, "HEAD", ""); err != nil {
		t.Fatalf("module zip from HEAD: %v", err)
	}
}

// TestVersionFromCheckout builds the binary as a user does in a clone and
// checks that --version names the commit it was built from.
func TestVersionFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "sparkrig")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(head))[:12]; !strings.Contains(string(out), want) {
		t.Fatalf("--version printed %q, want the commit %s in it", out, want)
	}
}

// TestInterruptEndsABlockedRead: `sleep 30 | sparkrig analyze -` ends with
// 130 soon after SIGINT, not when the pipe closes.
func TestInterruptEndsABlockedRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "sparkrig")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close() // never written: the read blocks until the signal
	cmd := exec.Command(bin, "analyze", "-")
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit %v, want 130", err)
		}
		t.Logf("ended %s after SIGINT", time.Since(start).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still blocked 30 s after SIGINT")
	}
}
