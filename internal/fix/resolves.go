package fix

import (
	"net/netip"
	"slices"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Doctor finding IDs a change can resolve. They name the doctor's checks, so
// `sparkrig doctor` output and `sparkrig fix --plan` output can be matched.
const (
	FindTwinUnaddressed  = "spark.twin-unaddressed"
	FindTwinsSameSubnet  = "spark.twins-same-subnet"
	FindMTU              = "spark.mtu"
	FindMTUTwinsDiffer   = "spark.mtu-twins-differ"
	FindAddrNotPersisted = "spark.addr-persisted"
	FindDHCPOnCX7        = "spark.dhcp-on-cx7"
	FindNCCLSocketIfname = "nccl.socket-ifname"
	FindNCCLIBHCA        = "nccl.ib-hca"
)

// netplanResolves lists what the doctor flags today that the planned netplan
// file fixes, judged from the node's facts.
func netplanResolves(n *facts.Node, rails []Rail) []string {
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	subnets := map[netip.Prefix]int{}
	mtus := map[int][]int{}
	for _, r := range rails {
		d := netdev(n, r.NetDev)
		if d == nil {
			continue
		}
		v4 := 0
		for _, a := range d.Addrs {
			p, err := netip.ParsePrefix(a.CIDR)
			if err != nil || !p.Addr().Is4() || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			v4++
			subnets[p.Masked()]++
			if a.Dynamic {
				add(FindDHCPOnCX7)
			}
			if !persisted(n, r.NetDev, a.CIDR) {
				add(FindAddrNotPersisted)
			}
		}
		if v4 == 0 && r.Addr != "" {
			add(FindTwinUnaddressed)
		}
		if d.MTU != 0 && d.MTU != r.MTU {
			add(FindMTU)
		}
		mtus[r.Port] = append(mtus[r.Port], d.MTU)
	}
	for _, m := range mtus {
		if len(m) == 2 && m[0] != m[1] {
			add(FindMTUTwinsDiffer)
		}
	}
	for _, c := range subnets {
		if c > 1 {
			add(FindTwinsSameSubnet)
		}
	}
	return out
}

func netdev(n *facts.Node, name string) *facts.NetDev {
	for i := range n.NetDevs {
		if n.NetDevs[i].Name == name {
			return &n.NetDevs[i]
		}
	}
	return nil
}

func persisted(n *facts.Node, iface, cidr string) bool {
	for _, c := range n.NetConfig {
		if c.Name == iface && slices.Contains(c.Addrs, cidr) {
			return true
		}
	}
	return false
}

// ncclResolves lists the NCCL findings the planned settings fix: a value set
// today (in /etc/nccl.conf or the environment) that differs from the plan, or
// a missing NCCL_IB_HCA.
func ncclResolves(n *facts.Node, env []envVar) []string {
	ids := map[string]string{
		"NCCL_SOCKET_IFNAME": FindNCCLSocketIfname,
		"NCCL_IB_HCA":        FindNCCLIBHCA,
	}
	var out []string
	for _, e := range env {
		id, ok := ids[e.Key]
		if !ok {
			continue
		}
		cur, set := n.NCCL.ConfFile[e.Key]
		if v, inEnv := n.NCCL.Env[e.Key]; inEnv {
			cur, set = v, true
		}
		if (set && cur != e.Value) || (!set && e.Key == "NCCL_IB_HCA") {
			out = append(out, id)
		}
	}
	return out
}
