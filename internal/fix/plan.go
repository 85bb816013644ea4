// Package fix writes the network and NCCL configuration a cluster topology
// needs: netplan for the ConnectX-7 netdevs, a sysctl drop-in, /etc/nccl.conf
// lines and an environment file for launchers. Planning is pure (facts and
// options in, files out); applying and rolling back run POSIX sh on the
// host through a Target (any runner: SSH, srun, kubectl), so the same logic
// serves every transport and the test rig's network namespaces.
package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"strings"

	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
	"github.com/sparkrig/sparkrig/internal/topology"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// Topology is how the nodes' CX-7 ports are cabled (internal/topology).
type Topology = topology.Kind

// Topologies fix configures.
const (
	OneCable  = topology.OneCable
	TwoCables = topology.TwoCables
	Ring      = topology.Ring
	AnyRing   = topology.AnyRing
	Switch    = topology.Switch
)

// Local plans only what one node needs whatever it is cabled to: the kernel
// parameters and NCCL settings of its own findings, no rails. It is the plan
// of a single node and of nodes whose cabling cannot be told.
const Local = topology.SingleNode

// Topologies lists the layouts fix writes configuration for.
var Topologies = topology.Configurable

// Addressing modes for the CX-7 netdevs.
const (
	Static    = "static"     // fixed /24 per rail (NVIDIA's "manual" option)
	LinkLocal = "link-local" // IPv4 link-local on every twin (NVIDIA's "automatic" option)
)

// Paths of the files fix owns.
const (
	NetplanPath = "/etc/netplan/40-cx7.yaml"
	SysctlPath  = cluster.SysctlDropIn
	NCCLConf    = "/etc/nccl.conf"
	EnvPath     = "/etc/sparkrig/cluster.env"
)

// Options choose what the plan writes.
type Options struct {
	Topology   Topology
	Addressing string         // Static (default) or LinkLocal
	Subnets    []netip.Prefix // one per rail; empty: 192.168.100.0/24, 192.168.101.0/24, ...
	FirstHost  int            // host number of the first node on every rail (default 10)
	MTU        int            // default tuning.RailMTU
	// Port is the QSFP port cabled in the one-cable and switch topologies;
	// -1 picks the port whose twins have carrier, else port 1.
	Port int
	// SocketIfname overrides the bootstrap interface (NCCL_SOCKET_IFNAME and friends).
	SocketIfname string
	// Renumber gives every rail a fresh address from the default scheme even
	// where the addressing in place is valid.
	Renumber bool
	// LauncherEnv writes EnvPath where it does not exist yet: no finding
	// asks for it, so only the user can. One that exists is kept current
	// (a stale one is the doctor's nccl.launcher-env finding).
	LauncherEnv bool
}

func (o *Options) setDefaults() {
	if o.Addressing == "" {
		o.Addressing = Static
	}
	if o.FirstHost == 0 {
		o.FirstHost = 10
	}
	if o.MTU == 0 {
		o.MTU = tuning.RailMTU
	}
}

// Node is one host's input to the plan.
type Node struct {
	Facts *facts.Node
	// Current holds the present content of the files fix writes, keyed by
	// path; a path absent from the map does not exist on the host.
	Current map[string][]byte
	// SSHIface is the interface the SSH session arrives on ("" when unknown,
	// e.g. for a snapshot).
	SSHIface string
	// Unknown lists files whose present content the evidence does not hold
	// (a snapshot that could not read them): they are planned as new.
	Unknown []string
}

// NodeFromSnapshot is a node's input to the plan from its snapshot: its
// facts and the present content of the files fix writes.
func NodeFromSnapshot(s *snapshot.Snapshot) Node { return NodeFrom(facts.FromSnapshot(s), s) }

// Evidence reports whether NodeFrom reads a snapshot's storage key: what a
// run must keep of a snapshot once its facts are read.
func Evidence(key string) bool {
	if key == snapshot.CmdKey("ssh-connection", "stdout") {
		return true
	}
	for _, p := range Paths() {
		if key == snapshot.FileKey(p) {
			return true
		}
	}
	return false
}

// NodeFrom is NodeFromSnapshot for facts already read from s.
func NodeFrom(f *facts.Node, s *snapshot.Snapshot) Node {
	n := Node{Facts: f, Current: map[string][]byte{}, SSHIface: sshIface(s, f)}
	for _, f := range Paths() {
		if b, ok := s.File(f); ok {
			n.Current[f] = b
		} else if !capturedAbsent(s, f) {
			n.Unknown = append(n.Unknown, f)
		}
	}
	return n
}

