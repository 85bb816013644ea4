package fix

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// flagged runs the doctor's checks on n and returns its findings worse than
// ok (info, warn, fail), keyed "ID subject".
func flagged(n *facts.Node) map[string]report.Finding {
	fs, _ := check.Run(n, check.DetectProfile(n))
	out := map[string]report.Finding{}
	for _, f := range fs {
		switch f.Severity {
		case report.Info, report.Warn, report.Fail:
			out[f.ID+" "+f.Subject] = f
		}
	}
	return out
}

// severe keeps the warn and fail findings: the ones a change is made for.
func severe(fs map[string]report.Finding) map[string]report.Finding {
	out := map[string]report.Finding{}
	for k, f := range fs {
		if f.Severity == report.Warn || f.Severity == report.Fail {
			out[k] = f
		}
	}
	return out
}

// resolved lists the findings of before that after no longer has, sorted.
func resolved(before, after map[string]report.Finding) []report.Key {
	var out []report.Key
	for k, f := range before {
		if _, still := after[k]; !still {
			out = append(out, f.Key())
		}
	}
	sortKeys(out)
	return out
}

func sortKeys(ks []report.Key) {
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		return a.Subject < b.Subject
	})
}

// attribute runs the doctor on the node as it is, then as it would be after
// each file of the plan in turn (netplan, sysctl, nccl.conf), and records on
// each change the findings it makes go away.
func attribute(n *facts.Node, hp *HostPlan) {
	steps := []struct {
		path  string
		apply func(*facts.Node)
	}{
		{NetplanPath, func(s *facts.Node) { withRails(s, hp.Rails) }},
		{SysctlPath, func(s *facts.Node) {
			for k, v := range hp.Sysctls {
				s.Sysctls[k] = v
			}
		}},
		{NCCLConf, func(s *facts.Node) {
			for _, c := range hp.Files {
				if c.Path == NCCLConf {
					s.NCCL.ConfFile = facts.ParseKeyValues(c.New)
				}
			}
		}},
	}
	sim := cloneNode(n)
	before := flagged(sim)
	for _, st := range steps {
		st.apply(sim)
		after := flagged(sim)
		for i := range hp.Files {
			if hp.Files[i].Path == st.path {
				hp.Files[i].Resolves = resolved(before, after)
			}
		}
		if st.path == NetplanPath && hp.Reactivate != nil {
			hp.Reactivate.Resolves = resolved(before, after)
		}
		before = after
	}
}

// attributeCluster adds to each host's changes the cluster findings (links,
// cabling, MTU consistency, a ring's forwarding and routes) they make go
// away: the cluster is simulated as the netplan files would leave it (rails
// and their routes), then with the kernel parameters too; a finding gone
// after a step goes with that step's change on the hosts it names, and one
// that names only hosts the step leaves alone (the peer of an unaddressed
// twin) with every host the step does change.
func attributeCluster(nodes []Node, p *Plan) {
	sim := make([]*facts.Node, len(nodes))
	for i, n := range nodes {
		sim[i] = cloneNode(n.Facts)
	}
	steps := []struct {
		path  string
		apply func(n *facts.Node, hp *HostPlan)
	}{
		{NetplanPath, func(n *facts.Node, hp *HostPlan) { withRails(n, hp.Rails) }},
		{SysctlPath, func(n *facts.Node, hp *HostPlan) {
			for k, v := range hp.Sysctls {
				n.Sysctls[k] = v
			}
		}},
	}
	before := clusterFlagged(sim)
	for _, st := range steps {
		for i := range sim {
			st.apply(sim[i], &p.Hosts[i])
		}
		after := clusterFlagged(sim)
		var gone []report.Finding
		for k, f := range before {
			if _, ok := after[k]; !ok {
				gone = append(gone, f)
			}
		}
		attributeStep(p, st.path, gone)
		before = after
	}
}

