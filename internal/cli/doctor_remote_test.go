package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// These tests run the doctor over real SSH against rig hosts (network
// namespaces with sshd; see internal/testrig). They need root.

// rigDoctor runs `sparkrig doctor --format json` against the rig's hosts.
func rigDoctor(t *testing.T, r *testrig.Rig, extra ...string) (int, *report.Report, string) {
	t.Helper()
	args := append([]string{"doctor", "--format", "json", "--ssh-config", r.SSHConfig, "--host-timeout", "60s", "--hosts", strings.Join(r.Names(), ",")}, extra...)
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, no JSON report: %v\nstdout: %s\nstderr: %s", code, err, out.String(), errb.String())
	}
	return code, &rep, errb.String()
}

// clusterProblems lists "severity id host subject: observed" of cluster
// findings worse than info, sorted.
func clusterProblems(r *report.Report) []string {
	var out []string
	if r.Cluster == nil {
		return []string{"no cluster section"}
	}
	for _, f := range r.Cluster.Findings {
		if f.Severity.Rank() > report.Info.Rank() {
			out = append(out, fmt.Sprintf("%s %s %s %s: %s", f.Severity, f.ID, f.Host, f.Subject, f.Observed))
		}
	}
	sort.Strings(out)
	return out
}

func countID(r *report.Report, id string, sev report.Severity) int {
	n := 0
	for _, f := range r.Cluster.Findings {
		if f.ID == id && f.Severity == sev {
			n++
		}
	}
	return n
}

func sparkPair(t testing.TB, edit func(*testrig.Config)) *testrig.Rig {
	t.Helper()
	cfg, err := testrig.Sparks(2, "pair")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	return testrig.New(t, cfg)
}

func TestRigHealthyPair(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) { c.Hosts[0].RDMA, c.Hosts[1].RDMA = true, true })
	_, rep, _ := rigDoctor(t, r)
	if got := clusterProblems(rep); len(got) != 0 {
		t.Errorf("cluster problems on a healthy pair: %q", got)
	}
	if rep.Cluster.Topology != "two-nodes-one-cable" || len(rep.Cluster.Links) != 2 {
		t.Errorf("topology %s, links %+v", rep.Cluster.Topology, rep.Cluster.Links)
	}
	if n := countID(rep, "cluster.df-ping", report.OK); n != 4 {
		t.Errorf("%d passing DF pings, want 4 (2 rails × 2 directions)", n)
	}
	if a := rep.Cluster.Links[0].A; a.RDMADev != "rocep1s0f1" || a.Addr != "192.168.100.10/24" || a.MTU != 9000 || a.SpeedMbps != 200000 {
		t.Errorf("link end %+v", a)
	}
	for _, h := range rep.Hosts {
		if h.Status != report.HostAudited || h.Source != "ssh" {
			t.Errorf("%s: %s %s", h.Host, h.Status, h.Error)
		}
	}
}

