package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad flag values are refused as they are parsed: one line naming the
// command and the flag, nothing on stdout, exit 3 — never a panic (fix
// --port 7 indexed past the port table), never taken as another value
// (--port -2 as "auto", an unknown collective as NAME_perf), never a Go
// value in the text.
func TestFlagValuesRefusedAtParse(t *testing.T) {
	a, b := "../../testdata/nodes/spark-twin-down.tar.gz", "../../testdata/nodes/spark-healthy-peer.tar.gz"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", "--plan", "--snapshot", a, "--snapshot", b, "--port", "7"},
			`sparkrig: fix: invalid argument "7" for "--port" flag: want -1 (the port with carrier) or a port from 0 to 1 (see --help)`},
		{[]string{"fix", "--plan", "--snapshot", a, "--snapshot", b, "--port", "-2"},
			`sparkrig: fix: invalid argument "-2" for "--port" flag: want -1 (the port with carrier) or a port from 0 to 1 (see --help)`},
		{[]string{"bench", "nccl", "--dry-run", "--from-snapshot", a, "--from-snapshot", b, "--collective", "allgather,foo"},
			`sparkrig: bench: invalid argument "allgather,foo" for "--collective" flag: unknown "foo" (want all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv, scatter, gather, hypercube) (see --help)`},
		{[]string{"bench", "--dry-run", "--from-snapshot", a, "--from-snapshot", b, "--port", "70000"},
			`sparkrig: bench: invalid argument "70000" for "--port" flag: want 1024 to 65236 (the run listens on 300 ports from there) (see --help)`},
		{[]string{"doctor", "--hosts", "spark-01", "--timeout", "-1s"},
			`sparkrig: doctor: invalid argument "-1s" for "--timeout" flag: want 1s or more (see --help)`},
		{[]string{"snapshot", "--hosts", "spark-01", "--host-timeout", "0s"},
			`sparkrig: snapshot: invalid argument "0s" for "--host-timeout" flag: want 1s or more (see --help)`},
		{[]string{"doctor", "--hosts", "spark-01", "--timeout", "soon"},
			`sparkrig: doctor: invalid argument "soon" for "--timeout" flag: want a duration such as 90s or 5m (see --help)`},
		{[]string{"help", "nosuch"}, `sparkrig: help: unknown command "nosuch" (see sparkrig --help)`},
		{[]string{"help", "bench", "nosuch"}, `sparkrig: help: unknown command "bench nosuch" (see sparkrig --help)`},
		{[]string{"completion", "foo"}, `sparkrig: completion: unknown command "foo" (want bash, fish, powershell, zsh)`},
		{[]string{"bench", "gpu", "nosuch"}, `sparkrig: bench gpu: unknown command "nosuch" (want collective, gemm, info, memory)`},
	} {
		code, out, errOut := runMain(t, tt.args...)
		if code != ExitUnknown || out != "" || errOut != tt.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit 3 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// Other spellings of a collective name it: --collective allgather plans
// all_gather_perf, as --op allreduce runs all_reduce.
func TestCollectiveSpellings(t *testing.T) {
	a, b := "../../testdata/nodes/spark-healthy.tar.gz", "../../testdata/nodes/spark-healthy-peer.tar.gz"
	code, out, errOut := runMain(t, "bench", "nccl", "--dry-run", "--from-snapshot", a, "--from-snapshot", b, "--collective", "allgather,ReduceScatter")
	if code != ExitOK || !strings.Contains(out, "## [1/2] nccl/all_gather ") || !strings.Contains(out, "## [2/2] nccl/reduce_scatter ") ||
		!strings.Contains(out, " all_gather_perf ") || strings.Contains(out, "allgather_perf") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

// help and completion with a known name still work and exit 0; a command
// that only groups others prints its help when given nothing.
func TestHelpOfKnownCommands(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "bench", "gpu"}, {"completion"}, {"bench", "gpu"}} {
		code, out, errOut := runMain(t, args...)
		if code != ExitOK || errOut != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", args, code, errOut, out)
		}
		if strings.Contains(out, "  sparkrig bench gpu [flags]") {
			t.Errorf("%v: a group's usage has no line of its own:\n%s", args, out)
		}
	}
	code, out, _ := runMain(t, "completion", "bash")
	if code != ExitOK || !strings.HasPrefix(out, "# bash completion V2 for sparkrig") {
		t.Errorf("completion bash: exit %d, %.60q", code, out)
	}
}

