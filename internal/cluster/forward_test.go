package cluster

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// firewall reads the recorded rulesets (internal/facts/testdata/firewall):
// iptables -S where ipt names a sample with it, nft -j where nft does.
func firewall(t *testing.T, ipt, nft string) *facts.Firewall {
	t.Helper()
	fw := &facts.Firewall{}
	if ipt != "" {
		fw.Iptables = facts.ParseIptablesS([]byte(fixture.ReadBlocks(t, "../facts/testdata/firewall/"+ipt)[0]))
	}
	if nft != "" {
		blocks := fixture.ReadBlocks(t, "../facts/testdata/firewall/"+nft)
		chains, err := facts.ParseNFTJSON([]byte(blocks[len(blocks)-1]))
		if err != nil {
			t.Fatal(err)
		}
		fw.NFT, fw.NFTRead = chains, true
	}
	return fw
}

// The ring FORWARD check reads iptables and nftables as the kernel applies
// them: the DOCKER-USER accept rule the doctor recommends clears it whether
// iptables -S, nft or both are read (iptables-nft's FORWARD policy DROP is
// also nftables' ip filter FORWARD); a native nftables chain drops or
// accepts by its own rules; every base chain must accept.
func TestRingForwardPolicy(t *testing.T) {
	ring := []string{"enp1s0f0np0", "enp1s0f1np1"}
	subnets := []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24"), netip.MustParsePrefix("192.168.6.0/24")}
	const (
		dockerDrop   = "docker-forward-drop.txt"
		dockerAccept = "docker-user-accepts-ring.txt"
		nftAccept    = "nft-forward-accepts-ring.txt"
		nftDrop      = "nft-forward-drop.txt"
	)
	for _, tt := range []struct {
		name     string
		fw       *facts.Firewall
		rails    []string
		severity report.Severity
		observed string
	}{
		{"Docker's FORWARD DROP, iptables-nft, nft installed", firewall(t, dockerDrop, dockerDrop), ring, report.Fail,
			"iptables filter FORWARD (policy drop) drops enp1s0f0np0 → enp1s0f1np1, enp1s0f1np1 → enp1s0f0np0"},
		{"Docker's FORWARD DROP, no nft", firewall(t, dockerDrop, ""), ring, report.Fail,
			"iptables filter FORWARD (policy drop) drops enp1s0f0np0 → enp1s0f1np1, enp1s0f1np1 → enp1s0f0np0"},
		{"Docker's FORWARD DROP, nft alone", firewall(t, "", dockerDrop), ring, report.Fail,
			"ip filter FORWARD (policy drop) drops enp1s0f0np0 → enp1s0f1np1, enp1s0f1np1 → enp1s0f0np0"},
		{"DOCKER-USER accepts the ring, iptables-nft, nft installed", firewall(t, dockerAccept, dockerAccept), ring, report.OK,
			"every forward chain passes the ring's traffic between its 2 netdevs"},
		{"DOCKER-USER accepts the ring, no nft", firewall(t, dockerAccept, ""), ring, report.OK,
			"every forward chain passes the ring's traffic between its 2 netdevs"},
		{"DOCKER-USER accepts the ring, nft alone", firewall(t, "", dockerAccept), ring, report.OK,
			"every forward chain passes the ring's traffic between its 2 netdevs"},
		{"DOCKER-USER accepts two of three ring netdevs", firewall(t, dockerAccept, dockerAccept), append([]string{"enP2p1s0f0np0"}, ring...), report.Fail,
			`iptables filter FORWARD (policy drop) drops enP2p1s0f0np0 → enp1s0f0np0, enP2p1s0f0np0 → enp1s0f1np1, enp1s0f0np0 → enP2p1s0f0np0, enp1s0f1np1 → enP2p1s0f0np0`},
		{"nftables accepts the ring; a later chain drops only 10/8", firewall(t, "", nftAccept), ring, report.OK,
			"every forward chain passes the ring's traffic between its 2 netdevs"},
		{"nftables accepts established traffic only", firewall(t, "", nftDrop), ring, report.Fail,
			"inet filter forward (policy drop) drops enp1s0f0np0 → enp1s0f1np1, enp1s0f1np1 → enp1s0f0np0"},
		{"DOCKER-USER accepts the ring, another nftables chain drops it", func() *facts.Firewall {
			fw := firewall(t, dockerAccept, nftDrop)
			return fw
		}(), ring, report.Fail,
			"inet filter forward (policy drop) drops enp1s0f0np0 → enp1s0f1np1, enp1s0f1np1 → enp1s0f0np0"},
		{"goto into a chain that accepts one way; REJECT the other", firewall(t, "goto-comment-reject.txt", ""), ring, report.Fail,
			`iptables filter FORWARD (FORWARD rule "-A FORWARD -i enp1s0f1np1 -j REJECT --reject-with icmp-port-unreachable") drops enp1s0f1np1 → enp1s0f0np0`},
		{"the same as nft alone shows it", firewall(t, "", "goto-comment-reject.txt"), ring, report.Fail,
			`ip filter FORWARD (FORWARD rule "handle 5") drops enp1s0f1np1 → enp1s0f0np0`},
		{"a goto's chain that ends without a verdict ends the base chain: its policy accepts", firewall(t, "goto-comment-reject.txt", ""), []string{"enP2p1s0f0np0", "enp1s0f0np0"}, report.OK,
			"every forward chain passes the ring's traffic between its 2 netdevs"},
		{"nft failed", &facts.Firewall{Iptables: firewall(t, dockerAccept, "").Iptables, NFTError: "nft exited 1: Error: JSON support not compiled-in"}, ring, report.NotEvaluated,
			"iptables accepts the ring's traffic, but nftables' ruleset was not readable (nft exited 1: Error: JSON support not compiled-in)"},
		{"no rules read", nil, ring, report.NotEvaluated,
			"the filter rules were not readable (iptables -S and nft list ruleset need root: run with sudo)"},
	} {
		f := forwardPolicy(&facts.Node{Host: "spark-02", Firewall: tt.fw}, tt.rails, newSubnetSet(subnets))
		if f.Severity != tt.severity || f.Observed != tt.observed {
			t.Errorf("%s: %s %q\nwant %s %q", tt.name, f.Severity, f.Observed, tt.severity, tt.observed)
		}
	}
}

