package fix

import (
	"fmt"
	"slices"

	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/topology"
)

// Detect names the topology. Carrier is the one thing unconfigured nodes
// already show: two nodes with one port up are a one-cable pair, with both
// ports up a two-cable pair; three nodes with both ports up are the ring;
// three or more with one port up share a switch. Carrier cannot tell a
// switch from a ring when every node has both ports up, so where the nodes
// already have addresses, the layout the doctor works out from them
// (cluster.DetectTopology) decides that case and any the carrier leaves open.
// It returns "" and why when the facts do not say.
func Detect(nodes []*facts.Node) (Topology, string) {
	t, why := byCarrier(nodes)
	at, awhy := byAddresses(nodes)
	switch {
	case at == "":
		return t, why
	case t == "", at == Switch && t != Switch:
		return at, awhy + "; " + why
	}
	return t, why
}

func byCarrier(nodes []*facts.Node) (Topology, string) {
	both, one := 0, 0
	for _, n := range nodes {
		p := findCX7(n)
		up := 0
		for port := range 2 {
			if p.twins[port][0].Carrier || p.twins[port][1].Carrier {
				up++
			}
		}
		switch up {
		case 2:
			both++
		case 1:
			one++
		}
	}
	n := len(nodes)
	why := fmt.Sprintf("%d nodes, %d with both QSFP ports up, %d with one", n, both, one)
	switch {
	case n == 2 && both == 2:
		return TwoCables, why
	case n == 2 && both+one == 2:
		return OneCable, why
	case n >= 3 && both == n:
		return topology.RingOf(n), why
	case n >= 3 && one == n:
		return Switch, why
	}
	return "", why
}

// byAddresses is the topology the nodes' current rail addresses show, or ""
// when they show none fix knows (no addresses yet, or a partial layout).
func byAddresses(nodes []*facts.Node) (Topology, string) {
	var hosts []string
	var rails []cluster.Rail
	for _, n := range nodes {
		hosts = append(hosts, n.Host)
		rails = append(rails, cluster.Rails(n)...)
	}
	ct := cluster.DetectTopology(hosts, cluster.Segments(rails))
	if !slices.Contains(Topologies, ct) && !ct.IsRing() {
		return "", ""
	}
	return ct, fmt.Sprintf("the rail addresses show %s", ct)
}
