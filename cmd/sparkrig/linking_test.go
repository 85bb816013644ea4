package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRuntimeLinking holds the README to what the binary needs at run time:
// built with CGO_ENABLED=0 it still links the C library dynamically (purego
// loads CUDA and NCCL): libc, libdl and libpthread through the platform's
// loader, and no versioned symbol, so no minimum glibc.
func TestRuntimeLinking(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sparkrig for two architectures")
	}
	for _, tt := range []struct {
		arch, interp string
		libs         []string
		maxGlibc     string // the newest GLIBC_ symbol version asked for; "" for none
	}{
		{"amd64", "/lib64/ld-linux-x86-64.so.2", []string{"libc.so.6", "libdl.so.2", "libpthread.so.0"}, ""},
		{"arm64", "/lib/ld-linux-aarch64.so.1", []string{"libc.so.6", "libdl.so.2", "libpthread.so.0"}, ""},
	} {
		out := filepath.Join(t.TempDir(), "sparkrig")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+tt.arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: go build: %v\n%s", tt.arch, err, b)
		}
		f, err := elf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(libs)
		if !slices.Equal(libs, tt.libs) {
			t.Errorf("%s: needs %v, README says %v", tt.arch, libs, tt.libs)
		}
		var interp string
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				p.ReadAt(b, 0)
				interp = strings.TrimRight(string(b), "\x00")
			}
		}
		if interp != tt.interp {
			t.Errorf("%s: loader %q, README says %q", tt.arch, interp, tt.interp)
		}
		syms, err := f.ImportedSymbols()
		if err != nil {
			t.Fatal(err)
		}
		newest := ""
		for _, s := range syms {
			if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && (newest == "" || olderVersion(newest, v)) {
				newest = v
			}
		}
		if newest != tt.maxGlibc {
			t.Errorf("%s: needs glibc %q, README says %q", tt.arch, newest, tt.maxGlibc)
		}
	}
}

// olderVersion reports whether dotted version a is older than b.
func olderVersion(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}
