package cluster

import (
	"fmt"
	"sort"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Analysis is what several nodes' facts say together.
type Analysis struct {
	Hosts    []string
	Topology Topology
	Rails    []Rail
	Segments []Segment
	Cables   []Cable
	Links    []report.Link
	Findings []report.Finding
	// Skipped are the registry's checks that did not apply, and why.
	Skipped []report.Skipped
}

// Analyze works out links, topology and cross-node consistency.
func Analyze(nodes []*facts.Node) *Analysis {
	a := &Analysis{}
	for _, n := range nodes {
		a.Hosts = append(a.Hosts, n.Host)
		a.Rails = append(a.Rails, Rails(n)...)
	}
	a.Segments = Segments(a.Rails)
	a.Cables = Cables(a.Segments)
	a.Topology = DetectTopology(a.Hosts, a.Segments)
	why := ""
	if a.Topology == TwoNodesOneCable || a.Topology == TwoNodesTwoCables {
		var sw bool
		if sw, why = behindSwitch(nodes, a.Segments); sw {
			a.Topology = Switched
		}
	}
	a.Findings = append(a.Findings, topologyFinding(a, why))
	links, fs := buildLinks(a.Segments, a.Topology)
	markDuplicates(links)
	links, lfs := judgeLinks(nodes, a.Segments, links)
	a.Links = links
	a.Findings = append(a.Findings, fs...)
	a.Findings = append(a.Findings, lfs...)
	fs, skipped := runRegistry(nodes, a)
	a.Findings = append(a.Findings, fs...)
	a.Skipped = skipped
	return a
}

func topologyFinding(a *Analysis, why string) report.Finding {
	obs := fmt.Sprintf("%s: %s, %s, %s with addresses", a.Topology, plural(len(a.Hosts), "node"), plural(len(a.Cables), "cable"), plural(len(a.Rails), "rail"))
	if why != "" {
		obs += " (" + why + ")"
	}
	return report.Finding{ID: "cluster.topology", Severity: report.Info, Subject: "cluster", Title: "detected topology", Observed: obs,
		Source: "DGX Spark platform notes (topologies)"}
}

// Report builds the report section, adding the ping mesh's findings (nil
// pings: the mesh did not run, e.g. when auditing snapshots).
func (a *Analysis) Report(pings []facts.PingResult, meshRan bool) *report.Cluster {
	c := &report.Cluster{Topology: string(a.Topology), Links: a.Links, Findings: append([]report.Finding(nil), a.Findings...)}
	if c.Links == nil {
		c.Links = []report.Link{}
	}
	if meshRan {
		c.Findings = append(c.Findings, PingFindings(pings)...)
		markPingProblems(c.Links, pings)
	}
	sort.SliceStable(c.Findings, func(i, j int) bool {
		return c.Findings[i].Severity.Rank() > c.Findings[j].Severity.Rank()
	})
	return c
}

// markPingProblems adds failed probes to the links they crossed.
func markPingProblems(links []report.Link, pings []facts.PingResult) {
	var ends map[[2]string][]int
	for _, p := range pings {
		if !p.FullOK || p.Full.Received == p.Full.Sent {
			continue
		}
		if ends == nil {
			ends = linkEnds(links)
		}
		for _, i := range ends[[2]string{p.From.Host, p.From.NetDev}] {
			l := &links[i]
			if l.B.Host != SwitchHost && l.A.Host != p.To.Host && l.B.Host != p.To.Host {
				continue
			}
			l.Flag(report.LinkFaulty, fmt.Sprintf("DF ping %s→%s at MTU %d: %d/%d replies", p.From.Host, p.To.Host, p.From.MTU, p.Full.Received, p.Full.Sent))
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ringNodes is the number of nodes of a ring, or 0 when the cluster is not one.
func ringNodes(a *Analysis) int {
	if a.Topology.IsRing() {
		return len(a.Hosts)
	}
	return 0
}
