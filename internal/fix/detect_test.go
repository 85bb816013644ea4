package fix

import (
	"fmt"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
)

func factsOf(ns []Node) []*facts.Node {
	out := make([]*facts.Node, len(ns))
	for i, n := range ns {
		out[i] = n.Facts
	}
	return out
}

// address gives every node host number 10+i on netdev in subnet 192.168.<third>.0/24.
func address(ns []*facts.Node, netdev string, third int) {
	for i, n := range ns {
		for j := range n.NetDevs {
			if n.NetDevs[j].Name == netdev {
				n.NetDevs[j].Addrs = append(n.NetDevs[j].Addrs, facts.Addr{CIDR: fmt.Sprintf("192.168.%d.%d/24", third, 10+i), Family: "inet"})
			}
		}
	}
}

func TestDetectFromCarrier(t *testing.T) {
	for _, tc := range topoCases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Detect(factsOf(tc.nodes(t)))
			if got != tc.opt.Topology {
				t.Errorf("Detect = %q (%s), want %q", got, why, tc.opt.Topology)
			}
		})
	}
	got, why := Detect(factsOf(allUp(4)(t)))
	// Four nodes with both ports up and no switch: the four-node ring.
	if want := "4 nodes, 4 with both QSFP ports up, 0 with one"; got != "four-node-ring" || why != want {
		t.Errorf("four nodes, both ports up, no addresses: %q %q, want four-node-ring %q", got, why, want)
	}
}

func TestDetectUsesAddressesWhereCarrierCannotTell(t *testing.T) {
	// Three nodes with both ports up look like the ring by carrier alone; a
	// subnet all three share says they hang off a switch.
	ns := factsOf(allUp(3)(t))
	address(ns, "enp1s0f1np1", 100)
	address(ns, "enP2p1s0f1np1", 101)
	got, why := Detect(ns)
	if want := "the rail addresses show switch; 3 nodes, 3 with both QSFP ports up, 0 with one"; got != Switch || why != want {
		t.Errorf("three nodes on a switch: %q %q, want %q %q", got, why, Switch, want)
	}
	// Four such nodes: carrier says nothing, the addresses do.
	ns = factsOf(allUp(4)(t))
	address(ns, "enp1s0f1np1", 100)
	if got, _ := Detect(ns); got != Switch {
		t.Errorf("four nodes on a switch: %q, want %q", got, Switch)
	}
	// Carrier wins on how many cables there are: addresses left on a port
	// whose cable was pulled do not make it a two-cable pair.
	ns = factsOf(pair("ibdev2netdev-port1-up.txt", 0, 0)(t))
	address(ns, "enp1s0f1np1", 100)
	address(ns, "enp1s0f0np0", 102)
	if got, _ := Detect(ns); got != OneCable {
		t.Errorf("one cable, both ports addressed: %q, want %q", got, OneCable)
	}
}
