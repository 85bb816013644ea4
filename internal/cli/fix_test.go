package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	r := fixRig(t)
	dir := t.TempDir()
	code, out, errOut := runMain(t, "fix", "--plan", "--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig, "-o", dir)
	if code != ExitWarning {
		t.Fatalf("plan exit %d, want %d (changes proposed)\nstdout:\n%s\nstderr:\n%s", code, ExitWarning, out, errOut)
	}
	if !strings.Contains(errOut, "topology one-cable (2 nodes, 0 with both QSFP ports up, 2 with one)") {
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
	if err != nil || !strings.Contains(string(b), "        - 192.168.101.10/24\n") {
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
		{[]string{"fix"}, "sparkrig: fix: name the nodes with --hosts or --snapshot\n"},
		{[]string{"fix", "--plan", "--apply", "--hosts", "a"}, "sparkrig: fix: choose one of --plan, --apply, --rollback\n"},
		{[]string{"fix", "--apply", "--snapshot", "x.tar.gz"}, "sparkrig: fix: --apply and --rollback work over SSH: give --hosts\n"},
		{[]string{"fix", "--snapshot", "/nonexistent.tar.gz"}, "sparkrig: fix: /nonexistent.tar.gz: stat /nonexistent.tar.gz: no such file or directory\n"},
	}
	for _, tt := range tests {
		code, _, errOut := runMain(t, tt.args...)
		if code != ExitUnknown || errOut != tt.want {
			t.Errorf("%v: exit %d, stderr %q; want 3, %q", tt.args, code, errOut, tt.want)
		}
	}
}
