package bench

import (
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/fabric"
)

// FromCluster takes the links and topology the cluster doctor worked out:
// the direct links between nodes become the rails' links (links to a switch
// are left to subnet pairing), and the topology by its one name.
func FromCluster(a *cluster.Analysis) ([]Link, string) {
	var links []Link
	for _, l := range a.Links {
		if l.A.Host == cluster.SwitchHost || l.B.Host == cluster.SwitchHost {
			continue
		}
		links = append(links, Link{A: LinkEnd{Host: l.A.Host, NetDev: l.A.NetDev, Addr: fabric.StripPrefix(l.A.Addr)},
			B: LinkEnd{Host: l.B.Host, NetDev: l.B.NetDev, Addr: fabric.StripPrefix(l.B.Addr)}, Subnet: l.Subnet})
	}
	return links, string(a.Topology)
}
