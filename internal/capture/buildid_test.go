package capture

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A Go binary linked with -B carries the NT_GNU_BUILD_ID note it names;
// elfBuildID reads it back with debug/elf, as the local capture does for
// libnccl.so.2.
func TestELFBuildIDOfALinkedBinary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to link a test binary")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const id = "c0db9360a7f420a1c0db9360a7f420a1c0db9360"
	bin := filepath.Join(dir, "x")
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags=-B 0x"+id, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GO111MODULE=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := elfBuildID(bin)
	if err != nil || got != id {
		t.Fatalf("elfBuildID = %q, %v; want %s", got, err, id)
	}
	if _, err := elfBuildID(filepath.Join(dir, "main.go")); err == nil {
		t.Error("a text file has no build ID")
	}
}

func TestGNUBuildIDNote(t *testing.T) {
	le := binary.LittleEndian
	note := func(name string, typ uint32, desc []byte) []byte {
		var b []byte
		b = le.AppendUint32(b, uint32(len(name)+1))
		b = le.AppendUint32(b, uint32(len(desc)))
		b = le.AppendUint32(b, typ)
		n := append([]byte(name), 0)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		b = append(b, n...)
		d := append([]byte{}, desc...)
		for len(d)%4 != 0 {
			d = append(d, 0)
		}
		return append(b, d...)
	}
	id := []byte{0xa7, 0xf4, 0x20, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	goNote := note("Go", 4, []byte("a Go build id of odd size"))
	tests := []struct {
		name string
		data []byte
		want string
		ok   bool
	}{
		{"GNU note alone", note("GNU", 3, id), "a7f420a10102030405060708090a0b0c0d0e0f10", true},
		{"after a Go note", append(goNote, note("GNU", 3, id)...), "a7f420a10102030405060708090a0b0c0d0e0f10", true},
		{"GNU ABI tag only", note("GNU", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}), "", false},
		{"cut short", note("GNU", 3, id)[:20], "", false},
		{"empty", nil, "", false},
		{"huge descsz", append(le.AppendUint32(le.AppendUint32(nil, 4), 0xfffffff0), 3, 0, 0, 0, 'G', 'N', 'U', 0), "", false},
	}
	for _, tt := range tests {
		got, ok := gnuBuildID(tt.data, le)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// The script's loop runs in sh and prints nothing where no NCCL is
// installed; the local capture prints the same (nothing) here.
func TestNCCLBuildIDScriptRuns(t *testing.T) {
	out, err := exec.Command("sh", "-c", ncclBuildIDScript()).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	local := ncclBuildIDs()
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "== ") && !strings.Contains(string(local), l) {
			t.Errorf("the script found %q, the local capture did not", l)
		}
	}
}

func FuzzGNUBuildIDNote(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		gnuBuildID(b, binary.LittleEndian)
		gnuBuildID(b, binary.BigEndian)
	})
}
