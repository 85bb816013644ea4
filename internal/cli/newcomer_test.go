package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
)

// The contradictions a new user met with the repository's own snapshots,
// one test each: doctor, fix --plan and bench --dry-run now give one answer.

func snapshotArgs(names ...string) []string {
	var args []string
	for _, n := range names {
		args = append(args, "--snapshot", nodeSnapshot(n))
	}
	return args
}

// doctorJSON audits the snapshots and returns the report and the exit status.
func doctorJSON(t *testing.T, names ...string) (report.Report, int) {
	t.Helper()
	code, out, errOut := runMain(t, append([]string{"doctor", "--format", "json"}, snapshotArgs(names...)...)...)
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor JSON: %v\n%s", err, errOut)
	}
	return r, code
}

// findingOf is the first warn or fail finding of check id.
func findingOf(r report.Report, id string) (report.Finding, bool) {
	var got report.Finding
	found := false
	each(&r, func(f report.Finding) {
		if f.ID == id && !found && (f.Severity == report.Warn || f.Severity == report.Fail) {
			got, found = f, true
		}
	})
	return got, found
}

// Files right, live state wrong: the change is activating them.
func TestFixPlansActivationForLiveState(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	for _, c := range []struct{ node, finding, why string }{
		{"spark-twin-down", "spark.twin-down", "enP2p1s0f1np1 is down"},
		{"spark-mtu-reset-1500", "spark.mtu-not-applied", "enp1s0f1np1 runs MTU 1500, its file says 9000; enP2p1s0f1np1 runs MTU 1500, its file says 9000"},
	} {
		r, dcode := doctorJSON(t, c.node, "spark-healthy-peer")
		code, out, _ := runMain(t, append([]string{"fix", "--plan"}, snapshotArgs(c.node, "spark-healthy-peer")...)...)
		if code != dcode || dcode != ExitCritical && dcode != ExitWarning {
			t.Errorf("%s: fix --plan exit %d, doctor %d", c.node, code, dcode)
		}
		if !strings.Contains(out, "activate: netplan apply (the files are right; "+c.why+")") || strings.Contains(out, "nothing to change") {
			t.Errorf("%s: fix --plan plans no activation:\n%s", c.node, out)
		}
		f, ok := findingOf(r, c.finding)
		if !ok || f.Remedy == nil || f.Remedy.Kind != report.RemedyChange || len(f.Remedy.Changes) != 1 ||
			f.Remedy.Changes[0] != (report.Change{Host: "spark1", Action: "netplan apply"}) {
			t.Errorf("%s: the doctor's remedy is not the activation: %+v", c.finding, f.Remedy)
		}
	}
}

// What fix cannot change is listed with its manual remedy, and the exit
// status is the doctor's, never "nothing to change" and 0.
func TestFixPlanListsWhatOnlyAPersonCanDo(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	for _, c := range []struct{ node, finding string }{
		{"spark-pcie-x2", "spark.pcie-width"},
		{"spark-nccl-2.27", "nccl.version"},
		{"spark-link-100g", "spark.link-speed"},
		{"spark-cma-0", "spark.cma"},
	} {
		_, dcode := doctorJSON(t, c.node, "spark-healthy-peer")
		code, out, _ := runMain(t, append([]string{"fix", "--plan"}, snapshotArgs(c.node, "spark-healthy-peer")...)...)
		if code != dcode || code == ExitOK {
			t.Errorf("%s: fix --plan exit %d, doctor %d", c.node, code, dcode)
		}
		if strings.Contains(out, "\nnothing to change\n") || !strings.Contains(out, "each needs a person:") || !strings.Contains(out, c.finding) {
			t.Errorf("%s: fix --plan does not list %s for a person:\n%s", c.node, c.finding, out)
		}
	}
}