// sshIface is the interface an SSH capture arrived on: the netdev holding
// the server address of SSH_CONNECTION ("client cport server sport").
func sshIface(s *snapshot.Snapshot, n *facts.Node) string {
	out, _, ok := s.Cmd("ssh-connection")
	if !ok {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return ""
	}
	for _, d := range n.NetDevs {
		for _, a := range d.Addrs {
			if ip, _, _ := strings.Cut(a.CIDR, "/"); ip == f[2] {
				return d.Name
			}
		}
	}
	return ""
}

// capturedAbsent reports whether the snapshot shows f does not exist: its own
// item says missing, or a glob that covers it was read (and f was not among
// what it found).
func capturedAbsent(s *snapshot.Snapshot, f string) bool {
	if it, ok := s.Item(snapshot.KindFile, f); ok {
		return it.Status == snapshot.StatusMissing // denied or unreadable: not known
	}
	if len(s.List(path.Dir(f))) > 0 {
		return true // its directory was read, and f was not in it
	}
	for _, it := range s.Manifest.Items {
		if it.Kind != snapshot.KindFile {
			continue
		}
		if it.Name == f {
			return it.Status == snapshot.StatusMissing
		}
		if ok, _ := path.Match(it.Name, f); ok && it.Name != f && it.Status != snapshot.StatusDenied && it.Status != snapshot.StatusError {
			return true
		}
	}
	return false
}

// Plan is what fix would change on every node.
type Plan struct {
	Topology   Topology   `json:"topology"`
	Addressing string     `json:"addressing"`
	Hosts      []HostPlan `json:"hosts"`
	// Env is the environment the cluster's jobs need (internal/fabric, as
	// bench derives it); Notes say where the facts forced a compromise.
	Env   []fabric.Var  `json:"env"`
	Notes []fabric.Note `json:"notes,omitempty"`
}

// HostPlan is one node's part of the plan.
type HostPlan struct {
	Host  string   `json:"host"`
	Rails []Rail   `json:"rails"`
	Files []Change `json:"files"`
	// Protected lists the interfaces fix must never touch on this host.
	Protected []string `json:"protected"`
	Notes     []string `json:"notes,omitempty"`
	// Sysctls are the runtime values the drop-in sets, for verification.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Reactivate is set where the files are right but the node does not run
	// them (a twin down, an MTU set back by hand): activating the files
	// in place is the change.
	Reactivate *Reactivation `json:"reactivate,omitempty"`
}

// Reactivation makes the node run the rails its netplan file already holds.
type Reactivation struct {
	// Why says what the live state lacks ("enP2p1s0f1np1 is down").
	Why string `json:"why"`
	// Resolves lists the doctor findings it fixes.
	Resolves []report.Key `json:"resolves,omitempty"`
}

// Command is what activation runs on the node.
func (r *Reactivation) Command() string { return "netplan apply" }

// Rail is one addressed CX-7 netdev and the peers it faces.
type Rail struct {
	NetDev  string   `json:"netdev"`
	RDMADev string   `json:"rdma_dev"`
	Port    int      `json:"port"`
	Twin    int      `json:"twin"`           // 0 for the PCI domain 0000 function, 1 for the other
	Addr    string   `json:"addr,omitempty"` // "192.168.100.10/24"; empty for link-local
	Subnet  string   `json:"subnet,omitempty"`
	MTU     int      `json:"mtu"`
	Peers   []string `json:"peers"` // "host:netdev"
	// Change says how the address was chosen: "keep …" (the address in
	// place), "new: …" or "was …: why"; empty for link-local.
	Change string `json:"change,omitempty"`
	// Routes leave through this rail to subnets of nodes it is not cabled
	// to (rings of four or more nodes).
	Routes []Route `json:"routes,omitempty"`
}

// Route sends traffic for a subnet through a neighbour.
type Route struct {
	To  string `json:"to"`  // "192.168.4.0/24"
	Via string `json:"via"` // "192.168.0.2"
}

// Change is one file fix writes.
type Change struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"`
	Old  []byte      `json:"-"`
	// OldExists is false when the file does not exist yet.
	OldExists bool   `json:"old_exists"`
	New       []byte `json:"-"`
	Why       string `json:"why"`
	// Resolves lists the doctor findings the change fixes.
	Resolves []report.Key `json:"resolves,omitempty"`
}

// Changed reports whether writing the file would change anything.
func (c Change) Changed() bool { return !c.OldExists || string(c.Old) != string(c.New) }

// Changed reports whether any file of the host would change or the host
// must be brought to the state its files describe.
func (h HostPlan) Changed() bool {
	if h.Reactivate != nil {
		return true
	}
	for _, c := range h.Files {
		if c.Changed() {
			return true
		}
	}
	return false
}