// attributeStep records each finding of gone on the change of path (or,
// for the netplan file, the activation) of the hosts it names.
func attributeStep(p *Plan, path string, gone []report.Finding) {
	changes := func(hp *HostPlan) bool {
		if path == NetplanPath && hp.Reactivate != nil {
			return true
		}
		return slices.ContainsFunc(hp.Files, func(c Change) bool { return c.Path == path && c.Changed() })
	}
	names := func(f report.Finding, host string) bool {
		return f.Host == host || strings.Contains(f.Subject, host+":") || f.Host == "" && !strings.Contains(f.Subject, ":")
	}
	for i := range p.Hosts {
		hp := &p.Hosts[i]
		mine := map[string]report.Finding{}
		for _, f := range gone {
			named := false
			for j := range p.Hosts {
				named = named || names(f, p.Hosts[j].Host) && changes(&p.Hosts[j])
			}
			if names(f, hp.Host) || !named {
				mine[f.ID+" "+f.Host+" "+f.Subject] = f
			}
		}
		if len(mine) == 0 {
			continue
		}
		for j := range hp.Files {
			if c := &hp.Files[j]; c.Path == path && c.Changed() {
				c.Resolves = append(c.Resolves, resolved(mine, nil)...)
				sortKeys(c.Resolves)
			}
		}
		if r := hp.Reactivate; r != nil && path == NetplanPath {
			r.Resolves = append(r.Resolves, resolved(mine, nil)...)
			sortKeys(r.Resolves)
		}
	}
}

// clusterFlagged runs the doctor's cluster checks and returns the findings
// worse than ok, keyed "ID host subject".
func clusterFlagged(nodes []*facts.Node) map[string]report.Finding {
	out := map[string]report.Finding{}
	for _, f := range cluster.Analyze(nodes).Findings {
		switch f.Severity {
		case report.Warn, report.Fail:
			out[f.ID+" "+f.Host+" "+f.Subject] = f
		}
	}
	return out
}

// liveDiffers says how the node's running rails differ from what their
// file gives them, or "" when they run it.
func liveDiffers(n *facts.Node, rails []Rail) string {
	var why []string
	for _, r := range rails {
		d := n.NetDev(r.NetDev)
		if d == nil {
			continue
		}
		if d.OperState != "" && d.OperState != "up" {
			why = append(why, r.NetDev+" is "+d.OperState)
		}
		if d.MTU != r.MTU {
			why = append(why, fmt.Sprintf("%s runs MTU %d, its file says %d", r.NetDev, d.MTU, r.MTU))
		}
		if r.Addr != "" && !slices.ContainsFunc(d.Addrs, func(a facts.Addr) bool { return a.CIDR == r.Addr }) {
			why = append(why, r.NetDev+" lacks "+r.Addr)
		}
	}
	return strings.Join(why, "; ")
}

// withRails sets the rails' addresses and MTU as the netplan file would,
// persisted in /etc/netplan/40-cx7.yaml, and brings them up as activating
// it does.
func withRails(n *facts.Node, rails []Rail) {
	var cfg []facts.IfaceConfig
	for _, c := range n.NetConfig {
		if c.Source != NetplanPath {
			cfg = append(cfg, c)
		}
	}
	for _, r := range rails {
		d := n.NetDev(r.NetDev)
		if d == nil {
			continue
		}
		d.MTU = r.MTU
		if d.OperState != "" {
			d.OperState = "up"
		}
		var addrs []facts.Addr
		for _, a := range d.Addrs {
			if a.Family != "inet" || strings.HasPrefix(a.CIDR, "169.254.") && r.Addr == "" {
				addrs = append(addrs, a)
			}
		}
		ic := facts.IfaceConfig{Name: r.NetDev, Source: NetplanPath, Tool: "netplan", MTU: r.MTU, LinkLocal: r.Addr == ""}
		if r.Addr != "" {
			addrs = append(addrs, facts.Addr{CIDR: r.Addr, Family: "inet", Scope: "global"})
			ic.Addrs = []string{r.Addr}
		}
		d.Addrs = addrs
		cfg = append(cfg, ic)
		for _, rt := range r.Routes {
			if !slices.ContainsFunc(n.Routes, func(have facts.Route) bool { return have.Dst == rt.To && have.Gateway == rt.Via }) {
				n.Routes = append(n.Routes, facts.Route{Dst: rt.To, Gateway: rt.Via, Dev: r.NetDev, Proto: "static"})
			}
		}
	}
	n.NetConfig = cfg
}

// cloneNode copies the parts of n the simulation changes.
func cloneNode(n *facts.Node) *facts.Node {
	c := *n
	c.NetDevs = make([]facts.NetDev, len(n.NetDevs))
	for i, d := range n.NetDevs {
		d.Addrs = append([]facts.Addr(nil), d.Addrs...)
		c.NetDevs[i] = d
	}
	c.NetConfig = append([]facts.IfaceConfig(nil), n.NetConfig...)
	c.Routes = append([]facts.Route(nil), n.Routes...)
	c.Sysctls = copyMap(n.Sysctls)
	c.NCCL.ConfFile = copyMap(n.NCCL.ConfFile)
	c.NCCL.Env = copyMap(n.NCCL.Env)
	return &c
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
