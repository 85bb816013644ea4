package fix

import (
	"slices"

	"encoding/json"
	"github.com/sparkrig/sparkrig/internal/report"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/topology"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
)

// verbatim returns the blocks between the BEGIN/END VERBATIM lines of a
// fixture copied from the shared fixtures.
func verbatim(t testing.TB, name string) []string {
	return fixture.ReadBlocks(t, filepath.Join("testdata", name))
}

// linuxDefaults are the kernel's default values of the parameters fix tunes
// (Documentation/networking/ip-sysctl.rst; the same values an unmodified
// Ubuntu 24.04 reports).
var linuxDefaults = map[string]string{
	"net.core.rmem_max":            "212992",
	"net.core.wmem_max":            "212992",
	"net.ipv4.tcp_rmem":            "4096\t131072\t6291456",
	"net.ipv4.tcp_wmem":            "4096\t16384\t4194304",
	"net.ipv4.ip_local_port_range": "32768\t60999",
}

// sparkNode builds a DGX Spark's facts from a real ibdev2netdev listing:
// the four CX-7 twins with their carrier, MTU 1500 and no address, plus the
// management port enP7s7.
func sparkNode(t testing.TB, host, ibdev2netdev string) *facts.Node {
	t.Helper()
	n := &facts.Node{Host: host, DGX: &facts.DGXRelease{Name: "DGX Spark"}, Sysctls: map[string]string{}, Sources: map[string]facts.SourceStatus{}}
	for _, src := range []string{facts.SrcNetSysfs, facts.SrcIPAddr, facts.SrcNetConfig, facts.SrcSysctl, facts.SrcNCCLConf, facts.SrcEnv, facts.SrcRDMA} {
		n.Sources[src] = facts.SourceStatus{Status: "ok"}
	}
	for k, v := range linuxDefaults {
		n.Sysctls[k] = v
	}
	pci := map[string]string{"enp1s0f0np0": "0000:01:00.0", "enp1s0f1np1": "0000:01:00.1", "enP2p1s0f0np0": "0002:01:00.0", "enP2p1s0f1np1": "0002:01:00.1"}
	for _, line := range strings.Split(strings.TrimSpace(ibdev2netdev), "\n") {
		// "rocep1s0f0 port 1 ==> enp1s0f0np0 (Up)"
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("unexpected ibdev2netdev line %q", line)
		}
		up := f[5] == "(Up)"
		d := facts.NetDev{Name: f[4], MTU: 1500, Carrier: &up, Driver: "mlx5_core", PCIAddr: pci[f[4]], RDMADev: f[0], Addrs: []facts.Addr{}}
		state := "DOWN"
		if up {
			speed := 200000
			d.SpeedMbps, state = &speed, "ACTIVE"
		}
		n.NetDevs = append(n.NetDevs, d)
		n.RDMA = append(n.RDMA, facts.RDMADev{Name: f[0], NetDev: f[4], PCIAddr: pci[f[4]], Ports: []facts.RDMAPort{{Num: 1, State: state, LinkLayer: "Ethernet"}}})
	}
	yes := true
	n.NetDevs = append(n.NetDevs, facts.NetDev{Name: "enP7s7", MTU: 1500, Carrier: &yes, Driver: "r8127",
		Addrs: []facts.Addr{{CIDR: "10.20.0." + host[len(host)-1:] + "/24", Family: "inet", Dynamic: true}}})
	return n
}

type topoCase struct {
	name  string
	opt   Options
	nodes func(t testing.TB) []Node
}

func pair(fixture string, block0, block1 int) func(t testing.TB) []Node {
	return func(t testing.TB) []Node {
		v := verbatim(t, fixture)
		return []Node{{Facts: sparkNode(t, "spark-1", v[block0])}, {Facts: sparkNode(t, "spark-2", v[block1])}}
	}
}

func allUp(count int) func(t testing.TB) []Node {
	return func(t testing.TB) []Node {
		v := verbatim(t, "ibdev2netdev-all-up.txt")[0]
		var ns []Node
		for i := range count {
			ns = append(ns, Node{Facts: sparkNode(t, "spark-"+string(rune('1'+i)), v)})
		}
		return ns
	}
}

func switched(count int) func(t testing.TB) []Node {
	return func(t testing.TB) []Node {
		v := verbatim(t, "ibdev2netdev-port1-up.txt")[0]
		var ns []Node
		for i := range count {
			ns = append(ns, Node{Facts: sparkNode(t, "spark-"+string(rune('1'+i)), v)})
		}
		return ns
	}
}

