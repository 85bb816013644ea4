package capped

import (
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
