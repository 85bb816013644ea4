package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fixture"
)

// BenchmarkRingChecks: the cluster model and every cluster check over a
// switchless ring of n nodes (n cables of two subnets each: 2n subnets),
// each node with Docker's FORWARD DROP and the doctor's DOCKER-USER accept
// rules (the recorded ruleset, docker-user-accepts-ring.txt) and, ahead of
// them, one rule for a documentation prefix that every ring packet is
// checked against; each node routes 4 of the others' subnets. The ring
// checks look every node's routes and rules up among the 2n subnets, so
// their cost is n log n, not n × subnets:
//
//	go test ./internal/cluster -run '^$' -bench BenchmarkRingChecks -benchtime 1x
func BenchmarkRingChecks(b *testing.B) {
	block := fixture.ReadBlocks(b, "../facts/testdata/firewall/docker-user-accepts-ring.txt")[0]
	rules := strings.Replace(block, "-A DOCKER-USER -i", "-A DOCKER-USER -s 192.0.2.0/24 -j DROP\n-A DOCKER-USER -i", 1)
	fw := &facts.Firewall{Iptables: facts.ParseIptablesS([]byte(rules))}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := bigRing(n, fw)
			b.ResetTimer()
			var a *Analysis
			for range b.N {
				a = Analyze(nodes)
			}
			b.StopTimer()
			ring := 0
			for _, f := range a.Findings {
				if strings.HasPrefix(f.ID, "cluster.ring-") {
					ring++
				}
			}
			if !a.Topology.IsRing() || ring != 4*n {
				b.Fatalf("topology %s, %d ring findings", a.Topology, ring)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/node")
		})
	}
}

// bigRing cables n nodes each port 0 to the next node's port 1, cable k
// on subnets 2k and 2k+1 counted up from 172.16.0.0/24.
func bigRing(n int, fw *facts.Firewall) []*facts.Node {
	subnet := func(s int) string { return fmt.Sprintf("172.%d.%d", 16+s>>8, s&255) }
	nodes := make([]*facts.Node, n)
	for i := range nodes {
		nodes[i] = &facts.Node{Host: fmt.Sprintf("spark-%05d", i+1), Firewall: fw,
			Sysctls: map[string]string{"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.rp_filter": "2"},
			Sources: map[string]facts.SourceStatus{facts.SrcSysctl: {Status: "ok"}, facts.SrcIPAddr: {Status: "ok"}, facts.SrcRoutes: {Status: "ok"}}}
		for j := 1; j <= 4; j++ {
			nodes[i].Routes = append(nodes[i].Routes, facts.Route{Dst: subnet((2*i+2*j+2)%(2*n)) + ".0/24", Gateway: subnet(2*i) + ".2"})
		}
	}
	dev := func(n *facts.Node, name, addr string) {
		speed := 200000
		n.NetDevs = append(n.NetDevs, facts.NetDev{Name: name, MTU: 9000, Driver: "mlx5_core", SpeedMbps: &speed, Addrs: []facts.Addr{{CIDR: addr, Family: "inet"}}})
	}
	for k := range n {
		next := nodes[(k+1)%n]
		dev(nodes[k], "enp1s0f0np0", subnet(2*k)+".1/24")
		dev(nodes[k], "enP2p1s0f0np0", subnet(2*k+1)+".1/24")
		dev(next, "enp1s0f1np1", subnet(2*k)+".2/24")
		dev(next, "enP2p1s0f1np1", subnet(2*k+1)+".2/24")
	}
	return nodes
}
