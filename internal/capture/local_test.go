package capture

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

func TestExpandCommands(t *testing.T) {
	cmds := []Command{
		{ID: "uname", Argv: []string{"uname", "-a"}},
		{ID: "ethtool", Each: EachNetdev, Argv: []string{"ethtool", "{netdev}"}},
	}
	got := expandCommands(cmds, []string{"enp1s0f0np0", "enP7s7"})
	var ids []string
	var argvs [][]string
	for _, r := range got {
		ids = append(ids, r.id)
		argvs = append(argvs, r.argv)
	}
	if d := cmp.Diff([]string{"uname", "ethtool.enp1s0f0np0", "ethtool.enP7s7"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]string{{"uname", "-a"}, {"ethtool", "enp1s0f0np0"}, {"ethtool", "enP7s7"}}, argvs); d != "" {
		t.Errorf("argv (-want +got):\n%s", d)
	}
}

func TestFilterAndTail(t *testing.T) {
	log := "[    1.0] usb 1-1: new device\n" +
		"[   12.5] NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus.\n" +
		"[   13.1] mlx5_core 0000:01:00.0 enp1s0f0np0: Link up\n" +
		"[   14.0] EXT4-fs mounted\n"
	got := filterLines([]byte(log), regexp.MustCompile(`NVRM: Xid|mlx5`))
	want := "[   12.5] NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus.\n" +
		"[   13.1] mlx5_core 0000:01:00.0 enp1s0f0np0: Link up\n"
	if string(got) != want {
		t.Errorf("filter = %q, want %q", got, want)
	}
	if got := tailLines(got, 1); string(got) != "[   13.1] mlx5_core 0000:01:00.0 enp1s0f0np0: Link up\n" {
		t.Errorf("tail = %q", got)
	}
	if got := tailLines([]byte("a\nb"), 5); string(got) != "a\nb" {
		t.Errorf("tail of short input = %q", got)
	}
}

func TestEvidenceListIsWellFormed(t *testing.T) {
	idRe := regexp.MustCompile(`^[a-z0-9-]+$`)
	seen := map[string]bool{}
	for _, c := range Commands {
		if !idRe.MatchString(c.ID) || seen[c.ID] {
			t.Errorf("command id %q is malformed or repeated", c.ID)
		}
		seen[c.ID] = true
		if len(c.Argv) == 0 || c.Why == "" {
			t.Errorf("command %s lacks argv or purpose", c.ID)
		}
		if c.Filter != "" {
			if _, err := regexp.Compile(c.Filter); err != nil {
				t.Errorf("command %s filter: %v", c.ID, err)
			}
		}
	}
	for _, p := range Files {
		if !strings.HasPrefix(p.Glob, "/") || p.Why == "" {
			t.Errorf("path %q must be absolute and say why", p.Glob)
		}
	}
}

// TestLocalOnThisMachine captures the machine running the tests: whatever it
// lacks (GPU, RDMA, tools) must be recorded, never fatal.
func TestLocalOnThisMachine(t *testing.T) {
	s := Local(context.Background(), Options{ToolVersion: "test"})
	if err := s.Validate(); err != nil {
		t.Fatalf("live snapshot does not validate: %v", err)
	}
	if b, ok := s.File("/proc/meminfo"); !ok || !strings.Contains(string(b), "MemTotal:") {
		t.Errorf("/proc/meminfo not captured")
	}
	it, ok := s.Item(snapshot.KindCmd, "nvidia-smi-q")
	if !ok {
		t.Fatal("nvidia-smi-q not recorded")
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil && it.Status != snapshot.StatusMissing {
		t.Errorf("nvidia-smi absent but status %q", it.Status)
	}
	if _, ok := s.Item(snapshot.KindLink, "/sys/class/net/lo"); !ok {
		t.Errorf("/sys/class/net/lo link not recorded")
	}
}

// BenchmarkLocal measures a whole live capture on this machine.
func BenchmarkLocal(b *testing.B) {
	for b.Loop() {
		Local(context.Background(), Options{})
	}
}

func TestGlobDir(t *testing.T) {
	for in, want := range map[string]string{
		"/etc/NetworkManager/system-connections/*":   "/etc/NetworkManager/system-connections",
		"/sys/class/infiniband/*/ports/*/gids/[0-9]": "/sys/class/infiniband",
		"/usr/lib/*-linux-gnu/libnccl.so*":           "/usr/lib",
	} {
		if got := globDir(in); got != want {
			t.Errorf("globDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunCommandOutcomes(t *testing.T) {
	ctx := context.Background()
	slow := runCommand(ctx, run{Command: Command{Timeout: 100 * time.Millisecond}, id: "slow", argv: []string{"sleep", "5"}})
	if slow.item.Status != snapshot.StatusTimedOut || slow.item.Error != "timed out after 100ms" {
		t.Errorf("slow command: %+v", slow.item)
	}
	absent := runCommand(ctx, run{id: "absent", argv: []string{"sparkrig-no-such-tool"}})
	if absent.item.Status != snapshot.StatusMissing || absent.item.Error != "sparkrig-no-such-tool not found" {
		t.Errorf("absent command: %+v", absent.item)
	}
	failing := runCommand(ctx, run{id: "failing", argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	if failing.item.Status != snapshot.StatusOK || failing.item.ExitCode != 3 || string(failing.stdout) != "out\n" || string(failing.stderr) != "err\n" {
		t.Errorf("failing command: %+v %q %q", failing.item, failing.stdout, failing.stderr)
	}
}

func TestBoundedBuffer(t *testing.T) {
	var w boundedBuffer
	chunk := make([]byte, MaxOutputBytes/2+1)
	w.Write(chunk)
	n, err := w.Write(chunk)
	if n != len(chunk) || err != nil || !w.over || w.b.Len() != MaxOutputBytes {
		t.Errorf("n=%d err=%v over=%v len=%d", n, err, w.over, w.b.Len())
	}
}

// TestCaptureFileRefusesAFIFO: a FIFO where a configuration file is
// expected (a hostile /etc/netplan/x.yaml) is recorded as not a regular
// file at once, not read until the capture is killed.
func TestCaptureFileRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "50-fifo.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	s := snapshot.New("spark-01")
	done := make(chan struct{})
	go func() { captureFile(s, p); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("capturing a FIFO still blocked after 60 s")
	}
	it, _ := s.Item(snapshot.KindFile, p)
	if it.Status != snapshot.StatusError || it.Error != "not a regular file" {
		t.Errorf("item %+v", it)
	}
}

// TestScriptRefusesAFIFO: the capture script run over SSH records a FIFO
// as not a regular file, as the local capture does, instead of blocking in
// the read until the host's deadline; the regular file beside it is read.
func TestScriptRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo, ok := filepath.Join(dir, "50-fifo.yaml"), filepath.Join(dir, "40-ok.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.WriteFile(ok, []byte("network: {version: 2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadScriptOutput(bytes.NewReader(runScript(t, buildScript([]Path{{Glob: filepath.Join(dir, "*.yaml")}}, nil))), ScriptMeta{Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if it, _ := s.Item(snapshot.KindFile, fifo); it.Status != snapshot.StatusError || it.Error != "not a regular file" {
		t.Errorf("FIFO: %+v", it)
	}
	if b, _ := s.File(ok); string(b) != "network: {version: 2}\n" {
		t.Errorf("regular file: %q", b)
	}
}
