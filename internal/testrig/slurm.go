package testrig

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Slurm is a Slurm cluster on a rig: Debian's slurmctld on this machine,
// listening on the rig's management bridge, and a slurmd on every host (its
// own name, its private /etc, /var, /run and /tmp, slurm.conf in its own
// /etc/slurm), all authenticated by munged with one throw-away key. Nothing is installed or written outside
// the cluster's directory and the hosts' private trees.
type Slurm struct {
	// Conf is the slurm.conf path; clients on this machine and on the hosts
	// find it through SLURM_CONF (Env).
	Conf string
	Dir  string
	// Env is SLURM_CONF=Conf, to add to a client's environment.
	Env string
}

// SlurmUnsupported says why a Slurm cluster cannot run here ("" when it can).
func SlurmUnsupported() string {
	for _, p := range []string{"slurmctld", "slurmd", "munged", "scontrol", "srun", "salloc", "sinfo"} {
		if _, err := exec.LookPath(p); err != nil {
			return p + " not found (install Debian's slurm-wlm and munge)"
		}
	}
	return ""
}

// SlurmOptions are slurm.conf settings a test chooses.
type SlurmOptions struct {
	// HealthCheckProgram, when set, runs on each node as slurmd starts and
	// then every HealthCheckInterval seconds (0: only at the start).
	HealthCheckProgram  string
	HealthCheckInterval int
}

// StartSlurm starts the cluster, with every host a node of one partition,
// and waits until every node is idle. It skips the test when Slurm is not
// installed. The controller and munged stop when the test ends; the hosts'
// daemons end with the rig.
func (r *Rig) StartSlurm(t testing.TB, o SlurmOptions) *Slurm {
	t.Helper()
	if reason := SlurmUnsupported(); reason != "" {
		t.Skip("testrig: " + reason)
	}
	dir, err := os.MkdirTemp("", "sparkrig-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // munged wants its socket's directory searchable
	s := &Slurm{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	s.Env = "SLURM_CONF=" + s.Conf
	key := make([]byte, 1024)
	rand.Read(key)
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatalf("testrig: slurm: %v", err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600))
	ctlPort, err := freePort()
	must(err)
	dPort, err := freePort()
	must(err)
	self, err := os.Hostname()
	must(err)
	self, _, _ = strings.Cut(self, ".")
	must(os.WriteFile(s.Conf, []byte(r.slurmConf(dir, self, ctlPort, dPort, o)), 0o644))
	must(os.WriteFile(filepath.Join(dir, "cgroup.conf"), []byte("CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n"), 0o644))

	munged := []string{"munged", "--force", "--key-file=" + filepath.Join(dir, "munge.key"), "--socket=" + filepath.Join(dir, "munge.sock"),
		"--pid-file=" + filepath.Join(dir, "munged.pid"), "--seed-file=" + filepath.Join(dir, "munged.seed"), "--log-file=" + filepath.Join(dir, "munged.log")}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := func(argv ...string) {
		if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("testrig: slurm: %s: %v: %s", argv[0], err, out)
		}
	}
	run(munged...)
	t.Cleanup(func() { killPidfile(filepath.Join(dir, "munged.pid")) })
	run("slurmctld", "-i", "-f", s.Conf)
	t.Cleanup(func() {
		killPidfile(filepath.Join(dir, "slurmctld.pid"))
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "slurmctld.log")); err == nil {
				t.Logf("slurmctld.log:\n%s", lastLines(b, 40))
			}
		}
	})
	for _, h := range r.Hosts {
		// slurmd wants a cgroup file system; the host gets an empty named
		// hierarchy of its own, in its private mount namespace.
		// The host's own /etc/slurm holds the configuration, so Slurm's
		// clients there (a health check's scontrol) need no SLURM_CONF.
		script := fmt.Sprintf(`mkdir -p /etc/slurm && cp %s %s /etc/slurm/
mountpoint -q /sys/fs/cgroup || mount -t tmpfs sparkrig-cgroup /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/systemd %s
mountpoint -q /sys/fs/cgroup/systemd || mount -t cgroup -o none,name=sparkrig-%s sparkrig-%s /sys/fs/cgroup/systemd
%s
slurmd -f %s`, s.Conf, filepath.Join(dir, "cgroup.conf"), filepath.Join(dir, "spool-"+h.Name), r.ID, r.ID, strings.Join(munged, " "), s.Conf)
		if out, err := h.Exec(ctx, "sh", "-ec", script); err != nil {
			t.Fatalf("testrig: slurm: start slurmd on %s: %v: %s", h.Name, err, out)
		}
	}
	for {
		out, _ := s.Command(ctx, "sinfo", "-h", "-N", "-o", "%N %T").CombinedOutput()
		idle := strings.Count(string(out), " idle\n")
		if idle == len(r.Hosts) {
			return s
		}
		if ctx.Err() != nil {
			t.Fatalf("testrig: slurm: nodes not idle within 60 s:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *Rig) slurmConf(dir, self string, ctlPort, dPort int, o SlurmOptions) string {
	bridge := r.Hosts[0].Addr[:strings.LastIndexByte(r.Hosts[0].Addr, '.')] + ".1"
	var b strings.Builder
	fmt.Fprintf(&b, `ClusterName=sparkrig%s
SlurmctldHost=%s(%s)
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
ReturnToService=2
MpiDefault=none
`, r.ID, self, bridge, ctlPort, dPort, filepath.Join(dir, "munge.sock"), dir, filepath.Join(dir, "spool-%n"),
		filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "slurmd.pid"), filepath.Join(dir, "slurmctld.log"), filepath.Join(dir, "slurmd.log"))
	if o.HealthCheckProgram != "" {
		fmt.Fprintf(&b, "HealthCheckProgram=%s\nHealthCheckInterval=%d\nHealthCheckNodeState=ANY\n", o.HealthCheckProgram, o.HealthCheckInterval)
	}
	var names []string
	for _, h := range r.Hosts {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=%s CPUs=1 RealMemory=1 State=UNKNOWN\n", h.Name, h.Addr)
		names = append(names, h.Name)
	}
	fmt.Fprintf(&b, "PartitionName=rig Nodes=%s Default=YES MaxTime=INFINITE State=UP\n", strings.Join(names, ","))
	return b.String()
}

// Command is a Slurm client command run on this machine against the cluster.
func (s *Slurm) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), s.Env)
	cmd.Dir = s.Dir
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func killPidfile(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
