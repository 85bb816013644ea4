package bench

import (
	"github.com/sparkrig/sparkrig/internal/cluster"
)

// FromCluster takes the links and topology the cluster doctor worked out:
// the direct links between nodes become the rails' links (links to a switch
// are left to subnet pairing), and the topology is named as expectations
// name it.
func FromCluster(a *cluster.Analysis) ([]Link, string) {
	var links []Link
	for _, l := range a.Links {
		if l.A.Host == cluster.SwitchHost || l.B.Host == cluster.SwitchHost {
			continue
		}
		links = append(links, Link{A: LinkEnd{Host: l.A.Host, NetDev: l.A.NetDev, Addr: stripPrefix(l.A.Addr)},
			B: LinkEnd{Host: l.B.Host, NetDev: l.B.NetDev, Addr: stripPrefix(l.B.Addr)}, Subnet: l.Subnet})
	}
	return links, expectTopology[a.Topology]
}

// expectTopology maps the cluster doctor's topology names to expect's.
var expectTopology = map[cluster.Topology]string{
	cluster.SingleNode:        "single-node",
	cluster.TwoNodesOneCable:  "2-nodes-1-cable",
	cluster.TwoNodesTwoCables: "2-nodes-2-cables",
	cluster.ThreeNodeRing:     "3-node-ring",
	cluster.Switched:          "switch",
}
