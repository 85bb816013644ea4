package cluster

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Check is one check over several nodes, as check.Check is over one: what
// it needs read on every node, when it applies, and what it finds. Each
// runs in O(n log n) of the nodes or better: identities by maps,
// consistency by majority counts, links by their ends.
type Check struct {
	ID    string
	Title string
	// Needs names the facts sources the check reads on every node; a node
	// where one was not read is left out and named in one not-evaluated
	// finding, and the check runs over the others.
	Needs []string
	// Applies gates the check on the cluster (its topology); it returns why
	// not when false.
	Applies func(a *Analysis) (bool, string)
	// Run returns the check's findings over the nodes that have what it needs.
	Run func(nodes []*facts.Node, a *Analysis) []report.Finding
}

// Registry is every cluster check after the links, in the order their
// findings are reported.
var Registry = []Check{
	{ID: "cluster.identity", Title: "what must be unique across nodes is unique",
		Run: func(nodes []*facts.Node, _ *Analysis) []report.Finding { return identity(nodes) }},
	{ID: "cluster.ring", Title: "every node of a ring forwards, routes and accepts the ring's traffic",
		Applies: func(a *Analysis) (bool, string) { return a.Topology.IsRing(), "the nodes do not form a ring" },
		Run:     ringFindings},
	{ID: "cluster.consistency", Title: "the same software and settings on every node",
		Run: func(nodes []*facts.Node, a *Analysis) []report.Finding { return consistency(nodes, ringNodes(a)) }},
	{ID: "cluster.nccl-ib-hca-order", Title: "NCCL_IB_HCA in the same order on every node",
		Run: func(nodes []*facts.Node, _ *Analysis) []report.Finding { return ibHCAOrder(nodes) }},
	{ID: "cluster.nccl-build", Title: "one NCCL build per NCCL version",
		Run: func(nodes []*facts.Node, _ *Analysis) []report.Finding { return ncclBuilds(nodes) }},
}

// runRegistry runs every check of the registry that applies.
func runRegistry(nodes []*facts.Node, a *Analysis) ([]report.Finding, []report.Skipped) {
	var out []report.Finding
	var skipped []report.Skipped
	for _, c := range Registry {
		if c.Applies != nil {
			if ok, why := c.Applies(a); !ok {
				skipped = append(skipped, report.Skipped{ID: c.ID, Reason: why})
				continue
			}
		}
		have, lacking := nodes, map[string][]string{}
		if len(c.Needs) > 0 {
			have = nil
			for _, n := range nodes {
				missing := ""
				for _, src := range c.Needs {
					if !n.Has(src) {
						missing = src
						break
					}
				}
				if missing == "" {
					have = append(have, n)
				} else {
					lacking[missing] = append(lacking[missing], n.Host)
				}
			}
		}
		for _, src := range c.Needs {
			if hosts := lacking[src]; len(hosts) > 0 {
				out = append(out, report.Finding{ID: c.ID, Severity: report.NotEvaluated, Subject: "cluster", Title: c.Title,
					Observed: fmt.Sprintf("%s not read on %s: %s", src, plural(len(hosts), "node"), strings.ReplaceAll(report.HostRanges(hosts), ",", ", ")),
					Expected: src + " read on every node", Why: "a node whose evidence is missing is left out of the comparison, never counted as passing"})
			}
		}
		if len(have) >= 2 {
			out = append(out, c.Run(have, a)...)
		}
	}
	return out, skipped
}
