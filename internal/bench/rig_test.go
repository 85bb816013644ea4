package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// rigPair starts two Spark-named hosts cabled port 1 to port 1 (veths),
// each with a real sshd, and returns the rig with an SSH transport to it.
func rigPair(t testing.TB) (*testrig.Rig, *runner.SSH) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 not installed")
	}
	cfg, err := testrig.Sparks(2, "pair")
	if err != nil {
		t.Fatal(err)
	}
	r := testrig.New(t, cfg)
	d, err := remote.NewDialer(remote.Options{ConfigFile: r.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	s := &runner.SSH{Dialer: d}
	t.Cleanup(s.Close)
	return r, s
}

// sparkrigBuilt says whether a test asked for the binary (TestMain removes it).
var sparkrigBuilt bool

// sparkrigBinary builds the command once per test binary.
var sparkrigBinary = sync.OnceValues(func() (string, error) {
	sparkrigBuilt = true
	dir, err := os.MkdirTemp("", "sparkrig-bench-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sparkrig")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/sparkrig/sparkrig/cmd/sparkrig").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

func gatherRig(t testing.TB, s *runner.SSH, r *testrig.Rig) []*facts.Node {
	t.Helper()
	var nodes []*facts.Node
	for _, n := range acquire.Remote(context.Background(), r.Names(), acquire.Options{Dialer: s.Dialer, Parallel: 8,
		HostTimeout: time.Minute, Timeout: 2 * time.Minute, NoPing: true, ToolVersion: "test"}) {
		if n.Err != nil {
			t.Fatal(n.Err)
		}
		nodes = append(nodes, n.Facts)
	}
	return nodes
}

func rigSession(t testing.TB, s *runner.SSH, nodes []*facts.Node, o Options, helper string) *Session {
	t.Helper()
	o.RunDir = "/tmp/sparkrig-bench-" + strings.ReplaceAll(t.Name(), "/", "_")
	p, err := NewPlan(nodes, o)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := expect.Default()
	x := &Executor{T: s, RunDir: o.RunDir}
	if helper != "" {
		x.Helper, x.HelperPath = helper, o.RunDir+"/sparkrig"
	}
	return &Session{Exec: x, Nodes: nodes, Plan: p, Set: set}
}

// rigLeftovers lists what a run left on every
// rig host (processes whose command line names one of the ports, and
// those ports listening). The hosts share the machine's PID namespace, so
// ports tell this test's processes from anyone else's.
func rigLeftovers(t testing.TB, r *testrig.Rig, ports ...int) []string {
	var out []string
	var pat, alt []string
	for _, p := range ports {
		pat = append(pat, fmt.Sprintf("*%d*", p))
		alt = append(alt, fmt.Sprint(p))
	}
	for _, h := range r.Hosts {
		got, _ := h.Exec(context.Background(), "sh", "-c",
			`for p in /proc/[0-9]*; do c=$(tr '\0' ' ' 2>/dev/null <$p/cmdline); case "$c" in *for\ p\ in*) ;; `+strings.Join(pat, "|")+`) echo "$c";; esac; done; ss -Hltn | grep -E ':(`+strings.Join(alt, "|")+`) ' || true`)
		for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			if l != "" {
				out = append(out, h.Name+": "+l)
			}
		}
	}
	return out
}

// TestRigTCP runs iperf3 and the native probe for real between two rig
// hosts over SSH, on both rails, and leaves nothing behind.
func TestRigTCP(t *testing.T) {
	r, s := rigPair(t)
	t0 := time.Now()
	nodes := gatherRig(t, s, r)
	t.Logf("captured both hosts in %s", time.Since(t0))
	bin, err := sparkrigBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, native := range []bool{false, true} {
		sess := rigSession(t, s, nodes, Options{Kinds: []string{KindTCP}, Duration: time.Second, Streams: 2, Native: native}, bin)
		t0 := time.Now()
		rec := sess.Run(context.Background())
		t.Logf("native=%v ran in %s", native, time.Since(t0))
		if len(rec.Analyses) != 2 {
			t.Fatalf("native=%v: %d steps, want one per rail: %+v", native, len(rec.Analyses), sess.Plan.Notes)
		}
		for i, a := range rec.Analyses {
			st := rec.Bench.Steps[i]
			if st.Status != StatusOK || len(a.Items) == 0 || a.Items[0].Value < 0.5 {
				t.Errorf("native=%v %s: %s %s items %+v", native, a.File, st.Status, st.Error, a.Items)
				continue
			}
			t.Logf("%s: %s", a.File, a.Measured)
		}
		client := rec.Bench.Steps[1].Commands[1]
		if client.Host != "spark-02" || !strings.Contains(client.Command, "192.168.101.10") {
			t.Errorf("rail1 client: %s %s", client.Host, client.Command)
		}
	}
	if left := eventually(30*time.Second, func() []string { return rigLeftovers(t, r, 18615, 18616) }); len(left) > 0 {
		t.Errorf("left on the hosts: %q", left)
	}
}

// scratchDir finds a run's scratch directory in the command lines of its processes.
var scratchDir = regexp.MustCompile(`/tmp/sparkrig-bench-[0-9a-z]+`)

// TestRigKilledRun interrupts and kills the sparkrig command mid-run and
// looks on the hosts for anything it started: processes, ports and the
// scratch directory (with the helper copy in it).
func TestRigKilledRun(t *testing.T) {
	r, _ := rigPair(t)
	bin, err := sparkrigBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sig    syscall.Signal
		native bool
	}{{syscall.SIGINT, true}, {syscall.SIGKILL, false}} {
		sig, native := c.sig, c.native
		{
			args := []string{"bench", "tcp", "--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig,
				"--duration", "60s", "--results", t.TempDir(), "--port", "19515"}
			if native {
				args = append(args, "--native")
			}
			cmd := exec.Command(bin, args...)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the client runs, then signal.
			var runDir string
			running := eventually(30*time.Second, func() []string {
				if left := rigLeftovers(t, r, 19615); len(left) >= 2 {
					runDir = scratchDir.FindString(strings.Join(left, "\n"))
					return nil
				}
				return []string{"not yet"}
			})
			if len(running) > 0 || runDir == "" {
				t.Fatalf("%v native=%v: the run never started: %s", sig, native, out.String())
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if sig == syscall.SIGINT {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
					t.Errorf("after SIGINT: %v, want exit 130: %s", err, out.String())
				}
			}
			if left := eventually(30*time.Second, func() []string { return rigLeftovers(t, r, 19615, 19616) }); len(left) > 0 {
				t.Errorf("%v native=%v: left on the hosts: %q", sig, native, left)
			}
			for _, h := range r.Hosts {
				if left := eventually(30*time.Second, func() []string {
					got, _ := h.Exec(context.Background(), "sh", "-c", "ls -d "+runDir+" 2>/dev/null || true")
					return strings.Fields(string(got))
				}); len(left) > 0 {
					t.Errorf("%v native=%v: %s: scratch directory %s left", sig, native, h.Name, runDir)
				}
			}
		}
	}
}

// BenchmarkProbeVsIPerf3 measures the native probe against iperf3 on the
// same veth rail of a rig, same streams and duration, alternating three times so
// neither gets a quieter machine. Run it once: -bench ProbeVsIPerf3 -benchtime 1x.
func BenchmarkProbeVsIPerf3(b *testing.B) {
	r, s := rigPair(b)
	nodes := gatherRig(b, s, r)
	bin, err := sparkrigBinary()
	if err != nil {
		b.Fatal(err)
	}
	sum := map[bool]float64{}
	runs := 0
	for b.Loop() {
		for range 3 {
			for _, native := range []bool{false, true} {
				sess := rigSession(b, s, nodes, Options{Kinds: []string{KindTCP}, Duration: 5 * time.Second, Streams: 4, Native: native}, bin)
				sess.Plan.Steps = sess.Plan.Steps[:1] // rail0 only
				rec := sess.Run(context.Background())
				a := rec.Analyses[0]
				if len(a.Items) == 0 {
					b.Fatalf("native=%v: %s", native, rec.Bench.Steps[0].Error)
				}
				sum[native] += a.Items[0].Value
				b.Logf("%s: %.2f %s", a.File, a.Items[0].Value, a.Items[0].Unit)
			}
			runs++
		}
	}
	ip, pr := sum[false]/float64(runs), sum[true]/float64(runs)
	b.ReportMetric(ip, "iperf3-Gb/s")
	b.ReportMetric(pr, "probe-Gb/s")
	b.ReportMetric(pr/ip, "probe/iperf3")
}