var topoCases = []topoCase{
	{"one-cable-port1", Options{Topology: OneCable, Port: -1}, pair("ibdev2netdev-port1-up.txt", 0, 0)},
	{"one-cable-port0", Options{Topology: OneCable, Port: -1, LauncherEnv: true}, pair("ibdev2netdev-port0-up.txt", 0, 1)},
	{"one-cable-link-local", Options{Topology: OneCable, Port: -1, LauncherEnv: true, Addressing: LinkLocal}, pair("ibdev2netdev-port1-up.txt", 0, 0)},
	{"two-cables", Options{Topology: TwoCables, Port: -1, LauncherEnv: true}, allUp(2)},
	{"ring", Options{Topology: Ring, Port: -1, LauncherEnv: true}, allUp(3)},
	{"switch-4", Options{Topology: Switch, Port: -1, LauncherEnv: true}, switched(4)},
	{"six-node-ring", Options{Topology: topology.RingOf(6), Port: -1, LauncherEnv: true}, allUp(6)},
}

func buildCase(t testing.TB, tc topoCase) *Plan {
	t.Helper()
	p, err := Build(tc.nodes(t), tc.opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

// TestRingAddressing checks the three-node ring against the cabling NVIDIA
// documents: N1.P0–N2.P1, N2.P0–N3.P1, N3.P0–N1.P1, six subnets, each
// node the same host number on every rail.
func TestRingAddressing(t *testing.T) {
	p := buildCase(t, topoCases[4])
	type rail struct{ dev, addr, peer string }
	got := map[string][]rail{}
	for _, h := range p.Hosts {
		for _, r := range h.Rails {
			got[h.Host] = append(got[h.Host], rail{r.NetDev, r.Addr, strings.Join(r.Peers, ",")})
		}
	}
	want := map[string][]rail{
		"spark-1": {
			{"enp1s0f0np0", "192.168.100.10/24", "spark-2:enp1s0f1np1"},
			{"enP2p1s0f0np0", "192.168.101.10/24", "spark-2:enP2p1s0f1np1"},
			{"enp1s0f1np1", "192.168.104.10/24", "spark-3:enp1s0f0np0"},
			{"enP2p1s0f1np1", "192.168.105.10/24", "spark-3:enP2p1s0f0np0"},
		},
		"spark-2": {
			{"enp1s0f0np0", "192.168.102.11/24", "spark-3:enp1s0f1np1"},
			{"enP2p1s0f0np0", "192.168.103.11/24", "spark-3:enP2p1s0f1np1"},
			{"enp1s0f1np1", "192.168.100.11/24", "spark-1:enp1s0f0np0"},
			{"enP2p1s0f1np1", "192.168.101.11/24", "spark-1:enP2p1s0f0np0"},
		},
		"spark-3": {
			{"enp1s0f0np0", "192.168.104.12/24", "spark-1:enp1s0f1np1"},
			{"enP2p1s0f0np0", "192.168.105.12/24", "spark-1:enP2p1s0f1np1"},
			{"enp1s0f1np1", "192.168.102.12/24", "spark-2:enp1s0f0np0"},
			{"enP2p1s0f1np1", "192.168.103.12/24", "spark-2:enP2p1s0f0np0"},
		},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(rail{})); d != "" {
		t.Errorf("ring rails (-want +got):\n%s", d)
	}
	env := string(fileOf(t, p.Hosts[0], EnvPath))
	for _, line := range []string{"NCCL_IB_SUBNET_AWARE_ROUTING=1", "NCCL_SOCKET_IFNAME=enP7s7", "NCCL_IB_HCA=rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1"} {
		if !strings.Contains(env, line+"\n") {
			t.Errorf("ring env lacks %q:\n%s", line, env)
		}
	}
}

func fileOf(t testing.TB, h HostPlan, path string) []byte {
	t.Helper()
	for _, c := range h.Files {
		if c.Path == path {
			return c.New
		}
	}
	t.Fatalf("%s: no %s in plan", h.Host, path)
	return nil
}

// TestPlanIdempotent feeds each plan's files back as the hosts' current
// files, with the facts an applied node would show, and expects no change.
func TestPlanIdempotent(t *testing.T) {
	for _, tc := range topoCases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := tc.nodes(t)
			p, err := Build(nodes, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range p.Hosts {
				nodes[i].Current = map[string][]byte{}
				for _, c := range h.Files {
					nodes[i].Current[c.Path] = c.New
				}
				for k, v := range h.Sysctls {
					nodes[i].Facts.Sysctls[k] = v
				}
			}
			again, err := Build(nodes, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range again.Hosts {
				for _, c := range h.Files {
					if c.Changed() {
						t.Errorf("%s %s changes again:\n%s", h.Host, c.Path, Unified("a", "b", c.Old, c.New))
					}
				}
			}
		})
	}
}

func TestPlanRefusals(t *testing.T) {
	v := verbatim(t, "ibdev2netdev-port1-up.txt")[0]
	nodes := func() []Node {
		return []Node{{Facts: sparkNode(t, "spark-1", v)}, {Facts: sparkNode(t, "spark-2", v)}}
	}
	tests := []struct {
		name string
		edit func([]Node, *Options)
		want string
	}{
		{"ssh arrives on a rail", func(ns []Node, o *Options) { ns[1].SSHIface = "enP2p1s0f1np1" },
			"spark-2: refused: the plan would reconfigure enP2p1s0f1np1, which carries this SSH session"},
		{"subnet overlaps management", func(ns []Node, o *Options) {
			o.Subnets = []netip.Prefix{netip.MustParsePrefix("10.20.0.0/24"), netip.MustParsePrefix("192.168.101.0/24")}
		}, "spark-1: refused: rail subnet 10.20.0.0/24 overlaps 10.20.0.1/24 on enP7s7; choose other --subnets"},
		{"netplan file holds the management port", func(ns []Node, o *Options) {
			ns[0].Current = map[string][]byte{NetplanPath: []byte("network:\n  version: 2\n  ethernets:\n    enP7s7:\n      dhcp4: true\n")}
		}, "spark-1: refused: /etc/netplan/40-cx7.yaml configures enP7s7, which carries management traffic; replacing it would cut that off"},
		{"too few subnets", func(ns []Node, o *Options) { o.Subnets = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")} },
			"this topology needs 2 subnets, --subnets gives 1"},
		{"overlapping subnets", func(ns []Node, o *Options) {
			o.Subnets = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16"), netip.MustParsePrefix("10.9.1.0/24")}
		}, "subnets 10.9.0.0/16 and 10.9.1.0/24 overlap: every rail needs its own"},
		{"ring of two", func(ns []Node, o *Options) { o.Topology = Ring }, "topology three-node-ring needs exactly 3 nodes, got 2 (--topology ring plans a ring of the nodes given, 3 or more)"},
		{"four-node ring of two", func(ns []Node, o *Options) { o.Topology = topology.RingOf(4) }, "topology four-node-ring needs exactly 4 nodes, got 2 (--topology ring plans a ring of the nodes given, 3 or more)"},
		{"any ring of two", func(ns []Node, o *Options) { o.Topology = AnyRing }, "topology ring needs 3 nodes or more (each node's port 0 cabled to the next node's port 1), got 2"},
		{"no such port", func(ns []Node, o *Options) { o.Port = 7 }, "port 7: want -1 (the port with carrier) or 0..1"},
		{"negative port", func(ns []Node, o *Options) { o.Port = -2 }, "port -2: want -1 (the port with carrier) or 0..1"},
		{"unknown topology", func(ns []Node, o *Options) { o.Topology = "mesh" },
			`unknown topology "mesh" (want one of two-nodes-one-cable, two-nodes-two-cables, ring, switch)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nodes()
			opt := Options{Topology: OneCable, Port: -1}
			tt.edit(ns, &opt)
			_, err := Build(ns, opt)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Build error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestMergeNCCLConfKeepsOtherLines checks that a user's own /etc/nccl.conf
// lines survive and a stale NCCL_SOCKET_IFNAME=eth0 is replaced in place.
func TestMergeNCCLConfKeepsOtherLines(t *testing.T) {
	cur := "# site settings\nNCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_IFNAME=eth1\n"
	env := []fabric.Var{{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f1np1"}, {Name: "NCCL_IB_HCA", Value: "rocep1s0f1,roceP2p1s0f1"}, {Name: "UCX_NET_DEVICES", Value: "enp1s0f1np1"}}
	got := string(mergeNCCLConf([]byte(cur), env))
	want := "# site settings\nNCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=enp1s0f1np1\n\n# Set by sparkrig fix (sparkrig doctor says why).\nNCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1\n"
	if got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	if again := string(mergeNCCLConf([]byte(got), env)); again != got {
		t.Errorf("second merge changed the file:\n%s", again)
	}
}

// TestPlaybookNetplanParses reads NVIDIA's own netplan files back, as the
// guard does with whatever 40-cx7.yaml a node has.
func TestPlaybookNetplanParses(t *testing.T) {
	for name, want := range map[string][]string{
		"netplan-01-two-sparks-port1.txt":  {"enP2p1s0f1np1", "enp1s0f1np1"},
		"netplan-03-three-sparks-ring.txt": {"enP2p1s0f0np0", "enP2p1s0f1np1", "enp1s0f0np0", "enp1s0f1np1"},
		"netplan-05-ib-checker.txt":        {"enP2p1s0f1np1", "enp1s0f1np1"},
	} {
		got, err := netplanIfaces([]byte(verbatim(t, name)[0]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, sorted(got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestPlanAgainstPlaybookFile diffs against NVIDIA's "Connect Two Sparks"
// file as the node's current 40-cx7.yaml: the file is edited, not replaced —
// the addresses and every key the user wrote stay, MTU 9000 is added, and
// nothing is removed.
func TestPlanAgainstPlaybookFile(t *testing.T) {
	v := verbatim(t, "ibdev2netdev-port1-up.txt")[0]
	files := verbatim(t, "netplan-01-two-sparks-port1.txt")
	nodes := []Node{
		{Facts: sparkNode(t, "spark-1", v), Current: map[string][]byte{NetplanPath: []byte(files[0])}},
		{Facts: sparkNode(t, "spark-2", v), Current: map[string][]byte{NetplanPath: []byte(files[1])}},
	}
	p, err := Build(nodes, Options{Topology: OneCable, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	var c Change
	for _, f := range p.Hosts[0].Files {
		if f.Path == NetplanPath {
			c = f
		}
	}
	d := Unified("a"+NetplanPath, "b"+NetplanPath, c.Old, c.New)
	for _, line := range []string{"       dhcp4: no\n", "+      mtu: 9000\n", "         - 192.168.101.10/24\n"} {
		if !strings.Contains(d, line) {
			t.Errorf("diff lacks %q:\n%s", line, d)
		}
	}
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			t.Errorf("the merge removed a line the user wrote: %q\n%s", l, d)
		}
	}
}

func TestPlanJSON(t *testing.T) {
	p := buildCase(t, topoCases[0])
	b, err := json.Marshal(p.Hosts[0].Files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["path"] != NetplanPath || got["changed"] != true || got["mode"] != float64(0o600) ||
		!strings.HasPrefix(got["diff"].(string), "--- /dev/null\n+++ b/etc/netplan/40-cx7.yaml\n") ||
		!strings.Contains(got["content"].(string), "      addresses: [192.168.100.10/24]\n") {
		t.Errorf("JSON change: %s", b)
	}
}

// TestRingPlaybookAddressingKept plans the three-node ring exactly as NVIDIA's
// "Connect Three Sparks" playbook addresses it (192.168.0-5.x, .1/.2 per
// cable, set live and in 40-cx7.yaml, no MTU): fix keeps every address, and
// its only change to each file is the MTU the playbook leaves out.
func TestRingPlaybookAddressingKept(t *testing.T) {
	files := verbatim(t, "netplan-03-three-sparks-ring.txt")
	nodes := allUp(3)(t)
	for i := range nodes {
		cfg, err := facts.ParseNetplan(NetplanPath, []byte(files[i]))
		if err != nil {
			t.Fatal(err)
		}
		n := nodes[i].Facts
		n.NetConfig = cfg
		for _, c := range cfg {
			d := n.NetDev(c.Name)
			for _, a := range c.Addrs {
				d.Addrs = append(d.Addrs, facts.Addr{CIDR: a, Family: "inet", Scope: "global"})
			}
		}
		nodes[i].Current = map[string][]byte{NetplanPath: []byte(files[i])}
	}
	p, err := Build(nodes, Options{Topology: Ring, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range p.Hosts {
		for _, r := range h.Rails {
			if !strings.HasPrefix(r.Change, "keep 192.168.") {
				t.Errorf("%s %s: %q, want the playbook's address kept", h.Host, r.NetDev, r.Change)
			}
		}
		c := h.Files[0]
		if c.Path != NetplanPath {
			t.Fatalf("%s: first change is %s", h.Host, c.Path)
		}
		d := Unified("a", "b", c.Old, c.New)
		if strings.Count(d, "\n+      mtu: 9000\n") != 4 {
			t.Errorf("%s: want MTU 9000 added on the four twins:\n%s", h.Host, d)
		}
		for _, l := range strings.Split(d, "\n") {
			if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
				t.Errorf("%s: the plan removes %q", h.Host, l)
			}
		}
	}
	if got := p.Hosts[1].Rails; got[0].Addr != "192.168.4.1/24" || got[2].Addr != "192.168.0.2/24" {
		t.Errorf("spark-2 rails %+v", got)
	}
}

// TestLauncherEnvOnlyWhereAskedOrStale: no finding asks for the launcher
// environment, so a plan writes it only with LauncherEnv; one that exists
// is rewritten only when a setting differs (comments and order do not
// count), and that change resolves the file's own finding, which names
// the settings that differ.
func TestLauncherEnvOnlyWhereAskedOrStale(t *testing.T) {
	tc := topoCases[3] // two cables: both twins of both ports
	has := func(p *Plan) *Change {
		for i := range p.Hosts[0].Files {
			if c := &p.Hosts[0].Files[i]; c.Path == EnvPath {
				return c
			}
		}
		return nil
	}
	opt := tc.opt
	opt.LauncherEnv = false
	p, err := Build(tc.nodes(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if c := has(p); c != nil {
		t.Errorf("unasked, the plan writes %s: %s", EnvPath, c.Why)
	}
	current := renderEnv(p.Env)

	nodes := tc.nodes(t)
	nodes[0].Current = map[string][]byte{EnvPath: append([]byte("# my note\n"), current...)}
	if p, err = Build(nodes, opt); err != nil {
		t.Fatal(err)
	}
	if c := has(p); c != nil || len(LauncherEnvFindings(p)) != 0 {
		t.Errorf("a current file with a comment of its own is rewritten: %+v", c)
	}

	nodes = tc.nodes(t)
	nodes[0].Current = map[string][]byte{EnvPath: []byte("NCCL_IB_HCA=rocep1s0f1\nGLOO_SOCKET_IFNAME=eth0\n")}
	if p, err = Build(nodes, opt); err != nil {
		t.Fatal(err)
	}
	c := has(p)
	if c == nil || !slices.Equal(c.Resolves, []report.Key{LauncherEnvKey("spark-1")}) {
		t.Fatalf("a stale file: %+v", c)
	}
	fs := LauncherEnvFindings(p)
	if len(fs) != 1 || fs[0].Key() != LauncherEnvKey("spark-1") || fs[0].Severity != report.Warn ||
		!strings.Contains(fs[0].Observed, "NCCL_IB_HCA=rocep1s0f1 (wants rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1)") ||
		!strings.Contains(fs[0].Observed, "UCX_NET_DEVICES missing") {
		t.Errorf("findings %+v", fs)
	}
}

// TestFourNodeRingChangesResolveTheRingFindings: a four-node ring cabled
// and addressed, whose nodes neither forward nor route to the subnets they
// are not on, fails the doctor's ring checks; the plan's own changes are
// what resolve them (its routes in the netplan file, forwarding in the
// kernel parameters), so none is left to a person.
func TestFourNodeRingChangesResolveTheRingFindings(t *testing.T) {
	opt := Options{Topology: topology.RingOf(4), Port: -1}
	first, err := Build(allUp(4)(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	nodes := allUp(4)(t)
	for i := range nodes {
		n := nodes[i].Facts
		var rails []Rail
		for _, r := range first.Hosts[i].Rails {
			r.Routes = nil // addressed by hand, as NVIDIA's ring playbook leaves it: no routes
			rails = append(rails, r)
		}
		withRails(n, rails)
		n.NetConfig = nil // live only: the plan persists it
		n.Sysctls["net.ipv4.ip_forward"] = "0"
		n.Sources[facts.SrcRoutes] = facts.SourceStatus{Status: "ok"}
	}
	fs := make([]*facts.Node, len(nodes))
	for i, n := range nodes {
		fs[i] = n.Facts
	}
	want := map[string]bool{}
	for _, f := range cluster.Analyze(fs).Findings {
		if strings.HasPrefix(f.ID, "cluster.ring-") && (f.Severity == report.Fail || f.Severity == report.Warn) {
			want[f.ID+" "+f.Host] = true
		}
	}
	if !want["cluster.ring-forwarding spark-1"] || !want["cluster.ring-routes spark-3"] {
		t.Fatalf("the doctor's ring findings before the plan: %v", want)
	}
	p, err := Build(nodes, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range p.Hosts {
		for _, c := range h.Files {
			for _, k := range c.Resolves {
				if strings.HasPrefix(k.ID, "cluster.ring-") {
					got[k.ID+" "+k.Host] = true
					if wantPath := map[string]string{"cluster.ring-forwarding": SysctlPath, "cluster.ring-routes": NetplanPath}[k.ID]; wantPath != "" && wantPath != c.Path {
						t.Errorf("%s %s resolved by %s, want %s", k.ID, k.Host, c.Path, wantPath)
					}
				}
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ring findings the plan resolves (-doctor's +plan's):\n%s", d)
	}
}
