package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/facts"
)

// node builds a Spark's facts: netdevs given as "name=cidr[,cidr]@mtu"
// ("enp1s0f1np1=192.168.100.10/24@9000"; no cidr: unaddressed).
func node(host string, netdevs ...string) *facts.Node {
	n := &facts.Node{Host: host, Sysctls: map[string]string{}, NCCL: facts.NCCL{ConfFile: map[string]string{}, Env: map[string]string{}},
		Sources: map[string]facts.SourceStatus{facts.SrcSysctl: {Status: "ok"}, facts.SrcIPAddr: {Status: "ok"}, facts.SrcEnv: {Status: "ok"}, facts.SrcNCCLConf: {Status: "missing"}},
		DGX:     &facts.DGXRelease{Name: "DGX Spark"}}
	for _, spec := range netdevs {
		name, rest, _ := strings.Cut(spec, "=")
		cidrs, mtu, _ := strings.Cut(rest, "@")
		d := facts.NetDev{Name: name, MTU: atoi(mtu), Driver: "mlx5_core", Addrs: []facts.Addr{}}
		speed := 200000
		d.SpeedMbps = &speed
		for _, c := range strings.Split(cidrs, ",") {
			if c != "" {
				d.Addrs = append(d.Addrs, facts.Addr{CIDR: c, Family: "inet"})
			}
		}
		n.NetDevs = append(n.NetDevs, d)
	}
	// the management port: each node its own address (spark-03 → 10.0.0.103)
	num := strings.TrimLeftFunc(host, func(r rune) bool { return r < '0' || r > '9' })
	n.NetDevs = append(n.NetDevs, facts.NetDev{Name: "enP7s7", MTU: 1500, Driver: "r8127", Addrs: []facts.Addr{{CIDR: fmt.Sprintf("10.0.0.%d/24", 100+atoi(num)), Family: "inet"}}})
	return n
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

// pair is NVIDIA's two-Spark addressing (netplan fixture
// 01_40-cx7_two-sparks_port1_static-per-twin-subnets): port 1 twins on
// 192.168.100.0/24 and 192.168.101.0/24, .10 and .11, here at MTU 9000.
func pair() []*facts.Node {
	return []*facts.Node{
		node("spark-01", "enp1s0f1np1=192.168.100.10/24@9000", "enP2p1s0f1np1=192.168.101.10/24@9000", "enp1s0f0np0=@1500", "enP2p1s0f0np0=@1500"),
		node("spark-02", "enp1s0f1np1=192.168.100.11/24@9000", "enP2p1s0f1np1=192.168.101.11/24@9000", "enp1s0f0np0=@1500", "enP2p1s0f0np0=@1500"),
	}
}

// ring is NVIDIA's three-Spark addressing (netplan fixture
// 03_40-cx7_three-sparks-ring_all-four-ifaces), at MTU 9000.
func ring() []*facts.Node {
	return []*facts.Node{
		node("spark-01", "enp1s0f0np0=192.168.0.1/24@9000", "enP2p1s0f0np0=192.168.1.1/24@9000", "enp1s0f1np1=192.168.2.1/24@9000", "enP2p1s0f1np1=192.168.3.1/24@9000"),
		node("spark-02", "enp1s0f0np0=192.168.4.1/24@9000", "enP2p1s0f0np0=192.168.5.1/24@9000", "enp1s0f1np1=192.168.0.2/24@9000", "enP2p1s0f1np1=192.168.1.2/24@9000"),
		node("spark-03", "enp1s0f0np0=192.168.2.2/24@9000", "enP2p1s0f0np0=192.168.3.2/24@9000", "enp1s0f1np1=192.168.4.2/24@9000", "enP2p1s0f1np1=192.168.5.2/24@9000"),
	}
}

// notOK returns "id subject: observed" of every finding worse than info.
func notOK(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Severity.Rank() > report.Info.Rank() {
			out = append(out, string(f.Severity)+" "+f.ID+" "+f.Subject+": "+f.Observed)
		}
	}
	return out
}

