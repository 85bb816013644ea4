package bench

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
)

// The DGX Spark's CX-7 functions as NVIDIA documents them (docs: RDMA device,
// netdev, PCI address); twins of a physical port share its number.
var sparkFuncs = []struct{ rdma, netdev, pci string }{
	{"rocep1s0f0", "enp1s0f0np0", "0000:01:00.0"},
	{"rocep1s0f1", "enp1s0f1np1", "0000:01:00.1"},
	{"roceP2p1s0f0", "enP2p1s0f0np0", "0002:01:00.0"},
	{"roceP2p1s0f1", "enP2p1s0f1np1", "0002:01:00.1"},
}

// sparkNode builds a Spark's facts: every function of a cabled port is
// ACTIVE; addrs gives IPv4 CIDRs by netdev, and each addressed netdev gets
// the GID table a RoCE port shows (0/1 link-local v1/v2, 2/3 IPv4 v1/v2).
func sparkNode(host string, cabled []int, addrs map[string]string) *facts.Node {
	avail := uint64(110 << 30)
	total := uint64(128 << 30)
	n := &facts.Node{Host: host, Memory: facts.Memory{TotalBytes: &total, AvailableBytes: &avail},
		GPUs: []facts.GPU{{Index: 0, Name: "NVIDIA GB10", PCIBus: "000f:01:00.0"}}}
	speed := 200000
	n.NetDevs = append(n.NetDevs, facts.NetDev{Name: "enP7s7", MTU: 1500,
		Addrs: []facts.Addr{{CIDR: "10.0.0." + hostOctet(host) + "/24", Family: "inet"}}})
	for _, f := range sparkFuncs {
		port := int(f.netdev[7] - '0') // enp1s0fN / enP2p1s0fN: N is the physical port
		if strings.HasPrefix(f.netdev, "enP2") {
			port = int(f.netdev[9] - '0')
		}
		up := false
		for _, c := range cabled {
			up = up || c == port
		}
		nd := facts.NetDev{Name: f.netdev, MTU: 9000, PCIAddr: f.pci, RDMADev: f.rdma, Driver: "mlx5_core"}
		p := facts.RDMAPort{Num: 1, State: "DOWN", PhysState: "Disabled", LinkLayer: "Ethernet", RateGbps: 40}
		if up {
			nd.OperState, nd.SpeedMbps = "up", &speed
			p.State, p.PhysState, p.RateGbps = "ACTIVE", "LinkUp", 200
			p.GIDs = []facts.GID{
				{Index: 0, GID: "fe80:0000:0000:0000:0000:0000:0000:0001", Type: "IB/RoCE v1", NetDev: f.netdev},
				{Index: 1, GID: "fe80:0000:0000:0000:0000:0000:0000:0001", Type: "RoCE v2", NetDev: f.netdev},
			}
		}
		if cidr, ok := addrs[f.netdev]; ok {
			nd.Addrs = []facts.Addr{{CIDR: cidr, Family: "inet", Scope: "global"}}
			ip := fabric.StripPrefix(cidr)
			gid := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%s", ip)
			p.GIDs = append(p.GIDs,
				facts.GID{Index: 2, GID: gid, Type: "IB/RoCE v1", NetDev: f.netdev, IPv4: ip},
				facts.GID{Index: 3, GID: gid, Type: "RoCE v2", NetDev: f.netdev, IPv4: ip})
		}
		n.NetDevs = append(n.NetDevs, nd)
		n.RDMA = append(n.RDMA, facts.RDMADev{Name: f.rdma, NetDev: f.netdev, PCIAddr: f.pci, Ports: []facts.RDMAPort{p}})
	}
	return n
}

func hostOctet(host string) string {
	return fmt.Sprint(10 + int(host[len(host)-1]-'0'))
}

// healthyPair is two Sparks with port 1 cabled and both twins addressed on
// their own subnets, as NVIDIA's "Connect two Sparks" playbook does.
func healthyPair() []*facts.Node {
	return []*facts.Node{
		sparkNode("spark-1", []int{1}, map[string]string{"enp1s0f1np1": "192.168.100.10/24", "enP2p1s0f1np1": "192.168.101.10/24"}),
		sparkNode("spark-2", []int{1}, map[string]string{"enp1s0f1np1": "192.168.100.11/24", "enP2p1s0f1np1": "192.168.101.11/24"}),
	}
}
