package fix

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Detect names the topology from which CX-7 ports have carrier on each node,
// the one thing unconfigured nodes already show: two nodes with one port up
// are a one-cable pair, with both ports up a two-cable pair; three nodes with
// both ports up are the ring; three or more with one port up share a switch.
// It returns "" and why when the facts do not say.
func Detect(nodes []*facts.Node) (Topology, string) {
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
	case n == 3 && both == 3:
		return Ring, why
	case n >= 3 && one == n:
		return Switch, why
	}
	return "", why
}
