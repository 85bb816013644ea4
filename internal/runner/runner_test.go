package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
)

// loopServers starts n loopback SSH servers that answer every command with
// "HOST-INDEX CMD" and exit with the status a command "exit N" asks for.
func loopServers(t *testing.T, n int) (*loopssh.Servers, *remote.Dialer) {
	t.Helper()
	s, err := loopssh.Start(n, t.TempDir(), func(host int, cmd string, stdin io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			return 0
		}
		io.WriteString(stdout, "sparkrig-pgid 4242\n")
		in, _ := io.ReadAll(stdin)
		fmt.Fprintf(stdout, "host%d %s", host, in)
		var code int
		fmt.Sscanf(string(in), "exit %d", &code)
		return code
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	d, err := remote.NewDialer(remote.Options{ConfigFile: s.SSHConfig, Home: t.TempDir(), ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, d
}

// One SSH runner dials each host once, however many commands run on it and
// however many at once; a fresh one dials for every command.
func TestSSHDialsEachHostOnce(t *testing.T) {
	s, d := loopServers(t, 3)
	r := &runner.SSH{Dialer: d}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 4 {
		for i, h := range s.Hosts {
			wg.Go(func() {
				out, _, err := runner.Run(context.Background(), r, h, runner.Shell, strings.NewReader("hello"))
				if want := fmt.Sprintf("host%d hello", i); err == nil && string(out) != want {
					err = fmt.Errorf("%s: got %q, want %q", h, out, want)
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for i := range s.Hosts {
		if n := s.Conns(i); n != 1 {
			t.Errorf("host %d: %d connections, want 1", i, n)
		}
	}

	fresh := &runner.SSH{Dialer: d, Fresh: true}
	for range 2 {
		if _, _, err := runner.Run(context.Background(), fresh, s.Hosts[0], runner.Shell, strings.NewReader("again")); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Conns(0); n != 3 {
		t.Errorf("host 0 after two fresh commands: %d connections, want 3", n)
	}
}

// A command that exits non-zero is the same *ExitError over every
// transport, carrying its status and the start of its stderr.
func TestExitErrorIsOneTypeForEveryTransport(t *testing.T) {
	s, d := loopServers(t, 1)
	ssh := &runner.SSH{Dialer: d}
	defer ssh.Close()
	for name, c := range map[string]struct {
		r      runner.Runner
		host   string
		script string
		stderr string
	}{
		"ssh":   {ssh, s.Hosts[0], "exit 7", ""},
		"local": {runner.Local{}, "localhost", "echo refused >&2; exit 7", "refused\n"},
	} {
		_, _, err := runner.Run(context.Background(), c.r, c.host, runner.Shell, strings.NewReader(c.script))
		var ee *runner.ExitError
		if !errors.As(err, &ee) || ee.Exit != 7 || ee.Stderr != c.stderr || ee.Host != c.host {
			t.Errorf("%s: %#v, want exit 7 with stderr %q", name, err, c.stderr)
		}
		if !runner.Answered(err) {
			t.Errorf("%s: Answered(%v) = false", name, err)
		}
	}
}

// When the reader gives up (a node streaming garbage), Stream stops the
// command at once and returns the reader's error.
func TestStreamStopsWhatIsNoLongerRead(t *testing.T) {
	want := errors.New("not a capture")
	start := time.Now()
	_, _, err := runner.Stream(context.Background(), runner.Local{}, "localhost", "yes garbage", nil, func(r io.Reader) error {
		io.ReadFull(r, make([]byte, 4096))
		return want
	})
	if err != want {
		t.Errorf("Stream = %v, want the reader's error", err)
	}
	// yes never ends by itself: returning at all proves it was stopped.
	t.Logf("stopped after %v", time.Since(start))
}

// A command still running at its deadline is stopped, and the error says
// so (ErrTimeout), not that it exited.
func TestDeadlineStopsTheCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := runner.Local{}.Exec(ctx, "localhost", "sleep 600", nil, io.Discard, io.Discard)
	if !errors.Is(err, runner.ErrTimeout) || runner.Answered(err) {
		t.Errorf("Exec = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el > 5*time.Minute {
		t.Errorf("took %v: sleep 600 was not stopped", el)
	}
}

// The root shell runs the script as root, or refuses at once through sudo
// -n; here (root or not) it must never prompt, and as root it runs.
func TestRootShellRunsAsRootOrRefuses(t *testing.T) {
	out, _, err := runner.Run(context.Background(), runner.Local{}, "localhost", runner.RootShell, strings.NewReader("id -u"))
	switch {
	case err == nil && strings.TrimSpace(string(out)) == "0":
	case err != nil && runner.Answered(err) && os.Getuid() != 0:
		t.Logf("not root, and sudo -n refused: %v", err)
	default:
		t.Errorf("root shell: %q, %v", out, err)
	}
}

// Srun asks for one task on the named node, overlapping other steps, and
// runs the command line with sh -c: the contract `srun --nodes=1
// --ntasks=1 -w NODE sh -s` relies on.
func TestSrunStandInGetsOneTaskOnTheNode(t *testing.T) {
	dir := t.TempDir()
	standin := filepath.Join(dir, "srun-standin")
	// The stand-in records its arguments and runs what follows them as
	// srun's task would.
	script := "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done >" + filepath.Join(dir, "argv") + "\nwhile [ $# -gt 0 ] && [ \"$1\" != sh ]; do shift; done\nexec \"$@\"\n"
	if err := os.WriteFile(standin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, err := runner.Run(context.Background(), runner.Srun{Bin: standin}, "spark-02", runner.Shell, strings.NewReader("echo on-node"))
	if err != nil || string(out) != "on-node\n" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	want := "--nodes=1\n--ntasks=1\n--overlap\n--quiet\n--nodelist=spark-02\nsh\n-c\nsh -s\n"
	if string(argv) != want {
		t.Errorf("srun argv:\n%s\nwant:\n%s", argv, want)
	}
}

// Kubectl finds the node's pod among the DaemonSet's and execs into it,
// chrooted into the node's root; the stand-in kubectl answers `get pods`
// with the lines the runner's jsonpath template asks for and runs what
// follows "--" of `exec` here.
func TestKubectlStandInExecsIntoTheNodesPod(t *testing.T) {
	dir := t.TempDir()
	standin := filepath.Join(dir, "kubectl-standin")
	script := `#!/bin/sh
printf '%s\n' "$*" >>` + filepath.Join(dir, "calls") + `
case " $* " in
*" get pods "*) printf 'gpu-a\tsparkrig-7x2kq\ngpu-b\tsparkrig-9zt4m\n'; exit 0;;
esac
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift
[ "$1" = chroot ] && shift 2
exec "$@"
`
	if err := os.WriteFile(standin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	k := &runner.Kubectl{Bin: standin, Namespace: "sparkrig", Selector: "app.kubernetes.io/name=sparkrig", Container: "node-problem-detector", HostRoot: "/host"}
	for range 2 {
		out, _, err := runner.Run(context.Background(), k, "gpu-b", runner.Shell, strings.NewReader("echo in-pod"))
		if err != nil || string(out) != "in-pod\n" {
			t.Fatalf("Run = %q, %v", out, err)
		}
	}
	_, _, err := runner.Run(context.Background(), k, "gpu-c", runner.Shell, strings.NewReader("true"))
	if !errors.Is(err, runner.ErrUnreachable) {
		t.Errorf("a node without a pod: %v, want ErrUnreachable", err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	want := []string{
		`--namespace sparkrig get pods --selector app.kubernetes.io/name=sparkrig --field-selector status.phase=Running --output jsonpath={range .items[*]}{.spec.nodeName}{"\t"}{.metadata.name}{"\n"}{end}`,
		"--namespace sparkrig exec -i sparkrig-9zt4m -c node-problem-detector -- chroot /host sh -c sh -s",
		"--namespace sparkrig exec -i sparkrig-9zt4m -c node-problem-detector -- chroot /host sh -c sh -s",
		`--namespace sparkrig get pods --selector app.kubernetes.io/name=sparkrig --field-selector status.phase=Running --output jsonpath={range .items[*]}{.spec.nodeName}{"\t"}{.metadata.name}{"\n"}{end}`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("kubectl calls:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzParsePodNodes(f *testing.F) {
	f.Add([]byte("gpu-a\tsparkrig-7x2kq\ngpu-b\tsparkrig-9zt4m\n"))
	f.Add([]byte("\t\n\tx\ny\t\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for n, p := range runner.ParsePodNodes(b) {
			if n == "" || p == "" || strings.ContainsAny(n+p, "\t\n") {
				t.Errorf("bad entry %q → %q", n, p)
			}
		}
	})
}

// unreachable is a runner whose every node cannot be reached.
type unreachable struct{}

func (unreachable) Exec(_ context.Context, host, _ string, _ io.Reader, _, _ io.Writer) error {
	return fmt.Errorf("%s: %w: connection refused", host, runner.ErrUnreachable)
}

// When the transport fails before any output, Stream says so, not that the
// stream was cut: the reader's error only echoes the transport's.
func TestStreamTellsATransportFailure(t *testing.T) {
	for range 200 {
		_, _, err := runner.Stream(context.Background(), unreachable{}, "spark-09", runner.Shell, nil, func(r io.Reader) error {
			if _, err := io.ReadAll(r); err != nil {
				return errors.New("capture stream cut off")
			}
			return errors.New("empty capture")
		})
		if !errors.Is(err, runner.ErrUnreachable) {
			t.Fatalf("Stream = %v, want the transport's ErrUnreachable", err)
		}
	}
}

// Release hands a host's connection back once no command runs on it: the
// commands running meanwhile finish, and the next one dials again.
func TestSSHReleaseClosesWhenIdle(t *testing.T) {
	s, d := loopServers(t, 1)
	r := &runner.SSH{Dialer: d}
	defer r.Close()
	r.Release(s.Hosts[0]) // nothing held yet: nothing to do
	run := func() error {
		out, _, err := runner.Run(context.Background(), r, s.Hosts[0], runner.Shell, strings.NewReader("x"))
		if err == nil && string(out) != "host0 x" {
			err = fmt.Errorf("got %q", out)
		}
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	r.Release(s.Hosts[0])
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if n := s.Conns(0); n != 2 {
		t.Errorf("after a release: %d connections, want 2", n)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() { errs <- run() })
		wg.Go(func() { r.Release(s.Hosts[0]); errs <- nil })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a command beside releases: %v", err)
		}
	}
}
