package fix

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// rigPair is two Sparks on one cable (port 1 to port 1), their twins at MTU
// 1500 without addresses, as a pair looks before anyone configured it. /var
// gets an overlay (by laying a file under it) so backups stay in the host.
func rigPair(t *testing.T) (*testrig.Rig, map[string]Target) {
	t.Helper()
	host := func(name string) testrig.HostSpec {
		return testrig.HostSpec{Name: name,
			NetDevs: map[string]testrig.NetDev{"enp1s0f1np1": {}, "enP2p1s0f1np1": {}, "enp1s0f0np0": {}, "enP2p1s0f0np0": {}},
			Files:   map[string]string{"/etc/dgx-release": "DGX_NAME=\"DGX Spark\"\n"},
		}
	}
	r := testrig.New(t, testrig.Config{
		Hosts: []testrig.HostSpec{host("spark-01"), host("spark-02")},
		Links: testrig.Cable("spark-01", 1, "spark-02", 1),
	})
	d, err := remote.NewDialer(remote.Options{ConfigFile: r.SSHConfig, Home: r.Dir, ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]Target{}
	for _, n := range r.Names() {
		ts[n] = Target{Runner: &runner.SSH{Dialer: d, Fresh: true}, Host: n}
	}
	return r, ts
}

// planLive observes every host over SSH and plans from what it saw.
func planLive(t *testing.T, r *testrig.Rig, ts map[string]Target, opt Options) *Plan {
	t.Helper()
	var nodes []Node
	for _, n := range r.Names() {
		o, err := observe(context.Background(), ts[n], 60*time.Second)
		if err != nil {
			t.Fatalf("observe %s: %v", n, err)
		}
		nodes = append(nodes, Node{Facts: o.Facts(n), Current: o.Files, SSHIface: o.SSHIface})
	}
	p, err := Build(nodes, opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

// rigApplyOptions leave the controller time to confirm even on a loaded
// machine; the dead-man test shortens the timer itself.
func rigApplyOptions(stamp string) ApplyOptions {
	return ApplyOptions{Activation: ActivateIP, DeadMan: 60 * time.Second, Settle: 500 * time.Millisecond, Probe: 10 * time.Second, Stamp: stamp}
}

func rigExec(t *testing.T, r *testrig.Rig, host string, argv ...string) string {
	t.Helper()
	out, err := r.Host(host).Exec(context.Background(), argv...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestRigApplyRollback applies a one-cable plan for real on two namespace
// hosts over SSH, checks jumbo frames pass on both rails, plans again (no
// change), and rolls one host back.
func TestRigApplyRollback(t *testing.T) {
	t.Parallel()
	r, ts := rigPair(t)
	ctx := context.Background()
	p := planLive(t, r, ts, Options{Topology: OneCable, Port: -1})
	for _, h := range p.Hosts {
		if !slicesEqual(h.Protected, []string{"enP7s7"}) {
			t.Errorf("%s: protected %v, want [enP7s7] (management and SSH interface)", h.Host, h.Protected)
		}
		out := Apply(ctx, h, ts[h.Host], rigApplyOptions("20261122T000001Z"))
		// Only what the doctor flags is changed, and all of it takes.
		want := Outcome{Host: h.Host, Status: Applied, Backup: "/var/backups/sparkrig/20261122T000001Z"}
		if d := cmp.Diff(want, out, cmpIgnoreBefore); d != "" {
			t.Log(rigExec(t, r, h.Host, "sh", "-c", "cd "+out.Backup+" && stat -c '%n %y' * && cat deadman.sh && date"))
			t.Fatalf("Apply %s (-want +got):\n%s", h.Host, d)
		}
	}
	// The rails carry jumbo frames unfragmented, on both subnets.
	for _, dst := range []string{"192.168.100.11", "192.168.101.11"} {
		rigExec(t, r, "spark-01", "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "8972", dst)
	}
	if got := rigExec(t, r, "spark-01", "stat", "-c", "%a", NetplanPath); got != "600\n" {
		t.Errorf("netplan file mode %q, want 600", got)
	}
	// The rig hosts' socket buffers satisfy the doctor, so fix leaves them.
	if got := rigExec(t, r, "spark-02", "sh", "-c", "test -e "+SysctlPath+" && echo written || echo absent"); got != "absent\n" {
		t.Errorf("%s on spark-02: %s, want absent (nothing flagged)", SysctlPath, got)
	}
	// Planning again shows nothing to change.
	for _, h := range planLive(t, r, ts, Options{Topology: OneCable, Port: -1}).Hosts {
		for _, c := range h.Files {
			if c.Changed() {
				t.Errorf("%s %s changes again after apply:\n%s", h.Host, c.Path, Unified("a", "b", c.Old, c.New))
			}
		}
	}
	// The first plan is stale now (it expected no files): staging refuses it.
	stale := Apply(ctx, p.Hosts[0], ts["spark-01"], rigApplyOptions("20261122T000009Z"))
	if stale.Status != Failed || !strings.Contains(stale.Detail, "/etc/netplan/40-cx7.yaml appeared since the plan was made; plan again") {
		t.Errorf("stale plan: %+v", stale)
	}
	// Roll spark-01 back: files gone, rails and sysctls as before.
	dir, err := Rollback(ctx, ts["spark-01"])
	if err != nil || dir != "/var/backups/sparkrig/20261122T000001Z" {
		t.Fatalf("Rollback = %q, %v", dir, err)
	}
	after, err := observe(ctx, ts["spark-01"], 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Files) != 0 {
		t.Errorf("files left after rollback: %v", keys(after.Files))
	}
	l, _ := after.Link("enp1s0f1np1")
	if l.MTU != 1500 || len(l.Addrs) != 0 {
		t.Errorf("enp1s0f1np1 after rollback: mtu %d addrs %v, want 1500 and none", l.MTU, l.Addrs)
	}
	if got := after.Sysctls["net.ipv4.tcp_rmem"]; got != "4096 131072 33554432" && got != "4096 131072 6291456" {
		t.Errorf("tcp_rmem after rollback = %q, want the namespace default", got)
	}
	if _, err := Rollback(ctx, ts["spark-01"]); err == nil || !strings.Contains(err.Error(), "no backup to restore") {
		t.Errorf("second rollback: %v, want 'no backup to restore'", err)
	}
}

var cmpIgnoreBefore = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Before" }, cmp.Ignore())

// TestRigDeadManRestores plants a change that cuts the host off (a rail
// address equal to the controller's own): the controller loses the host,
// and the host's dead-man timer restores the backup by itself.
func TestRigDeadManRestores(t *testing.T) {
	t.Parallel()
	r, ts := rigPair(t)
	ctx := context.Background()
	p := planLive(t, r, ts, Options{Topology: OneCable, Port: -1})
	hp := p.Hosts[1]
	mgmt := r.Host("spark-02").Addr
	controller := mgmt[:strings.LastIndex(mgmt, ".")] + ".1"
	hp.Rails[0].Addr = controller + "/32"
	start := time.Now()
	opt := rigApplyOptions("20261122T000002Z")
	opt.DeadMan, opt.Probe = 10*time.Second, 3*time.Second
	out := Apply(ctx, hp, ts["spark-02"], opt)
	if out.Status != RolledBackTimer {
		t.Fatalf("Apply = %+v, want status %s", out, RolledBackTimer)
	}
	if el := time.Since(start); el < 10*time.Second {
		t.Errorf("restored after %s, before the 10 s timer could fire", el)
	}
	o, err := observe(ctx, ts["spark-02"], 60*time.Second)
	if err != nil {
		t.Fatalf("host does not answer after the timer: %v", err)
	}
	l, _ := o.Link("enp1s0f1np1")
	if l.MTU != 1500 || len(l.Addrs) != 0 || len(o.Files) != 0 {
		t.Errorf("after the timer: mtu %d addrs %v files %v, want 1500, none, none", l.MTU, l.Addrs, keys(o.Files))
	}
	if got := rigExec(t, r, "spark-02", "cat", "/var/backups/sparkrig/20261122T000002Z/activate.rc"); got != "0\n" {
		t.Errorf("activate.rc = %q: the planted change should have applied cleanly", got)
	}
}

// TestRigRefusesSSHInterface checks the host-side guard: a plan that would
// reconfigure the interface the SSH session arrives on is refused before any
// backup or write, both by Apply and by the staging script on its own.
func TestRigRefusesSSHInterface(t *testing.T) {
	t.Parallel()
	r, ts := rigPair(t)
	ctx := context.Background()
	p := planLive(t, r, ts, Options{Topology: OneCable, Port: -1})
	hp := p.Hosts[0]
	hp.Rails = append(hp.Rails, Rail{NetDev: "enP7s7", Addr: "192.168.102.10/24", MTU: 9000})
	out := Apply(ctx, hp, ts["spark-01"], rigApplyOptions("20261122T000003Z"))
	if out.Status != Refused || out.Detail != "the SSH session arrives on enP7s7, which the plan reconfigures" {
		t.Errorf("Apply = %+v, want refused", out)
	}
	_, err := ts["spark-01"].Run(ctx, stageScript(hp, "20261122T000004Z", ActivateIP, time.Minute))
	var se *runner.ExitError
	if !errors.As(err, &se) || se.Exit != 3 || !strings.Contains(se.Stderr, "refused: this SSH session arrives on enP7s7") {
		t.Errorf("stage script: %v, want exit 3 refused", err)
	}
	if got := rigExec(t, r, "spark-01", "sh", "-c", "ls /var/backups/sparkrig 2>&1; ip -o -4 addr show dev enP7s7 | wc -l"); !strings.Contains(got, "No such file") || !strings.HasSuffix(got, "1\n") {
		t.Errorf("after refusal: %q, want no backups and enP7s7 untouched", got)
	}
	// Planning itself refuses when it knows the SSH interface is a rail.
	n := Node{Facts: sparkNode(t, "spark-01", verbatim(t, "ibdev2netdev-port1-up.txt")[0]), SSHIface: "enp1s0f1np1"}
	m := Node{Facts: sparkNode(t, "spark-02", verbatim(t, "ibdev2netdev-port1-up.txt")[0])}
	if _, err := Build([]Node{n, m}, Options{Topology: OneCable, Port: -1}); !errors.Is(err, ErrRefused) {
		t.Errorf("Build: %v, want ErrRefused", err)
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRigChecksWorseRollsBack plants a plan that applies cleanly but leaves
// the twins of the cabled port at different MTUs: the doctor's check-back
// finds a new problem and the controller restores at once.
func TestRigChecksWorseRollsBack(t *testing.T) {
	t.Parallel()
	r, ts := rigPair(t)
	ctx := context.Background()
	hp := planLive(t, r, ts, Options{Topology: OneCable, Port: -1, LauncherEnv: true}).Hosts[0]
	hp.Rails[1].MTU = 4000
	out := Apply(ctx, hp, ts["spark-01"], rigApplyOptions("20261122T000005Z"))
	// The netplan written sets 9000; the link was brought up at 4000.
	want := "checks got worse: doctor: spark.mtu-not-applied (enP2p1s0f1np1): MTU 4000 running; /etc/netplan/40-cx7.yaml sets 9000"
	if out.Status != RolledBack || out.Detail != want {
		t.Fatalf("Apply = %+v\nwant status %s, detail %q", out, RolledBack, want)
	}
	o, err := observe(ctx, ts["spark-01"], 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"enp1s0f1np1", "enP2p1s0f1np1"} {
		if l, _ := o.Link(dev); l.MTU != 1500 || len(l.Addrs) != 0 {
			t.Errorf("%s after rollback: mtu %d addrs %v", dev, l.MTU, l.Addrs)
		}
	}
	if len(o.Files) != 0 {
		t.Errorf("files left: %v", keys(o.Files))
	}
}

// TestRigRing applies the three-node ring (N1.P0–N2.P1, N2.P0–N3.P1,
// N3.P0–N1.P1) for real and sends jumbo frames unfragmented over all six
// subnets.
func TestRigRing(t *testing.T) {
	t.Parallel()
	all := map[string]testrig.NetDev{"enp1s0f0np0": {}, "enP2p1s0f0np0": {}, "enp1s0f1np1": {}, "enP2p1s0f1np1": {}}
	var hosts []testrig.HostSpec
	for _, n := range []string{"spark-01", "spark-02", "spark-03"} {
		hosts = append(hosts, testrig.HostSpec{Name: n, NetDevs: all, Files: map[string]string{"/etc/dgx-release": "DGX_NAME=\"DGX Spark\"\n", "/var/backups/.sparkrig-rig": ""}})
	}
	var links []testrig.Link
	links = append(links, testrig.Cable("spark-01", 0, "spark-02", 1)...)
	links = append(links, testrig.Cable("spark-02", 0, "spark-03", 1)...)
	links = append(links, testrig.Cable("spark-03", 0, "spark-01", 1)...)
	r := testrig.New(t, testrig.Config{Hosts: hosts, Links: links})
	d, err := remote.NewDialer(remote.Options{ConfigFile: r.SSHConfig, Home: r.Dir, ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]Target{}
	for _, n := range r.Names() {
		ts[n] = Target{Runner: &runner.SSH{Dialer: d, Fresh: true}, Host: n}
	}
	p := planLive(t, r, ts, Options{Topology: Ring, Port: -1})
	for _, h := range p.Hosts {
		if out := Apply(context.Background(), h, ts[h.Host], rigApplyOptions("20261122T000007Z")); out.Status != Applied {
			t.Fatalf("Apply %s: %+v", h.Host, out)
		}
	}
	pings := 0
	for _, h := range p.Hosts {
		for _, rl := range h.Rails {
			peer := strings.Split(rl.Peers[0], ":")
			for _, ph := range p.Hosts {
				if ph.Host != peer[0] {
					continue
				}
				for _, pr := range ph.Rails {
					if pr.NetDev == peer[1] {
						dst := strings.Split(pr.Addr, "/")[0]
						rigExec(t, r, h.Host, "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "8972", "-I", rl.NetDev, dst)
						pings++
					}
				}
			}
		}
	}
	if pings != 12 {
		t.Errorf("%d rails pinged their peer, want 12 (3 nodes x 4 twins)", pings)
	}
}

// TestRigKeepsLinksAndCleansUp: a symlinked /etc/nccl.conf stays a link
// through apply and rollback (its target gets the new settings, then the old
// ones back), a directory apply created is gone after rollback, and a stage
// script cut off in transit changes nothing.
func TestRigKeepsLinksAndCleansUp(t *testing.T) {
	t.Parallel()
	r, ts := rigPair(t)
	ctx := context.Background()
	rigExec(t, r, "spark-01", "sh", "-c", "mkdir -p /etc/nccl.d && printf 'NCCL_SOCKET_IFNAME=eth0\\n' > /etc/nccl.d/site.conf && ln -s nccl.d/site.conf /etc/nccl.conf")
	hp := planLive(t, r, ts, Options{Topology: OneCable, Port: -1, LauncherEnv: true}).Hosts[0]
	var conf, env *Change
	for i := range hp.Files {
		switch hp.Files[i].Path {
		case NCCLConf:
			conf = &hp.Files[i]
		case EnvPath:
			env = &hp.Files[i]
		}
	}
	if conf == nil || !conf.Changed() || env == nil || !env.Changed() {
		t.Fatalf("the plan should change %s and write %s: %+v", NCCLConf, EnvPath, hp.Files)
	}

	script := stageScript(hp, "20261122T000007Z", ActivateIP, time.Minute)
	cut := script[:len(script)*2/3]
	if _, err := ts["spark-01"].Run(ctx, cut); err != nil {
		t.Logf("cut script: %v", err) // an unterminated function may be a syntax error: either way nothing ran
	}
	if got := rigExec(t, r, "spark-01", "sh", "-c", "ls /var/backups/sparkrig /etc/sparkrig 2>&1 | grep -c 'No such file'; cat /etc/nccl.conf"); got != "2\nNCCL_SOCKET_IFNAME=eth0\n" {
		t.Fatalf("after a cut stage script: %q, want no backup, no /etc/sparkrig, nccl.conf as it was", got)
	}

	if out := Apply(ctx, hp, ts["spark-01"], rigApplyOptions("20261122T000008Z")); out.Status != Applied {
		t.Fatalf("Apply = %+v", out)
	}
	if got := rigExec(t, r, "spark-01", "sh", "-c", "readlink /etc/nccl.conf; cat /etc/nccl.d/site.conf"); got != "nccl.d/site.conf\n"+string(conf.New) {
		t.Errorf("after apply: %q, want the link kept and its target rewritten to\n%s", got, conf.New)
	}
	if _, err := Rollback(ctx, ts["spark-01"]); err != nil {
		t.Fatal(err)
	}
	if got := rigExec(t, r, "spark-01", "sh", "-c", "readlink /etc/nccl.conf; cat /etc/nccl.conf; test -e /etc/sparkrig && echo present || echo gone"); got != "nccl.d/site.conf\nNCCL_SOCKET_IFNAME=eth0\ngone\n" {
		t.Errorf("after rollback: %q, want the link to the old content and /etc/sparkrig gone", got)
	}
}
