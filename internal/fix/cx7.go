package fix

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
)

// twin is one PCIe function of a CX-7 QSFP port. On a DGX Spark each
// physical port is two functions (PCI domains 0000 and 0002), each good for
// about 100 Gb/s; a cable carries full bandwidth only with both addressed
// (docs/dgx-spark.md, "Hardware").
type twin struct {
	NetDev  string
	RDMADev string
	Carrier bool
}

// cx7Ports holds a node's twins by [port][twin].
type cx7Ports struct {
	twins [2][2]twin
	notes []string
}

// cx7Name matches a ConnectX netdev's predictable name and captures the port
// ("np1"); "enP2p..." names carry a PCI domain other than 0000.
var cx7Name = regexp.MustCompile(`^en(P[0-9]+)?p[0-9]+s[0-9]+f[0-9]+np([01])$`)

// findCX7 reads a node's CX-7 twins from its facts, falling back to the DGX
// Spark names (with a note) for any twin the facts do not show.
func findCX7(n *facts.Node) cx7Ports {
	var p cx7Ports
	found := [2][2]bool{}
	for _, d := range n.NetDevs {
		m := cx7Name.FindStringSubmatch(d.Name)
		if m == nil || (d.Driver != "" && d.Driver != "mlx5_core") {
			continue
		}
		port, _ := strconv.Atoi(m[2])
		t := 0
		if m[1] != "" || (d.PCIAddr != "" && !strings.HasPrefix(d.PCIAddr, "0000:")) {
			t = 1
		}
		if found[port][t] {
			continue
		}
		found[port][t] = true
		p.twins[port][t] = twin{NetDev: d.Name, RDMADev: rdmaOf(n, d), Carrier: hasCarrier(n, d)}
	}
	var missing []string
	for port := range 2 {
		for t := range 2 {
			if !found[port][t] {
				sp := platform.SparkPorts[port]
				p.twins[port][t] = twin{NetDev: sp.Twins[t], RDMADev: sp.RDMA[t]}
				missing = append(missing, sp.Twins[t])
			}
		}
	}
	if len(missing) > 0 {
		p.notes = append(p.notes, fmt.Sprintf("the evidence shows no %s; assuming the DGX Spark names", strings.Join(missing, ", ")))
	}
	return p
}

func rdmaOf(n *facts.Node, d facts.NetDev) string {
	if d.RDMADev != "" {
		return d.RDMADev
	}
	for _, r := range n.RDMA {
		if r.NetDev == d.Name {
			return r.Name
		}
	}
	for _, sp := range platform.SparkPorts {
		for t, name := range sp.Twins {
			if name == d.Name {
				return sp.RDMA[t]
			}
		}
	}
	return ""
}

func hasCarrier(n *facts.Node, d facts.NetDev) bool {
	if d.Carrier != nil {
		return *d.Carrier
	}
	if d.OperState != "" {
		return d.OperState == "up"
	}
	for _, r := range n.RDMA {
		if r.NetDev == d.Name || (d.RDMADev != "" && r.Name == d.RDMADev) {
			for _, pt := range r.Ports {
				if pt.State == "ACTIVE" {
					return true
				}
			}
		}
	}
	return false
}

// cabledPort is the port whose twins have carrier (port 1 when neither or
// both do: NVIDIA's two-node and switch playbooks use port 1).
func (p cx7Ports) cabledPort() (port int, known bool) {
	up := [2]bool{p.twins[0][0].Carrier || p.twins[0][1].Carrier, p.twins[1][0].Carrier || p.twins[1][1].Carrier}
	switch {
	case up[0] && !up[1]:
		return 0, true
	case up[1] && !up[0]:
		return 1, true
	}
	return 1, false
}