func TestRigMTUMismatchCaughtByFactsAndPing(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) {
		c.Hosts[1].NetDevs["enp1s0f1np1"] = testrig.NetDev{MTU: 1500, Addrs: []string{"192.168.100.11/24"}}
	})
	code, rep, _ := rigDoctor(t, r)
	want := []string{
		"fail cluster.df-ping spark-01 enp1s0f1np1 → spark-02 192.168.100.11: 0/3 replies (100% loss) at 9000-byte frames; 1500-byte frames pass",
		"fail cluster.mtu-mismatch  spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1: spark-01 enp1s0f1np1 MTU 9000, spark-02 enp1s0f1np1 MTU 1500",
		"warn cluster.mtu-inconsistent  enp1s0f1np1: spark-01: 9000; spark-02: 1500",
	}
	if diff := cmp.Diff(want, clusterProblems(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if code != ExitCritical {
		t.Errorf("exit %d", code)
	}
	// The 1500 side's own pings fit its MTU and pass: the picture shows the direction.
	if n := countID(rep, "cluster.df-ping", report.OK); n != 3 {
		t.Errorf("%d passing DF pings, want 3", n)
	}

	// fix runs the same mesh: the DF ping's FAIL is the MTU change's to
	// resolve (on spark-02, the 1500 end), never left out of both lists.
	plan := fixAgreesWithDoctor(t, r, rep)
	ping := report.Key{ID: "cluster.df-ping", Host: "spark-01", Subject: "enp1s0f1np1 → spark-02 192.168.100.11"}
	if got := resolvedBy(plan, ping); !slices.Equal(got, []string{"spark-02 /etc/netplan/40-cx7.yaml"}) {
		t.Errorf("DF ping FAIL resolved by %q, want spark-02's netplan change", got)
	}
}

func TestRigTwinUnaddressedOnOneNode(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) {
		c.Hosts[1].NetDevs["enP2p1s0f1np1"] = testrig.NetDev{MTU: 9000}
	})
	_, rep, _ := rigDoctor(t, r)
	// The rig's nodes are not DGX Sparks: the unaddressed twin is a cluster
	// finding, as the degraded link it causes shows.
	want := []string{
		"warn cluster.link-degraded spark-02 enP2p1s0f1np1: spark-02 enP2p1s0f1np1 has no IPv4 address; link spark-01 enp1s0f1np1 ↔ spark-02 enp1s0f1np1 runs at half bandwidth",
		"warn cluster.rail-unpaired spark-01 enP2p1s0f1np1: spark-01 enP2p1s0f1np1 192.168.101.10/24: no peer in 192.168.101.0/24",
	}
	if diff := cmp.Diff(want, clusterProblems(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	plan := fixAgreesWithDoctor(t, r, rep)
	if got := resolvedBy(plan, report.Key{ID: "cluster.link-degraded", Host: "spark-02", Subject: "enP2p1s0f1np1"}); !slices.Equal(got, []string{"spark-02 /etc/netplan/40-cx7.yaml"}) {
		t.Errorf("the degraded link is resolved by %q, want spark-02's netplan change", got)
	}
}

// fixAgreesWithDoctor runs fix --plan on the rig the doctor's report rep
// audited and checks the two answer alike: the same exit status, every
// change naming the findings it resolves, and every warn or fail of the
// doctor resolved by a change or left to a person. It returns the plan.
func fixAgreesWithDoctor(t *testing.T, r *testrig.Rig, rep *report.Report) *report.FixPlan {
	t.Helper()
	code, out, errOut := runMain(t, "fix", "--plan", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","))
	var doc report.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.FixPlan == nil {
		t.Fatalf("fix --plan: exit %d: %v\n%s", code, err, errOut)
	}
	if code != exitFor(rep.Status) {
		t.Errorf("fix --plan exits %d, the doctor's status is %s", code, rep.Status)
	}
	handled := map[report.Key]bool{}
	for _, f := range doc.FixPlan.Manual {
		handled[f.Key()] = true
	}
	for _, h := range doc.FixPlan.Hosts {
		for _, c := range h.Files {
			if c.Changed && len(c.Resolves) == 0 {
				t.Errorf("%s %s changes for no finding", h.Host, c.Path)
			}
			for _, k := range c.Resolves {
				handled[k] = true
			}
		}
		if a := h.Reactivate; a != nil {
			for _, k := range a.Resolves {
				handled[k] = true
			}
		}
	}
	var all []report.Finding
	for _, h := range rep.Hosts {
		all = append(all, h.Findings...)
	}
	all = append(all, rep.Cluster.Findings...)
	for _, f := range all {
		if (f.Severity == report.Warn || f.Severity == report.Fail) && !handled[f.Key()] {
			t.Errorf("the doctor's %s %s %s (%s) is neither resolved by fix nor left to a person", f.Severity, f.ID, f.Host, f.Subject)
		}
	}
	return doc.FixPlan
}

