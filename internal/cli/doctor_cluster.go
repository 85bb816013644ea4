package cli

import (
	"strings"

	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
)

// auditCluster runs the checks only several nodes together can show: links,
// topology, consistency, and the DF-ping mesh's results from caps (when the
// nodes were captured over SSH). It returns nil for fewer than two nodes.
func auditCluster(nodes []*facts.Node, caps []hostCapture) *report.Cluster {
	if len(nodes) < 2 {
		return nil
	}
	var pings []cluster.PingResult
	meshed := false
	for _, c := range caps {
		pings = append(pings, c.Pings...)
		meshed = meshed || c.Meshed
	}
	return cluster.Analyze(nodes).Report(pings, meshed)
}

// adviseFromPlan replaces the fix text of every finding `sparkrig fix` would
// resolve with that plan's own change, so the doctor and fix --plan never
// disagree about what to write. nodes pairs each audited host's facts with
// its evidence.
func adviseFromPlan(r *report.Report, nodes []fix.Node) {
	if len(nodes) < 2 {
		return
	}
	fs := make([]*facts.Node, len(nodes))
	hosts := make([]string, len(nodes))
	for i, n := range nodes {
		fs[i], hosts[i] = n.Facts, n.Facts.Host
	}
	t, _ := fix.Detect(fs)
	if t == "" {
		return
	}
	p, err := fix.Build(nodes, fix.Options{Topology: t, Port: -1})
	if err != nil {
		return // the checks' own advice stands; fix --plan says why it cannot plan
	}
	remedies := fix.Remedies(p, "--hosts "+strings.Join(hosts, ","))
	set := func(f *report.Finding) {
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
