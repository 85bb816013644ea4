// Package doctor is the audit every command shares: acquired nodes → facts
// → checks → cluster model → the fix plan → one remedy per finding → the
// report. doctor, fix --plan and report all audit through Audit, so what
// they say of a node cannot differ.
package doctor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// Options of one audit.
type Options struct {
	// Profile forces a platform profile; ProfileUnknown detects it per node.
	Profile check.Profile
	// Version and Now stamp the report.
	Version string
	Now     time.Time
	// Fix chooses the plan the change remedies come from; a zero Topology
	// is detected from the nodes, and nodes whose cabling cannot be told are
	// planned each on its own (fix.Local).
	Fix fix.Options
}

// Result is one audit: the report, the plan its change remedies come from,
// and why no cluster plan could be made (nil when one was).
type Result struct {
	Report  *report.Report
	Plan    *fix.Plan
	PlanErr error
	// Detected says how the plan's topology was told from the nodes ("" when
	// it was given, or for a plan of single nodes).
	Detected string
	// Nodes are the audited nodes with the evidence fix reads, in order.
	Nodes []fix.Node
}

// Audit checks every node that was acquired, then the cluster they form,
// plans what fix would change and gives every finding its remedy. A node
// that could not be acquired is a host that was not audited; the same node
// given twice (two snapshots of it) is audited twice but is one node of the
// cluster.
func Audit(nodes []acquire.Node, opt Options) Result {
	r := &report.Report{
		Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: opt.Version, Command: "doctor",
		GeneratedAt: opt.Now.UTC(), Hosts: []report.Host{},
	}
	var res Result
	var fs []*facts.Node
	seen := map[string]string{} // identity → source of its first audit
	for _, c := range nodes {
		if c.Err != nil || c.Snap == nil {
			status := c.Status
			if status == "" {
				status = report.HostFailed
			}
			r.Hosts = append(r.Hosts, report.Host{Host: c.Host, Source: c.Source, Status: status, Error: HostLine(c.Host, c.Err), Findings: []report.Finding{}})
			continue
		}
		n := c.Facts // read once, where the node was acquired
		id := identity(n)
		first, dup := seen[id]
		if !dup {
			// Two captures of one node are each audited, but are one node
			// of the cluster: its links and its plan.
			seen[id] = c.Source
			fs = append(fs, n)
			res.Nodes = append(res.Nodes, fix.NodeFrom(n, c.Snap))
		}
		p := opt.Profile
		if p == check.ProfileUnknown {
			p = check.DetectProfile(n)
		}
		findings, skipped := check.Run(n, p)
		h := report.Host{
			Host: n.Host, Profile: string(p), Status: report.HostAudited, Source: c.Source,
			Findings: findings, Skipped: skipped,
		}
		if dup {
			h.SameAs = first
		}
		r.Hosts = append(r.Hosts, h)
	}
	r.Cluster = auditCluster(fs, nodes)
	res.Report = r
	res.Plan, res.Detected, res.PlanErr = plan(res.Nodes, opt.Fix)
	if res.Plan != nil {
		fix.AttributePings(res.Plan, meshResults(nodes))
		addFindings(r, fix.LauncherEnvFindings(res.Plan))
		attach(r, fix.Remedies(res.Plan, "--hosts "+report.HostRanges(hostNames(fs))))
		clusterSettings(r, res.Plan, fs)
	}
	r.Status = r.Overall()
	return res
}

// addFindings puts each finding with its host's others.
func addFindings(r *report.Report, fs []report.Finding) {
	for _, f := range fs {
		for i := range r.Hosts {
			if h := &r.Hosts[i]; h.Host == f.Host && h.SameAs == "" && h.Status == report.HostAudited {
				h.Findings = append(h.Findings, f)
				break
			}
		}
	}
}

// identity tells two captures of one node apart from two nodes: the host
// name and, where captured, the machine id (a cloned image shares the
// machine id but not the name, which the cluster checks report).
func identity(n *facts.Node) string {
	return n.Host + "\x00" + n.MachineID
}

// auditCluster runs the checks only several nodes together can show: links,
// topology, consistency, and the DF-ping mesh's results (when the nodes were
// captured over SSH). It returns nil for fewer than two nodes.
func auditCluster(fs []*facts.Node, nodes []acquire.Node) *report.Cluster {
	if len(fs) < 2 {
		return nil
	}
	meshed := false
	for _, c := range nodes {
		meshed = meshed || c.Meshed
	}
	return cluster.Analyze(fs).Report(meshResults(nodes), meshed)
}

// meshResults are the ping mesh's results of every node.
func meshResults(nodes []acquire.Node) []facts.PingResult {
	var pings []facts.PingResult
	for _, c := range nodes {
		pings = append(pings, c.Pings...)
	}
	return pings
}