// resolvedBy lists "host path" of each change of plan that resolves k.
func resolvedBy(plan *report.FixPlan, k report.Key) []string {
	var out []string
	for _, h := range plan.Hosts {
		for _, c := range h.Files {
			if slices.Contains(c.Resolves, k) {
				out = append(out, h.Host+" "+c.Path)
			}
		}
	}
	return out
}

func TestRigDifferentNCCLVersions(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) {
		// Stand-in library names: the capture records them by name only.
		c.Hosts[0].Files = map[string]string{"/usr/local/lib/libnccl.so.2.28.9": ""}
		c.Hosts[1].Files = map[string]string{"/usr/local/lib/libnccl.so.2.27.3": ""}
	})
	_, rep, _ := rigDoctor(t, r, "--no-ping")
	want := []string{"fail cluster.nccl-mismatch  NCCL: spark-01: 2.28.9; spark-02: 2.27.3"}
	if diff := cmp.Diff(want, clusterProblems(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if countID(rep, "cluster.df-ping", report.OK) != 0 {
		t.Error("the mesh ran despite --no-ping")
	}
}

func TestRigRingCabledP0ToP0(t *testing.T) {
	t.Parallel()
	// Cable 1 joins spark-01 port 0 to spark-02 port 0 instead of port 1.
	cfg, _ := testrig.Sparks(3, "none")
	set := func(h, port, subnet, host int) {
		for twin, dev := range testrig.PortNetDevs(port) {
			cfg.Hosts[h].NetDevs[dev] = testrig.NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.%d/24", subnet+twin, host)}}
		}
	}
	set(0, 0, 0, 1)
	set(1, 0, 0, 2)
	cfg.Links = append(cfg.Links, testrig.Cable("spark-01", 0, "spark-02", 0)...)
	set(0, 1, 2, 1)
	set(2, 0, 2, 2)
	cfg.Links = append(cfg.Links, testrig.Cable("spark-01", 1, "spark-03", 0)...)
	set(1, 1, 4, 1)
	set(2, 1, 4, 2)
	cfg.Links = append(cfg.Links, testrig.Cable("spark-02", 1, "spark-03", 1)...)
	r := testrig.New(t, cfg)
	_, rep, _ := rigDoctor(t, r)
	if rep.Cluster.Topology != "three-node-ring" {
		t.Errorf("topology %s", rep.Cluster.Topology)
	}
	var got []string
	for _, p := range clusterProblems(rep) {
		got = append(got, strings.SplitN(p, ":", 2)[0])
	}
	want := []string{
		"fail cluster.ring-cabling  spark-01",
		"fail cluster.ring-cabling  spark-01",
		"fail cluster.ring-cabling  spark-02",
		"fail cluster.ring-cabling  spark-02",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s\n%q", diff, clusterProblems(rep))
	}
	if n := countID(rep, "cluster.df-ping", report.OK); n != 12 {
		t.Errorf("%d passing DF pings, want 12 (6 rails × 2 directions)", n)
	}
}

// hostStatuses maps host → status (and the error's key part).
func hostStatuses(r *report.Report) map[string]string {
	m := map[string]string{}
	for _, h := range r.Hosts {
		m[h.Host] = h.Status
	}
	return m
}

func TestRigHostDownHangingAndUnknownKey(t *testing.T) {
	t.Parallel()
	cfg, _ := testrig.Sparks(2, "pair")
	cfg.Hosts = append(cfg.Hosts,
		testrig.HostSpec{Name: "down", Down: true},
		testrig.HostSpec{Name: "hangs", HangAfterAuth: true},
		testrig.HostSpec{Name: "stranger", UnknownHostKey: true})
	r := testrig.New(t, cfg)
	start := time.Now()
	// 30 s lets the healthy pair finish on a loaded machine; the hanging
	// host is what runs into it.
	code, rep, stderr := rigDoctor(t, r, "--host-timeout", "30s")
	elapsed := time.Since(start)
	want := map[string]string{"spark-01": "audited", "spark-02": "audited", "down": "unreachable", "hangs": "capture-failed", "stranger": "unreachable"}
	if diff := cmp.Diff(want, hostStatuses(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if code != ExitUnknown {
		t.Errorf("exit %d, want %d (hosts not audited, nothing worse)", code, ExitUnknown)
	}
	// The bad hosts are bounded by the per-host deadline, in parallel: the
	// hanging one would otherwise hold the run for ever.
	if elapsed > 120*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if rep.Cluster == nil || len(rep.Cluster.Links) != 2 {
		t.Errorf("the reachable pair was not audited as a cluster: %+v", rep.Cluster)
	}
	s := r.Host("stranger")
	for _, h := range rep.Hosts {
		if h.Host == "stranger" && (!strings.Contains(h.Error, s.HostKeyFingerprint) || !strings.Contains(h.Error, "unknown")) {
			t.Errorf("stranger's error does not name the fingerprint %s: %s", s.HostKeyFingerprint, h.Error)
		}
	}
	if !strings.Contains(stderr, "stranger") || !strings.Contains(stderr, "down") {
		t.Errorf("stderr: %s", stderr)
	}
	// Nothing was added to known_hosts without --accept-new-host-keys.
	if kh, _ := os.ReadFile(r.KnownHosts); strings.Contains(string(kh), s.Addr) {
		t.Error("unknown key recorded")
	}
}

func TestRigSnapshotPerHostThenDoctorOnSnapshots(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) {
		c.Hosts[1].NetDevs["enP2p1s0f1np1"] = testrig.NetDev{MTU: 4200, Addrs: []string{"192.168.101.11/24"}}
	})
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Main([]string{"snapshot", "--ssh-config", r.SSHConfig, "--hosts", "spark-[01-02]", "-o", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errb.String())
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
	if len(paths) != 2 {
		t.Fatalf("archives: %v", paths)
	}
	out.Reset()
	Main(append([]string{"doctor", "--format", "json", "--snapshot"}, paths...), strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// The ping mesh is evidence too: the archives carry it, so they audit
	// exactly as the live run does, the don't-fragment pings included.
	want := []string{
		"fail cluster.df-ping spark-01 enP2p1s0f1np1 → spark-02 192.168.101.11: 0/3 replies (100% loss) at 9000-byte frames; 1500-byte frames pass",
		"fail cluster.mtu-mismatch  spark-01:enP2p1s0f1np1↔spark-02:enP2p1s0f1np1: spark-01 enP2p1s0f1np1 MTU 9000, spark-02 enP2p1s0f1np1 MTU 4200",
		"warn cluster.mtu-inconsistent  enP2p1s0f1np1: spark-01: 9000; spark-02: 4200",
	}
	if diff := cmp.Diff(want, clusterProblems(&rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, live, _ := rigDoctor(t, r)
	if diff := cmp.Diff(clusterProblems(live), clusterProblems(&rep)); diff != "" {
		t.Errorf("snapshots and live run disagree (-live +snapshots):\n%s", diff)
	}
	if a, b := len(live.Cluster.Findings), len(rep.Cluster.Findings); a != b {
		t.Errorf("live run has %d cluster findings, the snapshots %d", a, b)
	}

	// Again into the same directory: the archives are kept without --force.
	errb.Reset()
	if code := Main([]string{"snapshot", "--ssh-config", r.SSHConfig, "--hosts", "spark-[01-02]", "-o", dir}, strings.NewReader(""), &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "sparkrig: snapshot: spark-01: "+paths[0]+" exists; add --force to replace it") {
		t.Errorf("snapshot over existing archives: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := Main([]string{"snapshot", "--ssh-config", r.SSHConfig, "--hosts", "spark-01", "-o", filepath.Join(dir, "all.tar.gz")}, strings.NewReader(""), &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "-o names a directory for one HOST.tar.gz per node, not an archive") {
		t.Errorf("snapshot --hosts -o x.tar.gz: exit %d: %s", code, errb.String())
	}

	// Anonymized: no host name or MAC is left, and the audit is the same
	// with the stand-in names.
	var secrets []string
	for _, p := range paths {
		s, err := snapshot.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		n := facts.FromSnapshot(s)
		secrets = append(secrets, n.Hostname)
		for _, d := range n.NetDevs {
			if d.MAC != "" && d.MAC != "00:00:00:00:00:00" {
				secrets = append(secrets, d.MAC)
			}
		}
	}
	if len(secrets) < 6 {
		t.Fatalf("too few names and MACs to look for: %q", secrets)
	}
	anon := t.TempDir()
	if code := Main([]string{"snapshot", "--anonymize", "--ssh-config", r.SSHConfig, "--hosts", "spark-[01-02]", "-o", anon}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("snapshot --anonymize: exit %d: %s", code, errb.String())
	}
	apaths, _ := filepath.Glob(filepath.Join(anon, "*.tar.gz"))
	if len(apaths) != 2 || filepath.Base(apaths[0]) != "node-01.tar.gz" {
		t.Fatalf("anonymized archives: %v", apaths)
	}
	for _, p := range apaths {
		raw, err := exec.Command("sh", "-c", "tar -xzOf "+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range secrets {
			if bytes.Contains(raw, []byte(sec)) {
				t.Errorf("%s still holds %q", p, sec)
			}
		}
	}
	out.Reset()
	Main(append([]string{"doctor", "--format", "json", "--snapshot"}, apaths...), strings.NewReader(""), &out, &errb)
	var arep report.Report
	if err := json.Unmarshal(out.Bytes(), &arep); err != nil {
		t.Fatal(err)
	}
	renamed := strings.NewReplacer("spark-01", "node-01", "spark-02", "node-02")
	var wantAnon []string
	for _, w := range want {
		wantAnon = append(wantAnon, renamed.Replace(w))
	}
	if diff := cmp.Diff(wantAnon, clusterProblems(&arep)); diff != "" {
		t.Errorf("anonymized snapshots (-want +got):\n%s", diff)
	}
}

// TestRigSnapshotCarriesNoSecrets plants a secret in every configuration
// format the capture keeps on a rig host, takes a snapshot over SSH as root
// and checks the archive holds none of them, says what it redacted, and is
// readable by its owner only.
func TestRigSnapshotCarriesNoSecrets(t *testing.T) {
	t.Parallel()
	planted := map[string]string{}
	for file, as := range map[string]string{
		"nm-wifi.nmconnection": "/etc/NetworkManager/system-connections/lab-wifi.nmconnection",
		"netplan-wifi-wg.yaml": "/etc/netplan/50-wifi.yaml",
		"wg0.netdev":           "/etc/systemd/network/wg0.netdev",
		"interfaces":           "/etc/network/interfaces",
	} {
		b, err := os.ReadFile(filepath.Join("..", "capture", "testdata", "secrets", file))
		if err != nil {
			t.Fatal(err)
		}
		planted[as] = string(b)
	}
	r := sparkPair(t, func(c *testrig.Config) {
		if c.Hosts[0].Files == nil {
			c.Hosts[0].Files = map[string]string{}
		}
		for p, b := range planted {
			c.Hosts[0].Files[p] = b
		}
	})
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Main([]string{"snapshot", "--ssh-config", r.SSHConfig, "--hosts", "spark-01", "-o", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errb.String())
	}
	arch := filepath.Join(dir, "spark-01.tar.gz")
	st, err := os.Stat(arch)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %o, want 600", st.Mode().Perm())
	}
	s, err := snapshot.Read(arch)
	if err != nil {
		t.Fatal(err)
	}
	for p := range planted {
		b, ok := s.File(p)
		if !ok {
			t.Errorf("%s was not captured", p)
			continue
		}
		if strings.Contains(string(b), "PLANTED") {
			t.Errorf("%s keeps a planted secret:\n%s", p, b)
		}
		if it, _ := s.Item(snapshot.KindFile, p); len(it.Redacted) == 0 {
			t.Errorf("%s: the manifest does not say what was redacted", p)
		}
	}
}
