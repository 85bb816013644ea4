package cluster

import (
	"fmt"
	"sort"

	"github.com/sparkrig/sparkrig/internal/topology"
)

// Topology is how the nodes' data ports are cabled: the one vocabulary of
// internal/topology.
type Topology = topology.Kind

// Topologies sparkrig recognises, by the names cluster code has used.
const (
	SingleNode        = topology.SingleNode
	NoDataLinks       = topology.NoDataLinks
	TwoNodesOneCable  = topology.OneCable
	TwoNodesTwoCables = topology.TwoCables
	ThreeNodeRing     = topology.Ring
	Switched          = topology.Switch
	OtherTopology     = topology.Other
)

// Cable is one physical cable between two nodes' ports, as inferred from the
// direct links (both twins of a Spark port travel in one cable).
type Cable struct {
	A, B         string // hosts, A < B
	PortA, PortB string // port index ("0", "1") or the netdev name when unknown
}

// Cables infers the cables behind the direct (two-node) segments.
func Cables(segs []Segment) []Cable {
	seen := map[Cable]bool{}
	var out []Cable
	for _, s := range segs {
		if len(s.Rails) != 2 || s.Hosts() != 2 {
			continue
		}
		a, b := s.Rails[0], s.Rails[1]
		if b.Host < a.Host {
			a, b = b, a
		}
		c := Cable{A: a.Host, B: b.Host, PortA: portKey(a), PortB: portKey(b)}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

func portKey(r Rail) string {
	if r.Port >= 0 {
		return fmt.Sprint(r.Port)
	}
	return r.NetDev
}

// DetectTopology names the layout of nodes (host names) joined by segs.
func DetectTopology(hosts []string, segs []Segment) Topology {
	if len(hosts) < 2 {
		return SingleNode
	}
	for _, s := range segs {
		if s.Hosts() > 2 {
			return Switched
		}
	}
	cables := Cables(segs)
	pairs := map[[2]string]int{}
	for _, c := range cables {
		pairs[[2]string{c.A, c.B}]++
	}
	switch {
	case len(cables) == 0:
		return NoDataLinks
	case len(hosts) == 2 && len(cables) == 1:
		return TwoNodesOneCable
	case len(hosts) == 2 && len(cables) == 2:
		return TwoNodesTwoCables
	case len(hosts) == 3 && len(pairs) == 3 && len(cables) == 3:
		return ThreeNodeRing
	}
	return OtherTopology
}