// A snapshot whose nft ruleset is not JSON (taken before sparkrig asked nft
// for it) says so, rather than asking for root.
func TestRingForwardPolicyOldCapture(t *testing.T) {
	snap := snapshot.New("spark-02")
	snap.AddCmd(snapshot.Item{Name: "iptables", Argv: []string{"iptables", "-S"}}, []byte(fixture.ReadBlocks(t, "../facts/testdata/firewall/docker-user-accepts-ring.txt")[0]), nil)
	snap.AddCmd(snapshot.Item{Name: "nft", Argv: []string{"nft", "list", "ruleset"}}, []byte(fixture.ReadBlocks(t, "../facts/testdata/firewall/nft-text-listing.txt")[0]), nil)
	n := facts.FromSnapshot(snap)
	f := forwardPolicy(n, []string{"enp1s0f0np0", "enp1s0f1np1"}, newSubnetSet([]netip.Prefix{netip.MustParsePrefix("192.168.0.0/24")}))
	if want := "the filter rules were not readable: nft's ruleset is listed as text, not JSON (an older capture: capture again)"; f.Severity != report.NotEvaluated || f.Observed != want {
		t.Errorf("%s %q\nwant not-evaluated %q", f.Severity, f.Observed, want)
	}
}

// TestCoverageBySearchAsBySubnet: over disjoint subnets of either family
// and any rule prefixes, the binary searches tell all and none as a pass
// over every subnet does.
func TestCoverageBySearchAsBySubnet(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	addr := func() netip.Addr {
		if r.IntN(4) == 0 {
			return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(r.IntN(256))})
		}
		return netip.AddrFrom4([4]byte{10, byte(r.IntN(4)), byte(r.IntN(8)), byte(r.IntN(256))})
	}
	for round := 0; round < 3000; round++ {
		var subnets []netip.Prefix
		for n := r.IntN(12); n > 0; n-- {
			a := addr()
			p, _ := a.Prefix(a.BitLen() - 8 + r.IntN(9))
			if !slices.ContainsFunc(subnets, p.Overlaps) {
				subnets = append(subnets, p)
			}
		}
		var prefixes []string
		for n := r.IntN(4); n > 0; n-- {
			a := addr()
			switch r.IntN(4) {
			case 0:
				prefixes = append(prefixes, a.String()) // an address
			case 1:
				prefixes = append(prefixes, "not-a-prefix")
			default:
				prefixes = append(prefixes, netip.PrefixFrom(a, a.BitLen()-r.IntN(a.BitLen()/2+1)).String()) // not masked
			}
		}
		set := newSubnetSet(subnets)
		if !set.disjoint {
			t.Fatalf("%v: not disjoint", subnets)
		}
		all, none := coverage(prefixes, set)
		wantAll, wantNone := coverageEach(parsePrefixes(prefixes), subnets)
		if all != wantAll || none != wantNone {
			t.Fatalf("prefixes %v over %v: all %v none %v, want %v %v", prefixes, subnets, all, none, wantAll, wantNone)
		}
	}
}
