package triage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestScriptOnThisMachine runs the sample script with sh on this machine:
// this test process maps a library named libnccl.so.2 (an ELF with a
// known build ID) and a stand-in RAS listener replays a recording on a
// loopback port.
func TestScriptOnThisMachine(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed for the protocol client")
	}
	if _, err := exec.LookPath("ncclras"); err == nil {
		t.Skip("ncclras is installed here: the script would use it, not the stand-in")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644)
	lib := filepath.Join(dir, "libnccl.so.2")
	if out, err := goBuild(dir, lib, "-ldflags=-B=0x9fcf74d93a8c3605bf7718f594d0a24366e38536"); err != nil {
		t.Skipf("go build: %v %s", err, out)
	}
	f, err := os.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)

	addr := standIn(t, "hung-2.txt")
	port, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	logf := filepath.Join(dir, "job.log")
	os.WriteFile(logf, []byte("one\ntwo\nNCCL WARN the last line\n"), 0o644)
	out, err := exec.Command("sh", "-c", Script(ScriptOptions{RASPort: port, Log: logf, LogLines: 2})).Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := ParseSample("here", out)
	var me *Process
	for i, p := range s.Procs {
		if p.PID == os.Getpid() {
			me = &s.Procs[i]
		}
	}
	if me == nil || len(me.Libs) != 1 || me.Libs[0] != lib || !strings.Contains(me.Cmd, "triage.test") {
		t.Fatalf("this process not found: %+v", s.Procs)
	}
	var l *Library
	for i := range s.Libs {
		if s.Libs[i].Path == lib {
			l = &s.Libs[i]
		}
	}
	if l == nil || l.BuildID != "9fcf74d93a8c3605bf7718f594d0a24366e38536" || l.Version != "" {
		t.Fatalf("library %+v", s.Libs)
	}
	if len(s.RAS) != 2 || s.RAS[0].Client != "protocol" || s.RAS[0].Format != "json" || s.RAS[0].Exit != 0 ||
		!bytes.Equal(s.RAS[0].Raw, answer(t, "hung-2.txt", "json")) || !bytes.Equal(s.RAS[1].Raw, answer(t, "hung-2.txt", "VERBOSE STATUS")) {
		t.Fatalf("RAS %+v", s.RAS)
	}
	if st, a := s.Status(); st == nil || a.Format != "json" || st.Comms[0].Ranks[2].Ops() != 100 {
		t.Fatalf("status %+v", st)
	}
	if strings.Join(s.Log, "|") != "two|NCCL WARN the last line" || s.Name == "" {
		t.Fatalf("log %q name %q", s.Log, s.Name)
	}
}

func TestScriptWithoutRAS(t *testing.T) {
	// a port nothing listens on: the client fails and says so by its exit
	l := standIn(t, "hung-2.txt")
	port, _ := strconv.Atoi(l[strings.LastIndexByte(l, ':')+1:])
	out, _ := exec.Command("sh", "-c", Script(ScriptOptions{RASPort: port + 1})).Output()
	s := ParseSample("here", out)
	if st, _ := s.Status(); st != nil {
		t.Fatalf("no answer expected, got %+v", st)
	}
	for _, a := range s.RAS {
		if a.Exit == 0 {
			t.Fatalf("a refused connection exits non-zero: %+v", a)
		}
	}
}

// The sample script only reads: nothing in it signals, traces or attaches
// to a process, or reads a process's memory.
func TestScriptNeverTouchesTheJob(t *testing.T) {
	s := Script(ScriptOptions{Log: "/var/log/job.out"})
	for _, bad := range []string{"kill", "gdb", "strace", "ptrace", "py-spy", "/mem", "nsenter", "cuda-gdb", "pkill", "SIG"} {
		if strings.Contains(s, bad) {
			t.Errorf("the script holds %q", bad)
		}
	}
}