// Build plans every node. Nodes are in the order the user gave them: node i
// gets host number FirstHost+i on every rail. An error names the first node
// or option that makes a safe plan impossible.
func Build(nodes []Node, opt Options) (*Plan, error) {
	opt.setDefaults()
	if opt.Topology == Local {
		return buildLocal(nodes, opt)
	}
	if opt.Topology == AnyRing && len(nodes) >= 3 {
		opt.Topology = topology.RingOf(len(nodes))
	}
	if err := validate(nodes, opt); err != nil {
		return nil, err
	}
	ports := make([]cx7Ports, len(nodes))
	for i, n := range nodes {
		ports[i] = findCX7(n.Facts)
	}
	cables, err := cabling(opt, ports)
	if err != nil {
		return nil, err
	}
	rails, err := assign(nodes, ports, cables, opt)
	if err != nil {
		return nil, err
	}
	if opt.Topology.IsRing() && len(nodes) >= 4 {
		ringRoutes(rails)
	}
	p := &Plan{Topology: opt.Topology, Addressing: opt.Addressing}
	env, envNotes := clusterEnv(nodes, rails, opt)
	p.Env, p.Notes = env, envNotes
	for i, n := range nodes {
		hp, err := hostPlan(n, rails[i], opt, ports[i], env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Facts.Host, err)
		}
		p.Hosts = append(p.Hosts, hp)
	}
	attributeCluster(nodes, p)
	return p, nil
}

// buildLocal plans each node on its own: no rails, no cluster environment.
func buildLocal(nodes []Node, opt Options) (*Plan, error) {
	p := &Plan{Topology: Local, Addressing: opt.Addressing}
	seen := map[string]bool{}
	for i, n := range nodes {
		if n.Facts == nil || n.Facts.Host == "" {
			return nil, fmt.Errorf("node %d has no facts", i+1)
		}
		if seen[n.Facts.Host] {
			return nil, fmt.Errorf("host %s is listed twice", n.Facts.Host)
		}
		seen[n.Facts.Host] = true
		hp, err := hostPlan(n, nil, opt, findCX7(n.Facts), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Facts.Host, err)
		}
		p.Hosts = append(p.Hosts, hp)
	}
	return p, nil
}

func validate(nodes []Node, opt Options) error {
	if opt.Topology == AnyRing && len(nodes) < 3 {
		return fmt.Errorf("topology ring needs 3 nodes or more (each node's port 0 cabled to the next node's port 1), got %d", len(nodes))
	}
	want := map[Topology][2]int{OneCable: {2, 2}, TwoCables: {2, 2}, Switch: {2, 1 << 16}}
	r, ok := want[opt.Topology]
	if n := opt.Topology.Nodes(); opt.Topology.IsRing() && n >= 3 {
		r, ok = [2]int{n, n}, true
	}
	if !ok {
		return fmt.Errorf("unknown topology %q (want one of %s)", opt.Topology, topologyList())
	}
	if len(nodes) < r[0] || len(nodes) > r[1] {
		if r[0] == r[1] {
			if opt.Topology.IsRing() {
				return fmt.Errorf("topology %s needs exactly %d nodes, got %d (--topology ring plans a ring of the nodes given, 3 or more)", opt.Topology, r[0], len(nodes))
			}
			return fmt.Errorf("topology %s needs exactly %d nodes, got %d", opt.Topology, r[0], len(nodes))
		}
		return fmt.Errorf("topology %s needs at least %d nodes, got %d", opt.Topology, r[0], len(nodes))
	}
	if opt.Addressing != Static && opt.Addressing != LinkLocal {
		return fmt.Errorf("unknown addressing %q (want static or link-local)", opt.Addressing)
	}
	if opt.Addressing == LinkLocal && opt.Topology != OneCable {
		return fmt.Errorf("link-local addressing is documented for two nodes on one cable only; use static for %s", opt.Topology)
	}
	if opt.Port < -1 || opt.Port >= len(platform.SparkPorts) {
		return fmt.Errorf("port %d: want -1 (the port with carrier) or 0..%d", opt.Port, len(platform.SparkPorts)-1)
	}
	if opt.MTU < 1280 || opt.MTU > 9216 {
		return fmt.Errorf("MTU %d out of range 1280..9216", opt.MTU)
	}
	if opt.FirstHost < 1 || opt.FirstHost+len(nodes)-1 > 254 {
		return fmt.Errorf("host numbers %d..%d do not fit a /24", opt.FirstHost, opt.FirstHost+len(nodes)-1)
	}
	seen := map[string]bool{}
	for i, n := range nodes {
		if n.Facts == nil || n.Facts.Host == "" {
			return fmt.Errorf("node %d has no facts", i+1)
		}
		if seen[n.Facts.Host] {
			return fmt.Errorf("host %s is listed twice", n.Facts.Host)
		}
		seen[n.Facts.Host] = true
	}
	return nil
}