func TestHealthyPair(t *testing.T) {
	a := Analyze(pair())
	if a.Topology != TwoNodesOneCable {
		t.Errorf("topology %s", a.Topology)
	}
	if got := notOK(a.Findings); len(got) != 0 {
		t.Errorf("findings on a healthy pair: %q", got)
	}
	if len(a.Links) != 2 || !a.Links[0].OK() || a.Links[0].A.NetDev != "enp1s0f1np1" || a.Links[0].B.Host != "spark-02" || a.Links[0].Subnet != "192.168.100.0/24" {
		t.Errorf("links: %+v", a.Links)
	}
	if diff := cmp.Diff([]Cable{{A: "spark-01", B: "spark-02", PortA: "1", PortB: "1"}}, a.Cables); diff != "" {
		t.Error(diff)
	}
}

// linkLocalPair is NVIDIA's link-local variant of the two-Spark setup: both
// twins of port 1 with 169.254/16 addresses (values as avahi-autoipd picks them).
func linkLocalPair() []*facts.Node {
	return []*facts.Node{
		node("spark-01", "enp1s0f1np1=169.254.37.12/16@9000", "enP2p1s0f1np1=169.254.201.7/16@9000"),
		node("spark-02", "enp1s0f1np1=169.254.112.40/16@9000", "enP2p1s0f1np1=169.254.9.250/16@9000"),
	}
}

