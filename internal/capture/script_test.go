package capture

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

func runScript(t *testing.T, script string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-s")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return out
}

// itemKeys lists kind, name and status of every file and link, the part of
// a capture that must not depend on how it was taken.
func itemKeys(s *snapshot.Snapshot, kinds ...string) []string {
	var out []string
	for _, it := range s.Manifest.Items {
		for _, k := range kinds {
			if it.Kind == k && !volatile(it.Name) {
				out = append(out, it.Kind+" "+it.Status+" "+it.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// volatile paths differ between two captures of one machine: /proc/self
// points at another process, and test rigs running beside this test add and
// remove (virtual) interfaces in this network namespace.
func volatile(name string) bool {
	if strings.HasPrefix(name, "/proc/sys/net/ipv4/conf/") {
		return !strings.HasPrefix(name, "/proc/sys/net/ipv4/conf/all/") && !strings.HasPrefix(name, "/proc/sys/net/ipv4/conf/default/")
	}
	return strings.HasPrefix(name, "/proc/self/") || strings.HasPrefix(name, "/sys/class/net/")
}

// volatileContent lists files whose content changes from one read to the next.
func volatileContent(name string) bool {
	switch name {
	case "/proc/meminfo", "/proc/cpuinfo", "/proc/swaps", "/proc/modules":
		return true
	}
	return volatile(name)
}

// The script must collect exactly what the local capture collects.
func TestScriptMatchesLocalCapture(t *testing.T) {
	local := Local(context.Background(), Options{})
	out := runScript(t, Script())
	s, err := ReadScriptOutput(bytes.NewReader(out), ScriptMeta{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(itemKeys(local, snapshot.KindFile, snapshot.KindLink), itemKeys(s, snapshot.KindFile, snapshot.KindLink)); diff != "" {
		t.Errorf("files and links differ (-local +script):\n%s", diff)
	}
	if diff := cmp.Diff(itemKeys(local, snapshot.KindCmd), itemKeys(s, snapshot.KindCmd)); diff != "" {
		t.Errorf("commands differ (-local +script):\n%s", diff)
	}
	// Every file's content, except counters that change between two reads.
	for _, it := range local.Manifest.Items {
		if it.Kind != snapshot.KindFile || it.Status != snapshot.StatusOK || volatileContent(it.Name) {
			continue
		}
		a, _ := local.File(it.Name)
		b, ok := s.File(it.Name)
		if !ok || !bytes.Equal(a, b) {
			t.Errorf("%s: local %q, script %q", it.Name, a, b)
		}
	}
	// Every link's target; an interface that went away between the two
	// captures (a test rig's veth) is not a difference.
	for _, it := range local.Manifest.Items {
		if it.Kind != snapshot.KindLink {
			continue
		}
		a, _ := local.Link(it.Name)
		b, ok := s.Link(it.Name)
		if !ok && volatile(it.Name) {
			continue
		}
		if !ok || a != b {
			t.Errorf("link %s: local %q, script %q", it.Name, a, b)
		}
	}
	for _, id := range []string{"uname-m", "uname"} {
		a, ai, _ := local.Cmd(id)
		b, bi, ok := s.Cmd(id)
		if !ok || !bytes.Equal(a, b) || ai.ExitCode != bi.ExitCode || !cmp.Equal(ai.Argv, bi.Argv) {
			t.Errorf("%s: local %q %+v, script %q %+v", id, a, ai, b, bi)
		}
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if s.Manifest.Arch != local.Manifest.Arch || s.Manifest.OS != "linux" || s.Manifest.Capturer != "sh" {
		t.Errorf("manifest: %+v", s.Manifest)
	}
}

func TestScriptRecordsFilterTailTimeoutAndMissing(t *testing.T) {
	cmds := []Command{
		{ID: "filtered", Argv: []string{"printf", `a1\nb2\na3\na4\n`}, Filter: "^a", Tail: 2},
		{ID: "fails", Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 4"}},
		{ID: "slow", Argv: []string{"sleep", "30"}, Timeout: time.Second},
		{ID: "absent", Argv: []string{"no-such-tool-sparkrig"}},
		{ID: "percent", Argv: []string{"printf", `%s-%d\n`, "x", "5"}},
	}
	out := runScript(t, buildScript([]Path{{Glob: "/no/such/*/glob"}, {Glob: "/no/such/file"}}, cmds))
	s, err := ReadScriptOutput(bytes.NewReader(out), ScriptMeta{Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range s.Manifest.Items {
		got[it.Name] = it.Status + "|" + it.Error
		if it.Kind == snapshot.KindCmd {
			got[it.Name] += "|" + string(s.Data[snapshot.CmdKey(it.Name, "stdout")]) + "|" + string(s.Stderr(it.Name))
		}
	}
	want := map[string]string{
		"/no/such/*/glob": "missing|no match",
		"/no/such/file":   "missing|open: no such file or directory",
		"filtered":        "ok||a3\na4\n|",
		"fails":           "ok||out\n|err\n",
		"slow":            "timed-out|timed out after 1s||",
		"absent":          "missing|no-such-tool-sparkrig not found||",
		"percent":         "ok||x-5\n|",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if it, _ := s.Item(snapshot.KindCmd, "fails"); it.ExitCode != 4 {
		t.Errorf("exit code %d", it.ExitCode)
	}
}

func TestReadScriptOutputRejectsGarbageAndCutStreams(t *testing.T) {
	if _, err := ReadScriptOutput(strings.NewReader(strings.Repeat("Welcome to Ubuntu!\n", 5000)), ScriptMeta{Host: "h"}); err == nil || !strings.Contains(err.Error(), "not a sparkrig capture stream") {
		t.Errorf("endless banner: %v", err)
	}
	if _, err := ReadScriptOutput(strings.NewReader("@@ file ok x 0 /etc/x\n"), ScriptMeta{Host: "h"}); err == nil || !strings.Contains(err.Error(), "bad record header") {
		t.Errorf("bad header: %v", err)
	}
	full := "@@ file ok 3 0 /etc/x\nabc@@ end - 0 0 -\n"
	// A banner printed by the node's shell start-up files is skipped.
	if s, err := ReadScriptOutput(strings.NewReader("Welcome to DGX OS\n\n"+full), ScriptMeta{Host: "h"}); err != nil || string(s.Data["files/etc/x"]) != "abc" {
		t.Errorf("banner then stream: %v", err)
	}
	s, err := ReadScriptOutput(strings.NewReader(full), ScriptMeta{Host: "h"})
	if err != nil || string(s.Data["files/etc/x"]) != "abc" {
		t.Fatalf("full: %v", err)
	}
	// Unsized payloads end at the run's boundary line; a payload may hold
	// anything else, even a line that looks like a record.
	unsized := "@@ boundary ok 6 0 -\nb-1234@@ cmd ok - 2 ip-addr\n@@ end - 0 0 -\nno newline\nb-1234\n@@ cmd ok - 0 env\n\nb-1234\n@@ end - 0 0 -\n"
	s, err = ReadScriptOutput(strings.NewReader(unsized), ScriptMeta{Host: "h"})
	if out, it, _ := s.Cmd("ip-addr"); err != nil || string(out) != "@@ end - 0 0 -\nno newline" || it.ExitCode != 2 {
		t.Errorf("unsized: %q %+v %v", out, it, err)
	}
	if out, _, ok := s.Cmd("env"); !ok || len(out) != 0 {
		t.Errorf("empty unsized: %q %v", out, ok)
	}
	if _, err := ReadScriptOutput(strings.NewReader("@@ cmd ok - 0 x\nabc\n"), ScriptMeta{Host: "h"}); err == nil || !strings.Contains(err.Error(), "before the boundary") {
		t.Errorf("unsized without boundary: %v", err)
	}
	if _, err := ReadScriptOutput(strings.NewReader(unsized[:60]), ScriptMeta{Host: "h"}); !errors.Is(err, ErrCaptureCut) {
		t.Errorf("cut unsized: %v", err)
	}
	for _, cut := range []string{full[:10], full[:22], full[:30]} {
		s, err := ReadScriptOutput(strings.NewReader(cut), ScriptMeta{Host: "h"})
		if !errors.Is(err, ErrCaptureCut) || s == nil {
			t.Errorf("%q: %v", cut, err)
		}
	}
}

func FuzzReadScriptOutput(f *testing.F) {
	f.Add([]byte("@@ meta ok 5 0 os\nLinux@@ file ok 3 0 /etc/x\nabc@@ link ok 2 0 /sys/class/net/lo\n..@@ cmd ok 2 1 uname\nhi@@ cmderr ok 1 0 uname\nx@@ end - 0 0 -\n"))
	f.Add([]byte("@@ cmd missing 8 0 ibdev2netdev\nnot here@@ cmderr error 5 0 ibdev2netdev\noops\n"))
	f.Add([]byte("@@ file ok -1 0 /x\n"))
	f.Add([]byte("@@ boundary ok 4 0 -\nBBBB@@ cmd ok - 0 ip-addr\n[]\n\nBBBB\n@@ heads ok - 0 /sys/x/*\n==> /sys/x/a <==\n1\n\nBBBB\n@@ headerr ok 0 0 /sys/x/*\n@@ end - 0 0 -\n"))
	f.Add([]byte("@@ cmd ok 2 0 ../../../tmp/x\nhi@@ end - 0 0 -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, _ := ReadScriptOutput(bytes.NewReader(b), ScriptMeta{Host: "h"})
		if s == nil {
			t.Fatal("nil snapshot")
		}
		// Whatever the stream says, every name stays inside the archive's tree.
		for k := range s.Data {
			if path.Clean(k) != k || strings.HasPrefix(k, "../") || strings.Contains(k, "/../") {
				t.Fatalf("entry %q escapes the tree", k)
			}
		}
	})
}

// head -v output as GNU coreutils writes it for three sysfs files, one
// without a trailing newline and one whose read fails with EINVAL.
func TestAddHeadsSplitsSections(t *testing.T) {
	out := "==> /sys/class/net/a/mtu <==\n9000\n\n==> /sys/class/net/b/mtu <==\n1500\n==> /sys/class/net/lo/mtu <==\n"
	stderr := "head: error reading '/sys/class/net/lo/mtu': Invalid argument\nhead: cannot open '/sys/class/net/c/mtu' for reading: Permission denied\n"
	s := snapshot.New("h")
	addHeads(s, "/sys/class/net/*/mtu", []byte(out), []byte(stderr))
	var got []string
	for _, it := range s.Manifest.Items {
		b, _ := s.File(it.Name)
		got = append(got, it.Name+" "+it.Status+" "+it.Error+" "+strconv.Quote(string(b)))
	}
	want := []string{
		`/sys/class/net/a/mtu ok  "9000\n"`,
		`/sys/class/net/b/mtu ok  "1500"`,
		`/sys/class/net/lo/mtu missing read: invalid argument ""`,
		`/sys/class/net/c/mtu denied open: permission denied ""`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestHostileRecordNamesRefused: a node that names a record so it would land
// outside the archive's tree, or carry escape sequences, is refused as not a
// capture.
func TestHostileRecordNamesRefused(t *testing.T) {
	for _, name := range []string{"../../../../../tmp/x", "env/../../x", "a\x1b[31m", "UPPER", "/etc/../root/x", "etc/passwd", "/etc/x\n"} {
		for _, kind := range []string{"cmd", "file"} {
			if kind == "file" && !strings.HasPrefix(name, "/") && !strings.Contains(name, "..") {
				continue
			}
			in := "@@ " + kind + " ok 2 0 " + name + "\nhi@@ end - 0 0 -\n"
			_, err := ReadScriptOutput(strings.NewReader(in), ScriptMeta{Host: "h"})
			if err == nil || !strings.Contains(err.Error(), "not a sparkrig capture stream") {
				t.Errorf("%s %q: %v, want refused", kind, name, err)
			}
		}
	}
}

// A multi-line value cannot smuggle a line past the environment filter, in
// the script and in the local capture alike.
func TestEnvironmentKeepsWholeSettingsOnly(t *testing.T) {
	t.Setenv("SPARKRIG_TEST_NOTE", "first line\nNCCL_LEAK=secret")
	t.Setenv("NCCL_SOCKET_IFNAME", "enp1s0f0np0")
	var env Command
	for _, c := range Commands {
		if c.ID == "env" {
			env = c
		}
	}
	s, err := ReadScriptOutput(bytes.NewReader(runScript(t, buildScript(nil, []Command{env}))), ScriptMeta{Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	local := runCommand(context.Background(), expandCommands([]Command{env}, nil)[0])
	for name, out := range map[string]string{"script": string(s.Data[snapshot.CmdKey("env", "stdout")]), "local": string(local.stdout)} {
		if strings.Contains(out, "secret") || !strings.Contains(out, "NCCL_SOCKET_IFNAME=enp1s0f0np0\n") {
			t.Errorf("%s capture of env: %q", name, out)
		}
	}
}

// ScriptOnly captures the chosen items and nothing else, each as the
// whole script would.
func TestScriptOnlyCapturesTheChosenItems(t *testing.T) {
	out := runScript(t, ScriptOnly([]string{"/proc/sys/kernel/hostname", "/sys/class/net/"}, []string{"uname-m", "ip-link"}))
	s, err := ReadScriptOutput(bytes.NewReader(out), ScriptMeta{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, it := range s.Manifest.Items {
		switch {
		case it.Kind == snapshot.KindCmd:
			cmds = append(cmds, it.Name)
		case it.Name != "/proc/sys/kernel/hostname" && !strings.HasPrefix(it.Name, "/sys/class/net/"):
			t.Errorf("item %s %q not chosen", it.Kind, it.Name)
		}
	}
	sort.Strings(cmds)
	if !cmp.Equal(cmds, []string{"ip-link", "uname-m"}) {
		t.Errorf("commands %q", cmds)
	}
	want, _ := os.ReadFile("/proc/sys/kernel/hostname")
	if got, ok := s.File("/proc/sys/kernel/hostname"); !ok || !bytes.Equal(got, want) {
		t.Errorf("hostname %q, want %q", got, want)
	}
	if _, ok := s.Link("/sys/class/net/lo"); !ok {
		t.Error("no /sys/class/net/lo")
	}
}