func topologyList() string { return topology.Names(Topologies) }

// hostPlan renders one node's files from its rails: only what a doctor
// finding (warn or fail) requires changes, and files the user wrote are
// edited, never replaced.
func hostPlan(n Node, rails []Rail, opt Options, ports cx7Ports, env []fabric.Var) (HostPlan, error) {
	hp := HostPlan{Host: n.Facts.Host, Rails: rails, Notes: ports.notes}
	hp.Protected = protected(n)
	for _, u := range n.Unknown {
		hp.Notes = append(hp.Notes, "the evidence does not hold "+u+"; it is taken as absent")
	}
	if err := guard(n, hp); err != nil {
		return hp, err
	}
	hp.Notes = append(hp.Notes, railNotes(n.Facts, rails)...)
	var np []byte
	switch {
	case opt.Topology == Local:
		// no rails: the node's netplan is not fix's to write
	case opt.Addressing == LinkLocal:
		np = renderNetplan(rails, opt)
	default:
		var err error
		if np, err = mergeNetplan(n.Current[NetplanPath], rails, func(r Rail) persistNeeds { return needs(n.Facts, r) }); err != nil {
			return hp, fmt.Errorf("%w: %v; move it aside first", ErrRefused, err)
		}
		if len(np) > 0 && n.Current[NetplanPath] == nil {
			np = append([]byte(netplanHeader), np...)
		}
	}
	if c := change(n, NetplanPath, 0o600, np, "persist the rails' addresses and MTU "+fmt.Sprint(opt.MTU)); len(np) > 0 && c.Changed() {
		hp.Files = append(hp.Files, c)
	} else if why := liveDiffers(n.Facts, rails); why != "" {
		hp.Reactivate = &Reactivation{Why: why}
	}
	var extra []sysctlSetting
	if opt.Topology.IsRing() && opt.Topology.Nodes() >= 4 {
		extra = ringSysctls
	}
	sc, values := renderSysctl(n.Facts, n.Current[SysctlPath], extra)
	hp.Sysctls = values
	if c := change(n, SysctlPath, 0o644, sc, "TCP buffers and port range for NCCL/Gloo/MPI bootstrap and socket traffic"); sc != nil && c.Changed() {
		hp.Files = append(hp.Files, c)
	}
	if need := requiredNCCL(n.Facts, env); len(need) > 0 {
		if conf := mergeNCCLConf(n.Current[NCCLConf], need); !bytes.Equal(conf, n.Current[NCCLConf]) {
			hp.Files = append(hp.Files, change(n, NCCLConf, 0o644, conf, "NCCL reads these for every job, whatever the launcher"))
		}
	}

	// The launcher environment is written where the user asks for it, and
	// kept current once it exists: a stale one is a finding of its own. A
	// node planned on its own has no cluster settings to write.
	if _, exists := n.Current[EnvPath]; opt.Topology != Local && (exists || opt.LauncherEnv) {
		why := "the same settings for vLLM, PyTorch (Gloo), mpirun and UCX launchers"
		if !exists {
			why += " (asked for with --launcher-env)"
		}
		c := change(n, EnvPath, 0o644, renderEnv(env), why)
		switch {
		case !exists:
			hp.Files = append(hp.Files, c)
		case len(envDiffers(c.Old, env)) > 0:
			c.Resolves = []report.Key{LauncherEnvKey(n.Facts.Host)}
			hp.Files = append(hp.Files, c)
		}
	}
	attribute(n.Facts, &hp)
	if opt.Addressing == LinkLocal {
		hp.Notes = append(hp.Notes, "link-local puts both twins in 169.254.0.0/16 and the addresses change on reboot; NVIDIA documents it, but static addressing keeps the twins on distinct subnets")
	}
	return hp, nil
}

// netplanHeader starts a 40-cx7.yaml fix creates.
const netplanHeader = "# Written by sparkrig fix: the ConnectX-7 rails' addresses and MTU.\n# Both twins of every cabled port on their own subnet; sparkrig fix edits only\n# the stanzas it needs and keeps everything else in this file.\n"

func change(n Node, path string, mode fs.FileMode, content []byte, why string) Change {
	old, ok := n.Current[path]
	return Change{Path: path, Mode: mode, Old: old, OldExists: ok, New: content, Why: why}
}

// MarshalJSON adds the proposed content and the unified diff to a change.
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	oldName := "a" + c.Path
	if !c.OldExists {
		oldName = "/dev/null"
	}
	return json.Marshal(struct {
		plain
		Changed bool   `json:"changed"`
		Content string `json:"content"`
		Diff    string `json:"diff,omitempty"`
	}{plain(c), c.Changed(), string(c.New), Unified(oldName, "b"+c.Path, c.Old, c.New)})
}