func TestLinkLocalPairedByNetDevName(t *testing.T) {
	a := Analyze(linkLocalPair())
	if a.Topology != TwoNodesOneCable {
		t.Errorf("topology %s", a.Topology)
	}
	var got []string
	for _, l := range a.Links {
		got = append(got, l.A.Host+":"+l.A.NetDev+"↔"+l.B.Host+":"+l.B.NetDev+" "+l.Subnet)
	}
	want := []string{"spark-01:enP2p1s0f1np1↔spark-02:enP2p1s0f1np1 169.254.0.0/16", "spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1 169.254.0.0/16"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if bad := notOK(a.Findings); len(bad) != 0 {
		t.Errorf("findings: %q", bad)
	}
	for _, f := range a.Findings {
		if f.ID == "cluster.link" && !strings.HasSuffix(f.Observed, "169.254.0.0/16; paired by netdev name (link-local addresses do not show which port faces which)") {
			t.Errorf("%s does not say how it was paired: %s", f.Subject, f.Observed)
		}
	}
}

func TestMTUMismatchOnOneLink(t *testing.T) {
	nodes := pair()
	nodes[1].NetDevs[0].MTU = 1500
	got := notOK(Analyze(nodes).Findings)
	want := []string{
		"fail cluster.mtu-mismatch spark-01:enp1s0f1np1↔spark-02:enp1s0f1np1: spark-01 enp1s0f1np1 MTU 9000, spark-02 enp1s0f1np1 MTU 1500",
		"warn cluster.mtu-inconsistent enp1s0f1np1: spark-01: 9000; spark-02: 1500",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTwinUnaddressedOnOneNode(t *testing.T) {
	nodes := pair()
	nodes[1].NetDevs[1].Addrs = []facts.Addr{}
	a := Analyze(nodes)
	want := []string{"warn cluster.rail-unpaired enP2p1s0f1np1: spark-01 enP2p1s0f1np1 192.168.101.10/24: no peer in 192.168.101.0/24"}
	if diff := cmp.Diff(want, notOK(a.Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if a.Topology != TwoNodesOneCable {
		t.Errorf("topology %s", a.Topology)
	}
	// The addressed twin's link runs the port at half bandwidth; the idle
	// twin is drawn to the node whose twin faces the same cable.
	want = []string{
		"spark-01 enp1s0f1np1 ↔ spark-02 enp1s0f1np1 192.168.100.0/24 degraded [its twin spark-02 enP2p1s0f1np1 has no IPv4 address: the port runs at half bandwidth]",
		"spark-01 enP2p1s0f1np1 ↔ spark-02 enP2p1s0f1np1 192.168.101.0/24 unaddressed [spark-02 enP2p1s0f1np1 has no IPv4 address: this twin carries nothing, the port runs at half bandwidth]",
	}
	if diff := cmp.Diff(want, linkLines(a.Links)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

// A pair of nodes that are not DGX Sparks (no Spark check looks at their
// twins) whose second twin has no address at either end: the link is
// degraded, and a finding on each end says why, with its remedy.
func TestDegradedLinkOfNonSparksIsAFinding(t *testing.T) {
	nodes := pair()
	for _, n := range nodes {
		n.DGX = nil
		n.NetDevs[1].Addrs = []facts.Addr{}
	}
	a := Analyze(nodes)
	if diff := cmp.Diff([]string{
		"spark-01 enp1s0f1np1 ↔ spark-02 enp1s0f1np1 192.168.100.0/24 degraded [its twin spark-01 enP2p1s0f1np1 has no IPv4 address: the port runs at half bandwidth its twin spark-02 enP2p1s0f1np1 has no IPv4 address: the port runs at half bandwidth]",
	}, linkLines(a.Links)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	want := []string{
		"warn cluster.link-degraded enP2p1s0f1np1: spark-01 enP2p1s0f1np1 has no IPv4 address; link spark-01 enp1s0f1np1 ↔ spark-02 enp1s0f1np1 runs at half bandwidth",
		"warn cluster.link-degraded enP2p1s0f1np1: spark-02 enP2p1s0f1np1 has no IPv4 address; link spark-01 enp1s0f1np1 ↔ spark-02 enp1s0f1np1 runs at half bandwidth",
	}
	if diff := cmp.Diff(want, notOK(a.Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, f := range a.Findings {
		if f.ID == "cluster.link-degraded" && (f.Remedy == nil || !strings.Contains(f.Remedy.Steps[0].Text, "40-cx7.yaml")) {
			t.Errorf("%s %s: remedy %+v", f.Host, f.Subject, f.Remedy)
		}
	}
	// The same nodes as DGX Sparks: their own checks name the twin, and the
	// cluster adds nothing.
	for _, n := range nodes {
		n.DGX = &facts.DGXRelease{Name: "DGX Spark"}
	}
	if got := notOK(Analyze(nodes).Findings); len(got) != 0 {
		t.Errorf("Sparks: %v", got)
	}
}

// linkLines writes each link as "A ↔ B subnet status [reasons]".
func linkLines(ls []report.Link) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s %s ↔ %s %s %s %s %v", l.A.Host, l.A.NetDev, l.B.Host, l.B.NetDev, l.Subnet, l.Status, l.Reasons))
	}
	return out
}

func TestDifferentNCCLVersionsNameTheOutlier(t *testing.T) {
	nodes := ring()
	for i, v := range []string{"2.28.9", "2.28.9", "2.27.3"} {
		nodes[i].NCCL.Version = v
	}
	want := []string{"fail cluster.nccl-mismatch NCCL: spark-03: 2.27.3; the other 2 of 3: 2.28.9"}
	if diff := cmp.Diff(want, notOK(Analyze(nodes).Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Two nodes: no majority, both named.
	p := pair()
	p[0].NCCL.Version, p[1].NCCL.Version = "2.28.9", "2.28.3"
	want = []string{"fail cluster.nccl-mismatch NCCL: spark-01: 2.28.9; spark-02: 2.28.3"}
	if diff := cmp.Diff(want, notOK(Analyze(p).Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRing(t *testing.T) {
	a := Analyze(ring())
	if a.Topology != ThreeNodeRing || len(a.Links) != 6 || len(a.Cables) != 3 {
		t.Fatalf("topology %s, %d links, %d cables", a.Topology, len(a.Links), len(a.Cables))
	}
	if got := notOK(a.Findings); len(got) != 0 {
		t.Errorf("findings on the playbook's ring: %q", got)
	}
}

func TestRingCabledP0ToP0(t *testing.T) {
	// N1.P0–N2.P0 instead of N1.P0–N2.P1: spark-02's port-0 twins carry the
	// 192.168.0-1 subnets, and its port 1 takes the cable to spark-03.
	nodes := []*facts.Node{
		node("spark-01", "enp1s0f0np0=192.168.0.1/24@9000", "enP2p1s0f0np0=192.168.1.1/24@9000", "enp1s0f1np1=192.168.2.1/24@9000", "enP2p1s0f1np1=192.168.3.1/24@9000"),
		node("spark-02", "enp1s0f0np0=192.168.0.2/24@9000", "enP2p1s0f0np0=192.168.1.2/24@9000", "enp1s0f1np1=192.168.4.1/24@9000", "enP2p1s0f1np1=192.168.5.1/24@9000"),
		node("spark-03", "enp1s0f0np0=192.168.2.2/24@9000", "enP2p1s0f0np0=192.168.3.2/24@9000", "enp1s0f1np1=192.168.4.2/24@9000", "enP2p1s0f1np1=192.168.5.2/24@9000"),
	}
	a := Analyze(nodes)
	want := []string{
		"fail cluster.ring-cabling spark-01:enp1s0f0np0↔spark-02:enp1s0f0np0: spark-01 port 0 (enp1s0f0np0) ↔ spark-02 port 0 (enp1s0f0np0)",
		"fail cluster.ring-cabling spark-01:enP2p1s0f0np0↔spark-02:enP2p1s0f0np0: spark-01 port 0 (enP2p1s0f0np0) ↔ spark-02 port 0 (enP2p1s0f0np0)",
		"fail cluster.ring-cabling spark-02:enp1s0f1np1↔spark-03:enp1s0f1np1: spark-02 port 1 (enp1s0f1np1) ↔ spark-03 port 1 (enp1s0f1np1)",
		"fail cluster.ring-cabling spark-02:enP2p1s0f1np1↔spark-03:enP2p1s0f1np1: spark-02 port 1 (enP2p1s0f1np1) ↔ spark-03 port 1 (enP2p1s0f1np1)",
	}
	if a.Topology != ThreeNodeRing {
		t.Errorf("topology %s", a.Topology)
	}
	if diff := cmp.Diff(want, notOK(a.Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPortMismatchOnAPair(t *testing.T) {
	nodes := []*facts.Node{
		node("spark-01", "enp1s0f1np1=192.168.100.10/24@9000", "enP2p1s0f1np1=192.168.101.10/24@9000"),
		node("spark-02", "enp1s0f0np0=192.168.100.11/24@9000", "enP2p1s0f0np0=192.168.101.11/24@9000"),
	}
	got := notOK(Analyze(nodes).Findings)
	if len(got) < 2 || !strings.HasPrefix(got[0], "warn cluster.port-mismatch spark-01:enp1s0f1np1↔spark-02:enp1s0f0np0: spark-01 port 1 (enp1s0f1np1) ↔ spark-02 port 0 (enp1s0f0np0)") {
		t.Errorf("got %q", got)
	}
}

// Four nodes behind a switch, NVIDIA's static 4-node addressing (netplan
// fixture 04): one node's port at 100G and MTU 1500.
func TestSwitch(t *testing.T) {
	var nodes []*facts.Node
	for i := range 4 {
		n := node("spark-0"+string(rune('1'+i)), "enp1s0f0np0=192.168.100."+string(rune('1'+i))+"/24@9000")
		nodes = append(nodes, n)
	}
	nodes[2].NetDevs[0].MTU = 1500
	slow := 100000
	nodes[3].NetDevs[0].SpeedMbps = &slow
	a := Analyze(nodes)
	want := []string{
		"fail cluster.mtu-mismatch enp1s0f0np0: spark-03 enp1s0f0np0 MTU 1500; most of 192.168.100.0/24 uses 9000",
		"warn cluster.speed-mismatch enp1s0f0np0: spark-04 enp1s0f0np0 at 100 Gb/s; most of 192.168.100.0/24 at 200 Gb/s",
		"warn cluster.mtu-inconsistent enp1s0f0np0: spark-03: 1500; the other 3 of 4: 9000",
	}
	if a.Topology != Switched || len(a.Links) != 4 {
		t.Errorf("topology %s, %d links", a.Topology, len(a.Links))
	}
	if diff := cmp.Diff(want, notOK(a.Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestIBHCAOrder(t *testing.T) {
	nodes := pair()
	nodes[0].NCCL.Env["NCCL_IB_HCA"] = "rocep1s0f1,roceP2p1s0f1"
	nodes[1].NCCL.Env["NCCL_IB_HCA"] = "roceP2p1s0f1,rocep1s0f1"
	want := []string{"fail cluster.nccl-ib-hca-order NCCL_IB_HCA: same devices, different order: spark-01: rocep1s0f1,roceP2p1s0f1; spark-02: roceP2p1s0f1,rocep1s0f1"}
	if diff := cmp.Diff(want, notOK(Analyze(nodes).Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	nodes[1].NCCL.Env["NCCL_IB_HCA"] = nodes[0].NCCL.Env["NCCL_IB_HCA"]
	if got := notOK(Analyze(nodes).Findings); len(got) != 0 {
		t.Errorf("same order flagged: %q", got)
	}
}

func TestNCCLSettingsCompareOnlyNodesThatWereRead(t *testing.T) {
	nodes := ring()
	nodes[0].NCCL.ConfFile["NCCL_SOCKET_IFNAME"] = "enp1s0f1np1"
	nodes[1].NCCL.ConfFile["NCCL_SOCKET_IFNAME"] = "enp1s0f1np1"
	nodes[2].NCCL.Env["NCCL_SOCKET_IFNAME"] = "enP7s7"
	for _, n := range nodes {
		n.Sources[facts.SrcNCCLConf] = facts.SourceStatus{Status: "ok"}
	}
	want := []string{"warn cluster.nccl-env-mismatch NCCL_SOCKET_IFNAME: spark-03: enP7s7; the other 2 of 3: enp1s0f1np1"}
	if diff := cmp.Diff(want, notOK(Analyze(nodes).Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// spark-03's settings could not be read: it is left out, not taken as
	// unset, and the other two agree.
	delete(nodes[2].NCCL.Env, "NCCL_SOCKET_IFNAME")
	nodes[2].Sources[facts.SrcEnv] = facts.SourceStatus{Status: "error"}
	nodes[2].NCCL.Env["NCCL_IB_HCA"] = "rocep1s0f1"
	if got := notOK(Analyze(nodes).Findings); len(got) != 0 {
		t.Errorf("a node whose NCCL settings were not read counted: %q", got)
	}
}

func TestConsistencyIgnoresHostSpecificCmdline(t *testing.T) {
	nodes := pair()
	nodes[0].OS.Cmdline = "BOOT_IMAGE=/vmlinuz-6.11 root=UUID=aaaa ro quiet iommu=pt"
	nodes[1].OS.Cmdline = "BOOT_IMAGE=/vmlinuz-6.11 root=UUID=bbbb ro quiet iommu=pt"
	if got := notOK(Analyze(nodes).Findings); len(got) != 0 {
		t.Errorf("got %q", got)
	}
	// The same parameters in another order are the same; each node's line
	// is shown as the node has it, not as a sorted word list.
	nodes[1].OS.Cmdline = "BOOT_IMAGE=/vmlinuz-6.11 root=UUID=bbbb iommu=pt ro quiet"
	var same []string
	for _, f := range Analyze(nodes).Findings {
		if f.ID == "cluster.cmdline-mismatch" {
			same = append(same, string(f.Severity)+" "+f.Observed)
		}
	}
	if d := cmp.Diff([]string{"ok ro quiet iommu=pt on all 2 nodes"}, same); d != "" {
		t.Errorf("reordered parameters (-want +got):\n%s", d)
	}
	nodes[1].OS.Cmdline += " kho=off"
	want := []string{"warn cluster.cmdline-mismatch kernel command line: spark-01: ro quiet iommu=pt; spark-02: iommu=pt ro quiet kho=off"}
	if diff := cmp.Diff(want, notOK(Analyze(nodes).Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// verbatim returns the program output inside a fixture's VERBATIM markers.
func verbatim(t testing.TB, path string) []byte {
	return []byte(fixture.ReadBlocks(t, path)[0])
}

func TestPingScriptQuotesNetDevs(t *testing.T) {
	nodes := pair()
	nodes[0].NetDevs[0].Name = "en$(reboot)"
	ts := PingPlan(Analyze(nodes).Segments)["spark-01"]
	got := strings.SplitN(capture.PingScript(ts), "\n", 5)[3]
	want := `( ping -n -M do -s 8972 -c 3 -i 0.2 -W 1 -I 'en$(reboot)' 192.168.100.11 > "$T/0" 2>&1; r=$?; echo $r > "$T/0.rc"; ` +
		`if [ $r -ne 0 ]; then ping -n -M do -s 1472 -c 1 -W 1 -I 'en$(reboot)' 192.168.100.11 > "$T/0.s" 2>&1; echo $? > "$T/0.src"; fi ) &`
	if got != want {
		t.Errorf("probe line:\n got %s\nwant %s", got, want)
	}
}

func TestPingMeshFindings(t *testing.T) {
	nodes := pair()
	nodes[1].NetDevs[0].MTU = 1500
	a := Analyze(nodes)
	plan := PingPlan(a.Segments)
	if len(plan["spark-01"]) != 2 || len(plan["spark-02"]) != 2 || plan["spark-02"][0].Size() != 1472 || plan["spark-01"][0].Size() != 8972 {
		t.Fatalf("plan: %+v", plan)
	}
	okOut := verbatim(t, "../facts/testdata/ping/01_iputils_df-9000_both-ends-9000_ok.txt")
	lossOut := verbatim(t, "../facts/testdata/ping/02_iputils_df-9000_far-end-1500_100pct-loss.txt")
	small := []byte("1 packets transmitted, 1 received, 0% packet loss, time 0ms\nrtt min/avg/max/mdev = 0.050/0.050/0.050/0.000 ms\n")
	// spark-01's first target crosses the 1500 link, the second the healthy twin.
	out := "@@ping 0 1\n" + string(lossOut) + "@@small 0 0\n" + string(small) + "@@ping 1 0\n" + string(okOut)
	res := facts.ParsePingScript(plan["spark-01"], []byte(out))
	got := notOK(PingFindings(res))
	want := []string{"fail cluster.df-ping enp1s0f1np1 → spark-02 192.168.100.11: 0/3 replies (100% loss) at 9000-byte frames; 1500-byte frames pass"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c := a.Report(res, true)
	if c.Links[0].Status != report.LinkFaulty || !strings.Contains(strings.Join(c.Links[0].Reasons, "|"), "DF ping spark-01→spark-02 at MTU 9000: 0/3 replies") {
		t.Errorf("link 0: %+v", c.Links[0])
	}
	if !c.Links[1].OK() {
		t.Errorf("healthy link marked: %+v", c.Links[1])
	}
}

// ringOf cables n nodes each port 0 to the next node's port 1, cable k on
// 192.168.2k.x and 192.168.2k+1.x.
func ringOf(n int) []*facts.Node {
	devs := make([][]string, n)
	for k := range n {
		next := (k + 1) % n
		devs[k] = append(devs[k], fmt.Sprintf("enp1s0f0np0=192.168.%d.1/24@9000", 2*k), fmt.Sprintf("enP2p1s0f0np0=192.168.%d.1/24@9000", 2*k+1))
		devs[next] = append(devs[next], fmt.Sprintf("enp1s0f1np1=192.168.%d.2/24@9000", 2*k), fmt.Sprintf("enP2p1s0f1np1=192.168.%d.2/24@9000", 2*k+1))
	}
	var out []*facts.Node
	for i, d := range devs {
		out = append(out, node(fmt.Sprintf("spark-%02d", i+1), d...))
	}
	return out
}

func TestRingsOfAnySize(t *testing.T) {
	for n, want := range map[int]Topology{4: "four-node-ring", 6: "six-node-ring"} {
		a := Analyze(ringOf(n))
		if a.Topology != want || len(a.Cables) != n || len(a.Links) != 2*n {
			t.Errorf("%d nodes: topology %s, %d cables, %d links", n, a.Topology, len(a.Cables), len(a.Links))
		}
	}
	// A chain (one cable missing) is not a ring.
	nodes := ringOf(4)
	nodes[3].NetDevs = slices.DeleteFunc(nodes[3].NetDevs, func(d facts.NetDev) bool { return strings.HasSuffix(d.Name, "np0") })
	if a := Analyze(nodes); a.Topology != OtherTopology {
		t.Errorf("a chain of four: %s", a.Topology)
	}
}

// Two nodes on one subnet are a cable, unless a data port hears LLDP from
// something that is not a node, or sees a neighbour MAC that is not the
// peer's: then a switch sits between them.
func TestTwoNodesBehindASwitch(t *testing.T) {
	nodes := pair()
	nodes[0].NetDevs[0].MAC, nodes[1].NetDevs[0].MAC = "4c:bb:47:00:00:01", "4c:bb:47:00:00:02"
	if a := Analyze(nodes); a.Topology != TwoNodesOneCable {
		t.Fatalf("plain pair: %s", a.Topology)
	}
	nodes[0].Neighbors = []facts.Neighbor{{IP: "192.168.100.11", Dev: "enp1s0f1np1", MAC: "4c:bb:47:00:00:02"}}
	if a := Analyze(nodes); a.Topology != TwoNodesOneCable {
		t.Errorf("the peer's own MAC: %s", a.Topology)
	}
	nodes[0].Neighbors = append(nodes[0].Neighbors, facts.Neighbor{IP: "192.168.100.1", Dev: "enp1s0f1np1", MAC: "48:a9:8a:11:22:33"})
	a := Analyze(nodes)
	if a.Topology != Switched || !strings.Contains(a.Findings[0].Observed, "spark-01 enp1s0f1np1 sees 192.168.100.1 at 48:a9:8a:11:22:33, not the peer's 4c:bb:47:00:00:02") {
		t.Errorf("a foreign MAC: %s %q", a.Topology, a.Findings[0].Observed)
	}
	nodes[0].Neighbors = nil
	nodes[1].LLDP = []facts.LLDPNeighbor{{Iface: "enp1s0f1np1", SysName: "crs812-rack1"}}
	if a := Analyze(nodes); a.Topology != Switched {
		t.Errorf("LLDP from a switch: %s", a.Topology)
	}
}

// switchOf puts n nodes on one switch with two rails each.
func switchOf(n int) []*facts.Node {
	var out []*facts.Node
	for i := range n {
		out = append(out, node(fmt.Sprintf("spark-%02d", i+1),
			fmt.Sprintf("enp1s0f1np1=10.100.%d.%d/16@9000", (i+1)>>8, (i+1)&0xff),
			fmt.Sprintf("enP2p1s0f1np1=10.101.%d.%d/16@9000", (i+1)>>8, (i+1)&0xff)))
	}
	return out
}

// On a segment of any size, every rail pings min(rails-1, PingPeers)
// distinct peers and is pinged by as many: the mesh grows with the node
// count, and every rail is tested in both directions.
func TestPingPlanIsBoundedAndCoversEveryRail(t *testing.T) {
	for _, n := range []int{2, 3, 16, 17, 18, 40, 257, 1000} {
		plan := PlanPings(switchOf(n))
		want := min(n-1, PingPeers)
		sent := map[string]int{}
		got := map[string]int{}
		for host, ts := range plan {
			seen := map[string]bool{}
			for _, tg := range ts {
				k := tg.From.NetDev + ">" + tg.To.Host
				if tg.To.Host == host || seen[k] || tg.From.Host != host || tg.To.Subnet() != tg.From.Subnet() {
					t.Fatalf("%d nodes: %s: bad or repeated target %+v", n, host, tg)
				}
				seen[k] = true
				sent[host+" "+tg.From.NetDev]++
				got[tg.To.Host+" "+tg.To.NetDev]++
			}
		}
		if len(sent) != 2*n || len(got) != 2*n {
			t.Errorf("%d nodes: %d rails send, %d are pinged, want %d", n, len(sent), len(got), 2*n)
		}
		for r, c := range sent {
			if c != want || got[r] != want {
				t.Errorf("%d nodes: %s sends %d, is pinged %d times, want %d", n, r, c, got[r], want)
				break
			}
		}
	}
}

// A large mesh whose probes pass is one finding per rail; a probe that
// fails is its own finding, named.
func TestPingFindingsFoldPassingProbes(t *testing.T) {
	plan := PlanPings(switchOf(40))
	okOut := string(verbatim(t, "../facts/testdata/ping/01_iputils_df-9000_both-ends-9000_ok.txt"))
	lossOut := string(verbatim(t, "../facts/testdata/ping/02_iputils_df-9000_far-end-1500_100pct-loss.txt"))
	var out strings.Builder
	for i := range plan["spark-07"] {
		if i == 5 {
			fmt.Fprintf(&out, "@@ping %d 1\n%s", i, lossOut)
		} else {
			fmt.Fprintf(&out, "@@ping %d 0\n%s", i, okOut)
		}
	}
	fs := PingFindings(facts.ParsePingScript(plan["spark-07"], []byte(out.String())))
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Severity)+" "+f.Subject)
	}
	bad := plan["spark-07"][5]
	want := []string{
		"fail " + bad.From.NetDev + " → " + bad.To.Host + " " + bad.To.Addr.Addr().String(),
		"ok enp1s0f1np1 → 15 peers", "ok enP2p1s0f1np1 → 16 peers",
	}
	if bad.From.NetDev != "enp1s0f1np1" {
		want[1], want[2] = "ok enp1s0f1np1 → 16 peers", "ok enP2p1s0f1np1 → 15 peers"
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A cluster check runs over the nodes that have what it needs; the others
// are named in one not-evaluated finding, never counted as passing. A check
// that does not apply to the topology is skipped with why.
func TestRegistryNeedsAndApplies(t *testing.T) {
	saved := Registry
	defer func() { Registry = saved }()
	var ran []string
	Registry = []Check{
		{ID: "cluster.test", Title: "test", Needs: []string{facts.SrcSysctl},
			Run: func(ns []*facts.Node, _ *Analysis) []report.Finding {
				for _, n := range ns {
					ran = append(ran, n.Host)
				}
				return nil
			}},
		saved[1], // the ring's
	}
	nodes := switchOf(5)
	delete(nodes[1].Sources, facts.SrcSysctl)
	nodes[3].Sources[facts.SrcSysctl] = facts.SourceStatus{Status: "denied"}
	a := Analyze(nodes)
	if d := cmp.Diff([]string{"spark-01", "spark-03", "spark-05"}, ran); d != "" {
		t.Errorf("ran over (-want +got):\n%s", d)
	}
	var got []string
	for _, f := range a.Findings {
		if f.ID == "cluster.test" {
			got = append(got, string(f.Severity)+" "+f.Observed)
		}
	}
	if d := cmp.Diff([]string{"not-evaluated sysctl not read on 2 nodes: spark-02, spark-04"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if len(a.Skipped) != 1 || a.Skipped[0].ID != "cluster.ring" {
		t.Errorf("skipped: %+v", a.Skipped)
	}
}