// plan is what fix would change: the cluster's plan where its topology can
// be told (or is given), else each node's own.
func plan(nodes []fix.Node, opt fix.Options) (*fix.Plan, string, error) {
	if len(nodes) == 0 {
		return nil, "", fmt.Errorf("no node was audited")
	}
	if opt.Port == 0 {
		opt.Port = -1
	}
	var why string
	if opt.Topology == "" && len(nodes) >= 2 {
		fs := make([]*facts.Node, len(nodes))
		for i, n := range nodes {
			fs[i] = n.Facts
		}
		opt.Topology, why = fix.Detect(fs)
	}
	if opt.Topology == "" {
		opt.Topology = fix.Local
	}
	p, err := fix.Build(nodes, opt)
	if err != nil && opt.Topology != fix.Local {
		// The checks' own remedies stand for what the cluster plan would
		// have changed; each node's own settings are still planned.
		local := opt
		local.Topology = fix.Local
		lp, lerr := fix.Build(nodes, local)
		if lerr != nil {
			return nil, why, err
		}
		return lp, why, err
	}
	if err == nil && why != "" && len(nodes) >= 2 && opt.Topology == fix.Local {
		err = fmt.Errorf("cannot tell the topology (%s)", why)
	}
	return p, why, err
}

// attach gives every finding a change of the plan resolves that change as
// its remedy; the others keep the manual remedy their check gave.
func attach(r *report.Report, remedies map[report.Key]*report.Remedy) {
	set := func(f *report.Finding) {
		if f.Severity != report.Warn && f.Severity != report.Fail {
			return
		}
		if rem, ok := remedies[f.Key()]; ok {
			f.Remedy = rem
		}
	}
	for i := range r.Hosts {
		for j := range r.Hosts[i].Findings {
			set(&r.Hosts[i].Findings[j])
		}
	}
	if r.Cluster != nil {
		for j := range r.Cluster.Findings {
			set(&r.Cluster.Findings[j])
		}
	}
}

// clusterSettings gives a finding about an NCCL variable a node sets
// wrongly the value the cluster's environment has for it (the value fix
// writes to the launchers' environment file and bench exports), where the
// node sets it: fix cannot change a node's environment, and the cluster's
// value, not a guess from one node, is the one every answer names.
func clusterSettings(r *report.Report, p *fix.Plan, fs []*facts.Node) {
	want := map[string]string{}
	for _, v := range p.Env {
		want[v.Name] = v.Value
	}
	byHost := make(map[string]*facts.Node, len(fs))
	for _, f := range fs {
		byHost[f.Host] = f // the last of a name, as a pass over fs found
	}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		n := byHost[h.Host]
		for j := range h.Findings {
			f := &h.Findings[j]
			v, ok := want[f.Subject]
			if n == nil || !ok || f.Severity != report.Warn && f.Severity != report.Fail || f.Remedy != nil && f.Remedy.Kind == report.RemedyChange {
				continue
			}
			where := ""
			switch {
			case n.NCCL.Env[f.Subject] != "":
				where = "the environment jobs on " + n.Host + " start with (where it is exported: a shell profile, /etc/environment, the container or job spec)"
			case n.NCCL.ConfFile[f.Subject] != "":
				where = "/etc/nccl.conf"
			default:
				continue
			}
			f.Remedy = report.Manual(report.ActionConfigure, fmt.Sprintf("set %s=%s in %s, or remove it there: the value sparkrig fix writes to %s and bench exports", f.Subject, v, where, fix.EnvPath))
		}
	}
}

// Unresolved lists the warn and fail findings no change of the plan
// resolves, each with its manual remedy, hosts first in report order.
func Unresolved(r *report.Report) []report.Finding {
	var out []report.Finding
	keep := func(fs []report.Finding) {
		for _, f := range fs {
			if (f.Severity == report.Warn || f.Severity == report.Fail) && (f.Remedy == nil || f.Remedy.Kind != report.RemedyChange) {
				out = append(out, f)
			}
		}
	}
	for _, h := range r.Hosts {
		keep(h.Findings)
	}
	if r.Cluster != nil {
		keep(r.Cluster.Findings)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() > out[j].Severity.Rank() })
	return out
}

func hostNames(fs []*facts.Node) []string {
	out := make([]string, len(fs))
	for i, n := range fs {
		out[i] = n.Host
	}
	return out
}

// HostLine is the first line of a node's error, naming the node once: an
// error from dialling it starts with its name already, one from the
// fan-out's deadlines does not.
func HostLine(host string, err error) string {
	s := sanitize.Plain(errLine(err))
	if strings.HasPrefix(s, host+": ") {
		return s
	}
	return host + ": " + s
}

func errLine(err error) string {
	if err == nil {
		return "no evidence"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