// The NCCL the remedy builds is the playbook's (past the known aarch64
// deadlock, which the known-issues data would otherwise rule out), and kho=off
// is only advised for the kernels it applies to.
func TestRemediesFollowKnownIssues(t *testing.T) {
	r, _ := doctorJSON(t, "spark-nccl-2.27")
	f, ok := findingOf(r, "nccl.version")
	if !ok || f.Remedy == nil || !strings.Contains(f.Remedy.Steps[0].Text, "git clone -b v"+expect.SparkNCCL+"-1 ") ||
		!strings.Contains(f.Remedy.Steps[0].Text, "(the release NVIDIA's DGX Spark NCCL playbook builds)") {
		t.Errorf("nccl.version remedy: %+v", f.Remedy)
	}
	r, _ = doctorJSON(t, "spark-cma-0") // kernel 6.11.0-1016-nvidia
	f, ok = findingOf(r, "spark.cma")
	if !ok || f.Remedy == nil || strings.Contains(f.Remedy.Steps[0].Text, "kho=off") || f.Remedy.Steps[0].Action != report.ActionInspect {
		t.Errorf("spark.cma on a 6.11 kernel: %+v", f.Remedy)
	}
}

// NCCL_SOCKET_IFNAME=eth0 in the environment: nccl.conf would not override
// it, so fix does not claim it; the doctor names the cluster's value, and
// bench asks nothing of the peer whose own value is valid.
func TestSocketIfnameOneAnswer(t *testing.T) {
	t.Setenv("COLUMNS", "400")
	r, _ := doctorJSON(t, "spark-socket-ifname-eth0", "spark-healthy-peer")
	f, ok := findingOf(r, "nccl.socket-ifname")
	if !ok || f.Remedy == nil || f.Remedy.Kind != report.RemedyManual ||
		!strings.HasPrefix(f.Remedy.Steps[0].Text, "set NCCL_SOCKET_IFNAME=enp1s0f1np1 in the environment jobs on spark1 start with") {
		t.Errorf("pair doctor remedy: %+v", f.Remedy)
	}
	_, out, _ := runMain(t, append([]string{"fix", "--plan"}, snapshotArgs("spark-socket-ifname-eth0", "spark-healthy-peer")...)...)
	if strings.Contains(out, "+NCCL_SOCKET_IFNAME") || !strings.Contains(out, "set NCCL_SOCKET_IFNAME=enp1s0f1np1 in the environment") {
		t.Errorf("fix --plan writes nccl.conf or lacks the doctor's remedy:\n%s", out)
	}
	_, out, _ = runMain(t, "bench", "--dry-run", "--from-snapshot", nodeSnapshot("spark-socket-ifname-eth0"), "--from-snapshot", nodeSnapshot("spark-healthy-peer"))
	if !strings.Contains(out, "spark2: the environment sets NCCL_SOCKET_IFNAME=enP7s7, which names what the node has;") ||
		strings.Contains(out, "set NCCL_SOCKET_IFNAME=enp1s0f1np1 in the environment (or remove it)") {
		t.Errorf("bench --dry-run notes:\n%s", out)
	}
}

// Two snapshots of one node: each is audited, the cluster counts one node,
// and fix plans (no "listed twice" refusal).
func TestSameNodeTwice(t *testing.T) {
	r, code := doctorJSON(t, "spark-healthy", "spark-healthy")
	if code != ExitOK || r.Cluster != nil || len(r.Hosts) != 2 || r.Hosts[1].SameAs == "" {
		t.Errorf("doctor exit %d, cluster %v, hosts %d, same_as %q", code, r.Cluster != nil, len(r.Hosts), r.Hosts[1].SameAs)
	}
	code, out, errOut := runMain(t, append([]string{"fix", "--plan"}, snapshotArgs("spark-healthy", "spark-healthy")...)...)
	if code != ExitOK || !strings.HasSuffix(out, "\nnothing to change\n") {
		t.Errorf("fix --plan exit %d\n%s%s", code, out, errOut)
	}
}
