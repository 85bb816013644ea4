package cli

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/shell"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// fixRig is two Sparks on one cable, port 1 to port 1, unconfigured.
func fixRig(t *testing.T) *testrig.Rig {
	host := func(name string) testrig.HostSpec {
		return testrig.HostSpec{Name: name,
			NetDevs: map[string]testrig.NetDev{"enp1s0f1np1": {}, "enP2p1s0f1np1": {}, "enp1s0f0np0": {}, "enP2p1s0f0np0": {}},
			Files:   map[string]string{"/etc/dgx-release": "DGX_NAME=\"DGX Spark\"\n", "/var/backups/.sparkrig-rig": ""},
		}
	}
	return testrig.New(t, testrig.Config{
		Hosts: []testrig.HostSpec{host("spark-01"), host("spark-02")},
		Links: testrig.Cable("spark-01", 1, "spark-02", 1),
	})
}

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestFixPlanAndRollbackOnRig runs `sparkrig fix` end to end against two
// namespace hosts over SSH: plan (exit 1, diff, files under -o), detected
// topology, rollback with nothing to restore.
func TestFixPlanAndRollbackOnRig(t *testing.T) {
	t.Parallel()
	r := fixRig(t)
	dir := t.TempDir()
	// The rig's hosts log in as root, so fix (which captures as root) and
	// the doctor read the same evidence: one verdict, a problem to fix.
	dcode, _, _ := runMain(t, "doctor", "--no-ping", "--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig)
	code, out, errOut := runMain(t, "fix", "--plan", "--launcher-env", "--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig, "-o", dir)
	if code != dcode || code == ExitOK {
		t.Fatalf("plan exit %d, the doctor's %d (want one problem status)\nstdout:\n%s\nstderr:\n%s", code, dcode, out, errOut)
	}
	if !strings.Contains(errOut, "topology two-nodes-one-cable (2 nodes, 0 with both QSFP ports up, 2 with one)") {
		t.Errorf("stderr lacks the detected topology:\n%s", errOut)
	}
	for _, want := range []string{
		"== spark-02\n   enp1s0f1np1    rocep1s0f1    192.168.100.11/24  mtu 9000 -> spark-01:enp1s0f1np1\n",
		"   untouched: enP7s7\n",
		"+++ b/etc/netplan/40-cx7.yaml\n",
		"+NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "spark-01/etc/netplan/40-cx7.yaml"))
	if err != nil || !strings.Contains(string(b), "      addresses: [192.168.101.10/24]\n") {
		t.Errorf("-o file: %v\n%s", err, b)
	}
	code, out, _ = runMain(t, "fix", "--rollback", "--hosts", "spark-01", "--ssh-config", r.SSHConfig)
	if code != ExitUnknown || !strings.Contains(out, "spark-01: not rolled back: exit 6: no backup to restore under /var/backups/sparkrig") {
		t.Errorf("rollback with no backup: exit %d\n%s", code, out)
	}
}

func TestFixBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fix"}, "sparkrig: fix: name the nodes with --hosts, --hostfile or --snapshot\n"},
		{[]string{"fix", "--plan", "--apply", "--hosts", "a"}, "sparkrig: fix: choose one of --plan, --apply, --rollback\n"},
		{[]string{"fix", "--apply", "--snapshot", "x.tar.gz"}, "sparkrig: fix: --apply and --rollback work over SSH: give --hosts\n"},
		{[]string{"fix", "--snapshot", "/nonexistent.tar.gz"}, "sparkrig: fix: /nonexistent.tar.gz: no such file or directory\n"},
		{[]string{"fix", "--apply", "--hosts", "a", "--deadman", "500ms"}, "sparkrig: fix: --deadman 500ms: want 10s or more\n"},
		{[]string{"fix", "--apply", "--hosts", "a", "--deadman", "-5s"}, "sparkrig: fix: --deadman -5s: want 10s or more\n"},
		{[]string{"fix", "--plan", "--hosts", "a", "--socket-ifname", "eth0;reboot"}, "sparkrig: fix: --socket-ifname \"eth0;reboot\": want interface names (letters, digits, . _ : @ -), comma-separated\n"},
		// Nothing listens on port 1: the host is named once, not twice.
		{[]string{"fix", "--hosts", "127.0.0.1:1", "--ssh-config", os.DevNull}, "sparkrig: fix: cannot read every node, so no plan:\n  127.0.0.1:1: unreachable: connection refused\n"},
	}
	for _, tt := range tests {
		code, _, errOut := runMain(t, tt.args...)
		if code != ExitUnknown || errOut != tt.want {
			t.Errorf("%v: exit %d, stderr %q; want 3, %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestFixApplyOnRig applies for real on two namespace hosts (activation with
// ip, since no netplan renderer runs in a namespace), plans again (nothing fix
// can change, the doctor's exit status) and rolls both back.
func TestFixApplyOnRig(t *testing.T) {
	t.Parallel()
	r := fixRig(t)
	ssh := []string{"--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig}
	code, out, errOut := runMain(t, append([]string{"fix", "--apply", "--activate", "ip", "--deadman", "20s"}, ssh...)...)
	// The doctor flags no kernel parameter on these hosts, so only the rails change.
	if code != ExitOK || !strings.Contains(out, "spark-01: applied (backup /var/backups/sparkrig/") ||
		!strings.Contains(out, "spark-02: applied") || strings.Contains(out, "60-sparkrig.conf") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := rigOut(t, r, "spark-02", "ip", "-o", "-4", "addr", "show", "dev", "enP2p1s0f1np1"); !strings.Contains(got, "192.168.101.11/24") {
		t.Errorf("spark-02 enP2p1s0f1np1: %s", got)
	}
	// What is left is what only a person can do on these stand-in hosts
	// (no RDMA devices, Debian rather than DGX OS): nothing fix can change,
	// and the plan's exit status is the doctor's.
	dcode, _, _ := runMain(t, append([]string{"doctor", "--no-ping"}, ssh...)...)
	code, out, _ = runMain(t, append([]string{"fix", "--plan"}, ssh...)...)
	if code != dcode || !strings.HasSuffix(out, "\nnothing fix can change\n") || strings.Contains(out, "+++ b/") {
		t.Errorf("plan after apply: exit %d (doctor %d)\n%s", code, dcode, out)
	}
	code, out, _ = runMain(t, append([]string{"fix", "--rollback"}, ssh...)...)
	if code != ExitOK || strings.Count(out, ": restored /var/backups/sparkrig/") != 2 {
		t.Errorf("rollback: exit %d\n%s", code, out)
	}
	if got := rigOut(t, r, "spark-02", "sh", "-c", "cat /sys/class/net/enP2p1s0f1np1/mtu; ls /etc/netplan"); got != "1500\n" {
		t.Errorf("after rollback: %q, want MTU 1500 and no netplan file", got)
	}
}

func rigOut(t *testing.T, r *testrig.Rig, host string, argv ...string) string {
	t.Helper()
	out, err := r.Host(host).Exec(context.Background(), argv...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestFixPlanFromSnapshots captures both rig hosts with the doctor's capture
// script, then plans offline from the snapshots alone.
func TestFixPlanFromSnapshots(t *testing.T) {
	t.Parallel()
	r := fixRig(t)
	d, err := remote.NewDialer(remote.Options{ConfigFile: r.SSHConfig, Home: r.Dir})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var args []string
	for _, h := range r.Names() {
		b, err := fix.Target{Runner: &runner.SSH{Dialer: d, Fresh: true}, Host: h}.Run(context.Background(), "exec sh -c "+shell.Quote(capture.Script())+" </dev/null")
		if err != nil {
			t.Fatal(err)
		}
		s, err := capture.ReadScriptOutput(bytes.NewReader(b), capture.ScriptMeta{Host: h})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h+".tar.gz")
		if err := s.Write(p); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--snapshot", p)
	}
	code, out, errOut := runMain(t, append([]string{"fix", "--plan", "--topology", "one-cable", "--subnets", "10.77.0.0/24,10.77.1.0/24"}, args...)...)
	if code != ExitWarning {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"== spark-01\n   enp1s0f1np1    rocep1s0f1    10.77.0.10/24      mtu 9000 -> spark-02:enp1s0f1np1\n",
		"+      addresses: [10.77.1.11/24]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}
