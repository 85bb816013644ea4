package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/slurm"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// buildSparkrig builds the sparkrig binary for hosts to run, under /tmp
// (which every rig host sees, read-only below its own writes).
func buildSparkrig(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("SPARKRIG_TEST_BIN"); bin != "" {
		return bin // a build given on purpose: an earlier one, to compare
	}
	bin := filepath.Join(t.TempDir(), "sparkrig")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/sparkrig/sparkrig/cmd/sparkrig")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// findingLines are a report's findings, host and cluster, as "severity id
// host subject: observed", with measured round-trip times left out.
func findingLines(r *report.Report) []string {
	rtt := regexp.MustCompile(`avg RTT [0-9.]+ ms`)
	var out []string
	for _, h := range r.Hosts {
		out = append(out, "host "+h.Host+" "+h.Status)
		for _, f := range h.Findings {
			out = append(out, string(f.Severity)+" "+f.ID+" "+h.Host+" "+f.Subject+": "+f.Observed)
		}
	}
	if r.Cluster != nil {
		for _, f := range r.Cluster.Findings {
			out = append(out, string(f.Severity)+" "+f.ID+" "+f.Host+" "+f.Subject+": "+rtt.ReplaceAllString(f.Observed, "avg RTT x ms"))
		}
	}
	slices.Sort(out)
	return out
}

// TestRigSlurm runs sparkrig against Debian's Slurm: slurmctld here, a
// slurmd in each of two rig hosts. doctor --slurm inside salloc sees what
// doctor over SSH sees; the health check drains exactly the node with a
// planted problem, with sparkrig's reason, and resumes it once fixed; an
// operator's drain is never resumed; a health check program that crashes
// drains nothing.
func TestRigSlurm(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, nil)
	bin := buildSparkrig(t)
	crash := filepath.Join(filepath.Dir(bin), "crashing-health-check")
	if err := os.WriteFile(crash, []byte("#!/bin/sh\nkill -SEGV $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each slurmd runs the crashing program once as it starts; StartSlurm
	// returns only once both nodes are idle: a crash drained nothing.
	s := r.StartSlurm(t, testrig.SlurmOptions{HealthCheckProgram: crash})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// doctor over srun, inside an allocation of both nodes, against SSH.
	var out, errb bytes.Buffer
	cmd := s.Command(ctx, "salloc", "--nodes=2", bin, "doctor", "--slurm", "--format", "json")
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	var overSrun report.Report
	if err := json.Unmarshal(out.Bytes(), &overSrun); err != nil {
		t.Fatalf("doctor --slurm: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	_, overSSH, _ := rigDoctor(t, r)
	if diff := cmp.Diff(findingLines(overSSH), findingLines(&overSrun)); diff != "" {
		t.Errorf("doctor over srun differs from over SSH (-ssh +srun):\n%s", diff)
	}
	for _, h := range overSrun.Hosts {
		if h.Source != "srun" {
			t.Errorf("%s: source %q, want srun", h.Host, h.Source)
		}
	}
	if n := countID(&overSrun, "cluster.df-ping", "ok"); n != 4 {
		t.Errorf("%d passing DF pings over srun, want 4", n)
	}

	state := func(node string) slurm.Node {
		t.Helper()
		b, err := s.Command(ctx, "scontrol", "show", "node", node, "--oneliner").Output()
		n, perr := slurm.ParseNode(b)
		if err != nil || perr != nil {
			t.Fatalf("scontrol show node %s: %v %v", node, err, perr)
		}
		return n
	}
	health := func(host string, args ...string) (int, string) {
		t.Helper()
		argv := append([]string{"env", s.Env, bin, "slurm", "health"}, args...)
		b, err := r.Host(host).Exec(ctx, argv...)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(b)
		} else if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		return 0, string(b)
	}
	sysctl := func(host, v string) {
		t.Helper()
		if _, err := r.Host(host).Exec(ctx, "sysctl", "-w", "net.ipv4.tcp_rmem="+v); err != nil {
			t.Fatal(err)
		}
	}

	// A TCP autotuning maximum of 1 MiB on spark-02: a warn, which never
	// drains by default; --always net.tcp-buffers makes it drain.
	sysctl("spark-02", "4096 131072 1048576")
	if code, out := health("spark-02"); code != 0 || out != "spark-02: leave: healthy\n" {
		t.Errorf("default policy on a warn: exit %d, %q; want it left", code, out)
	}
	if n := state("spark-02"); n.Drained() {
		t.Errorf("a warn drained spark-02: %+v", n)
	}
	const reason = "sparkrig: net.tcp-buffers: net.ipv4.tcp_rmem: 4096 131072 1048576"
	if code, out := health("spark-02", "--always", "net.tcp-buffers"); code != ExitCritical || out != "spark-02: drain: "+reason+"\n" {
		t.Errorf("--always net.tcp-buffers: exit %d, %q", code, out)
	}
	if n := state("spark-02"); !n.Drained() || n.Reason != reason {
		t.Errorf("spark-02 after the health check: %+v, want drained with %q", n, reason)
	}
	// The fields Slurm prints after Reason= (Comment=, Extra=) end it: the
	// drain is recognised as sparkrig's own, not made again on every run.
	if out, err := s.Command(ctx, "scontrol", "update", "NodeName=spark-02", "Comment=rack 4 Reason=none", "Extra=row=2").CombinedOutput(); err != nil {
		t.Fatalf("scontrol update Comment Extra: %v: %s", err, out)
	}
	if b, err := s.Command(ctx, "scontrol", "show", "node", "spark-02", "--oneliner").Output(); err == nil {
		t.Logf("scontrol show node spark-02 --oneliner: %s", b)
	}
	if code, out := health("spark-02", "--always", "net.tcp-buffers"); code != ExitCritical || out != "spark-02: leave: already drained: "+reason+"\n" {
		t.Errorf("drained spark-02 with a Comment and Extra: exit %d, %q; want it left drained", code, out)
	}
	// Evidence not read is unknown: on spark-02 as a GPU server whose
	// nvidia-smi is absent, and whose nvidia-smi hangs, sparkrig's own drain
	// is neither resumed nor replaced, and it says why.
	sysctl("spark-02", "4096 131072 33554432")
	hang := filepath.Join(filepath.Dir(bin), "hang")
	os.MkdirAll(hang, 0o755)
	os.WriteFile(filepath.Join(hang, "nvidia-smi"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755)
	for _, c := range []struct{ name, path, why string }{
		{"nvidia-smi absent", "", "gpu.driver: nvidia-smi absent on the node"},
		{"nvidia-smi hanging", hang + ":", "gpu.driver: nvidia-smi timed out after"},
	} {
		b, err := r.Host("spark-02").Exec(ctx, "env", s.Env, "PATH="+c.path+"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			bin, "slurm", "health", "--profile", "gpu-server", "--always", "net.tcp-buffers", "--never", "nccl.*", "--audit-timeout", "30s")
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != ExitUnknown || !strings.HasPrefix(string(b), "spark-02: leave: could not check (not evaluated: "+c.why) || !strings.HasSuffix(string(b), "; the node is left as it is\n") {
			t.Errorf("%s: exit %d, %q; want 3 and the node left", c.name, code, b)
		}
		if n := state("spark-02"); !n.Drained() || n.Reason != reason {
			t.Errorf("%s: spark-02 %+v, want sparkrig's drain kept", c.name, n)
		}
	}
	sysctl("spark-02", "4096 131072 1048576")
	if code, out := health("spark-01", "--always", "net.tcp-buffers"); code != 0 || out != "spark-01: leave: healthy\n" {
		t.Errorf("healthy spark-01: exit %d, %q", code, out)
	}
	if n := state("spark-01"); n.Drained() {
		t.Errorf("the healthy node was drained: %+v", n)
	}

	// An operator's drain on the healthy node is never resumed.
	if out, err := s.Command(ctx, "scontrol", "update", "NodeName=spark-01", "State=DRAIN", "Reason=disk replaced, ticket 4711").CombinedOutput(); err != nil {
		t.Fatalf("operator drain: %v: %s", err, out)
	}
	if code, out := health("spark-01", "--always", "net.tcp-buffers"); code != 0 || !strings.HasPrefix(out, "spark-01: leave: healthy; drained or down by someone else (disk replaced, ticket 4711)") {
		t.Errorf("operator-drained spark-01: exit %d, %q", code, out)
	}
	// Nor is it overwritten when the node has a problem too.
	sysctl("spark-01", "4096 131072 1048576")
	if code, _ := health("spark-01", "--always", "net.tcp-buffers"); code != ExitCritical {
		t.Errorf("operator-drained spark-01 with a problem: exit %d, want 2", code)
	}
	if n := state("spark-01"); !n.Drained() || n.Reason != "disk replaced, ticket 4711" {
		t.Errorf("spark-01: %+v, want the operator's drain kept", n)
	}

	// Fixed: spark-02's drain, sparkrig's own, is resumed.
	sysctl("spark-02", "4096 131072 33554432")
	if code, out := health("spark-02", "--always", "net.tcp-buffers"); code != 0 || out != "spark-02: resume: healthy again; resuming sparkrig's drain ("+reason+")\n" {
		t.Errorf("fixed spark-02: exit %d, %q", code, out)
	}
	if n := state("spark-02"); n.Drained() {
		t.Errorf("spark-02 after the fix: %+v, want resumed", n)
	}
	if n := state("spark-01"); !n.Drained() || n.Reason != "disk replaced, ticket 4711" {
		t.Errorf("spark-01 at the end: %+v, want the operator's drain kept", n)
	}
}

// The prolog wrapper fails the job (exit 1) only when sparkrig says the node
// is unhealthy; sparkrig missing or crashing exits 0.
func TestPrologWrapperFailsOpen(t *testing.T) {
	wrapper, err := filepath.Abs("../../deploy/slurm/sparkrig-prolog.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	crash := filepath.Join(dir, "crashing-sparkrig")
	unhealthy := filepath.Join(dir, "unhealthy-sparkrig")
	os.WriteFile(crash, []byte("#!/bin/sh\nkill -SEGV $$\n"), 0o755)
	os.WriteFile(unhealthy, []byte("#!/bin/sh\n[ \"$1 $2\" = \"slurm epilog\" ] || exit 9\necho 'sparkrig: gpu.xid: GPU 0: Xid 79'\nexit 1\n"), 0o755)
	for _, c := range []struct {
		sparkrig string
		mode     string
		context  string // SLURM_SCRIPT_CONTEXT, as slurmd sets it
		want     int
	}{
		{filepath.Join(dir, "missing"), "prolog", "", 0},
		{crash, "prolog", "", 0},
		{unhealthy, "epilog", "", 1},
		{unhealthy, "", "epilog_slurmd", 1},
		{unhealthy, "prolog", "", 0}, // the stand-in exits 9 for prolog: not "unhealthy"
		{unhealthy, "", "prolog_slurmd", 0},
	} {
		cmd := exec.Command("sh", wrapper)
		if c.mode != "" {
			cmd.Args = append(cmd.Args, c.mode)
		}
		cmd.Env = append(os.Environ(), "SPARKRIG="+c.sparkrig, "SLURM_SCRIPT_CONTEXT="+c.context)
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != c.want {
			t.Errorf("%s %s (%s): exit %d, want %d", filepath.Base(c.sparkrig), c.mode, c.context, code, c.want)
		}
	}
}

// TestRigSlurmRunsTheHealthCheck has slurmd itself run deploy/slurm's
// health check every few seconds on two rig hosts, sparkrig installed in
// each host's own /usr/local/bin and its policy in /etc/default: a problem
// planted on one host drains exactly that node with sparkrig's reason and
// writes the node_exporter textfile; fixing it resumes the node.
func TestRigSlurmRunsTheHealthCheck(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, nil)
	bin := buildSparkrig(t)
	script, err := os.ReadFile("../../deploy/slurm/sparkrig-health.sh")
	if err != nil {
		t.Fatal(err)
	}
	health := filepath.Join(filepath.Dir(bin), "sparkrig-health.sh")
	if err := os.WriteFile(health, script, 0o755); err != nil {
		t.Fatal(err)
	}
	budget := 3 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	for _, h := range r.Hosts {
		install := "mkdir -p /usr/local/bin /etc/default /var/lib/prometheus/node-exporter && cp " + bin + " /usr/local/bin/sparkrig && " +
			"echo 'SPARKRIG_HEALTH_ARGS=\"--always net.tcp-buffers\"' >/etc/default/sparkrig-health"
		if out, err := h.Exec(ctx, "sh", "-c", install); err != nil {
			t.Fatalf("%s: %v: %s", h.Name, err, out)
		}
	}
	s := r.StartSlurm(t, testrig.SlurmOptions{HealthCheckProgram: health, HealthCheckInterval: 2})
	state := func(node string) slurm.Node {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		b, err := s.Command(sctx, "scontrol", "show", "node", node, "--oneliner").CombinedOutput()
		n, perr := slurm.ParseNode(b)
		if err != nil || perr != nil {
			return slurm.Node{Name: node, State: "?", Reason: fmt.Sprint(err, perr, string(b))}
		}
		return n
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("%s: not within %s; spark-01 %+v, spark-02 %+v", what, budget, state("spark-01"), state("spark-02"))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	if _, err := r.Host("spark-02").Exec(ctx, "sysctl", "-w", "net.ipv4.tcp_rmem=4096 131072 1048576"); err != nil {
		t.Fatal(err)
	}
	const reason = "sparkrig: net.tcp-buffers: net.ipv4.tcp_rmem: 4096 131072 1048576"
	waitFor("spark-02 drained by the health check", func() bool { n := state("spark-02"); return n.Drained() && n.Reason == reason })
	prom, err := r.Host("spark-02").Exec(ctx, "cat", "/var/lib/prometheus/node-exporter/sparkrig.prom")
	if line := `sparkrig_check_status{host="spark-02",check="net.tcp-buffers",subject="net.ipv4.tcp_rmem"} 3`; err != nil || !strings.Contains(string(prom), line+"\n") {
		t.Errorf("spark-02's textfile lacks %q: %v\n%s", line, err, prom)
	}
	if _, err := r.Host("spark-02").Exec(ctx, "sysctl", "-w", "net.ipv4.tcp_rmem=4096 131072 33554432"); err != nil {
		t.Fatal(err)
	}
	waitFor("spark-02 resumed by the health check", func() bool { return !state("spark-02").Drained() })
	if n := state("spark-01"); n.Drained() {
		t.Errorf("the healthy node was drained: %+v", n)
	}
}
