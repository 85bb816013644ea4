package capped

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "hosts")
	os.WriteFile(small, []byte("spark-01\nspark-02\n"), 0o600)
	if b, err := ReadFile(small, 64); err != nil || string(b) != "spark-01\nspark-02\n" {
		t.Errorf("small file: %q, %v", b, err)
	}
	if _, err := ReadFile(small, 8); err == nil || !strings.Contains(err.Error(), "more than the 8") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadFile("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if _, err := ReadFile(fifo, 64); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	}
}

// TestOpenRefusesWhatIsNotAFile: a character device, a directory and a
// named pipe (unless pipes are taken) are refused by type, at once and
// before a byte is read; a regular file and an anonymous pipe (as bash's
// <(…) hands one) stream.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "log.txt")
	if err := os.WriteFile(reg, []byte("NCCL INFO\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		pipes bool
		want  string
	}{
		{"/dev/zero", true, "open /dev/zero: is a character device, not a file"},
		{"/dev/zero", false, "open /dev/zero: is a character device, not a file"},
		{dir, true, "open " + dir + ": is a directory"},
		{fifo, false, "open " + fifo + ": is a named pipe, not a regular file"},
	} {
		f, err := Open(c.path, c.pipes)
		if err == nil {
			f.Close()
			t.Errorf("%s (pipes %v) opened", c.path, c.pipes)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.path, err, c.want)
		}
	}
	f, err := Open(reg, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "NCCL INFO\n" {
		t.Errorf("regular file read %q", b)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString("piped\n"); w.Close() }()
	p, err := Open(fmt.Sprintf("/proc/self/fd/%d", r.Fd()), true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(p)
	p.Close()
	r.Close()
	if string(b) != "piped\n" {
		t.Errorf("pipe read %q", b)
	}
}
