package fix

import (
	"slices"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

func TestNetplanResolvesClusterFindings(t *testing.T) {
	ns := pair("ibdev2netdev-port1-up.txt", 0, 0)(t)
	fs := factsOf(ns)
	address(fs, "enp1s0f1np1", 100)
	address(fs, "enP2p1s0f1np1", 101)
	for _, n := range fs {
		for i := range n.NetDevs {
			if n.NetDevs[i].Name == "enp1s0f1np1" || n.NetDevs[i].Name == "enP2p1s0f1np1" && n.Host == "spark-1" {
				n.NetDevs[i].MTU = 9000
			}
		}
	}
	p, err := Build(ns, Options{Topology: OneCable, Port: -1, Addressing: Static, FirstHost: 10, MTU: 9000})
	if err != nil {
		t.Fatal(err)
	}
	for _, hp := range p.Hosts {
		var got []report.Key
		for _, c := range hp.Files {
			if c.Path == NetplanPath {
				got = c.Resolves
			}
		}
		for _, want := range []report.Key{
			{ID: "cluster.mtu-inconsistent", Subject: "enP2p1s0f1np1"},
			{ID: "cluster.mtu-mismatch", Subject: "spark-1:enP2p1s0f1np1↔spark-2:enP2p1s0f1np1"},
		} {
			if !slices.Contains(got, want) {
				t.Errorf("%s: netplan resolves %q, lacks %q", hp.Host, got, want)
			}
		}
	}
}