// Colour and cursor sequences only on a terminal that has them: never with
// NO_COLOR (any value) or TERM=dumb, never on a pipe.
func TestColourOnlyWhereTheTerminalHasIt(t *testing.T) {
	for _, tt := range []struct {
		tty       bool
		env       map[string]string
		wantColor bool
	}{
		{true, map[string]string{"TERM": "xterm-256color"}, true},
		{true, map[string]string{"TERM": "dumb"}, false},
		{true, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
		{false, map[string]string{"TERM": "xterm"}, false},
	} {
		env := &Env{StdoutTTY: tt.tty, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return tt.env[k] }}
		if got := textOptions(env).Color; got != tt.wantColor {
			t.Errorf("tty %v, %v: colour %v", tt.tty, tt.env, got)
		}
		if tt.tty {
			if got := progressTo(env) != nil; got != tt.wantColor {
				t.Errorf("tty %v, %v: progress line %v", tt.tty, tt.env, got)
			}
		}
	}
	// And the doctor's text says so, end to end.
	for term, want := range map[string]bool{"xterm": true, "dumb": false} {
		var out bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &bytes.Buffer{}, StdoutTTY: true, Now: time.Now,
			Getenv: func(k string) string { return map[string]string{"TERM": term}[k] }}
		runEnv(t, env, "doctor", "--snapshot", "../../testdata/nodes/spark-twin-down.tar.gz")
		if got := strings.Contains(out.String(), "\x1b["); got != want {
			t.Errorf("TERM=%s: colour %v, want %v:\n%.300s", term, got, want, out.String())
		}
	}
}

// runEnv runs sparkrig's commands with env as the outside world (a
// terminal, say) and returns the error Main would turn into a status.
func runEnv(t *testing.T, env *Env, args ...string) error {
	t.Helper()
	root := newRootCmd(env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	_, err := root.ExecuteContextC(context.Background())
	return err
}

// At a terminal, report writes report.html only where there is none: an
// earlier report is never replaced by default; -o names a file to replace.
func TestReportKeepsAnEarlierReport(t *testing.T) {
	snap, err := filepath.Abs("../../testdata/nodes/spark-healthy.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("report.html", []byte("an earlier report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, StdoutTTY: true, Now: time.Now,
		Getenv: func(string) string { return "" }}
	err = runEnv(t, env, "report", snap)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitUnknown || ee.msg != "report: report.html exists: name the output with -o (-o report.html replaces it)" {
		t.Errorf("err = %v", err)
	}
	if b, _ := os.ReadFile("report.html"); string(b) != "an earlier report\n" {
		t.Errorf("report.html replaced: %.80q", b)
	}
	if err := runEnv(t, env, "report", snap, "-o", "report.html"); err != nil {
		t.Fatalf("-o report.html: %v", err)
	}
	if b, _ := os.ReadFile("report.html"); !bytes.Contains(b, []byte("<html")) {
		t.Errorf("-o report.html did not replace it: %.80q", b)
	}
	// Where there is none, the terminal's default is written.
	os.Remove("report.html")
	if err := runEnv(t, env, "report", snap); err != nil {
		t.Fatalf("no report.html yet: %v", err)
	}
	if _, err := os.Stat("report.html"); err != nil {
		t.Error(err)
	}
}

// -o into a directory that does not exist names the file asked for, not the
// temporary file beside it.
func TestReportOutputErrorNamesTheFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "missing", "r.html")
	code, stdout, errOut := runMain(t, "report", "../../testdata/nodes/spark-healthy.tar.gz", "-o", out)
	if code != ExitUnknown || stdout != "" || errOut != "sparkrig: report: write "+out+": no such file or directory\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
}
