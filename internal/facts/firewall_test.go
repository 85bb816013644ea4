package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Docker's chains after the doctor's accept rules, as iptables -S lists them
// and as nft -j shows the same kernel state (iptables-nft's ip filter).
func TestParseFirewallDockerUser(t *testing.T) {
	blocks := verbatim(t, "firewall/docker-user-accepts-ring.txt")
	ipt := ParseIptablesS([]byte(blocks[0]))
	byName := map[string]FilterChain{}
	for _, c := range ipt {
		byName[c.Name] = c
	}
	if c := byName["FORWARD"]; c.Table != IptablesTable || c.Hook != "forward" || c.Policy != "drop" || len(c.Rules) != 2 ||
		c.Rules[0].Verdict != "jump" || c.Rules[0].Target != "DOCKER-USER" {
		t.Errorf("iptables FORWARD: %+v", c)
	}
	wantUser := []FilterRule{
		{Text: "-A DOCKER-USER -i enp1s0f1np1 -o enp1s0f0np0 -j ACCEPT", In: []string{"enp1s0f1np1"}, Out: []string{"enp1s0f0np0"}, Verdict: "accept"},
		{Text: "-A DOCKER-USER -i enp1s0f0np0 -o enp1s0f1np1 -j ACCEPT", In: []string{"enp1s0f0np0"}, Out: []string{"enp1s0f1np1"}, Verdict: "accept"},
		{Text: "-A DOCKER-USER -j RETURN", Verdict: "return"},
	}
	if d := cmp.Diff(wantUser, byName["DOCKER-USER"].Rules); d != "" {
		t.Errorf("iptables DOCKER-USER (-want +got):\n%s", d)
	}
	if got := byName["DOCKER-FORWARD"].Rules[1]; !cmp.Equal(got, FilterRule{Text: "-A DOCKER-FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
		Out: []string{"docker0"}, CTState: []string{"related", "established"}, Verdict: "accept"}) {
		t.Errorf("conntrack rule: %+v", got)
	}
	if got := byName["DOCKER-FORWARD"].Rules[3]; !got.NotOut || got.NotIn || !cmp.Equal(got.In, []string{"docker0"}) {
		t.Errorf("negated -o: %+v", got)
	}

	nft, err := ParseNFTJSON([]byte(blocks[1]))
	if err != nil {
		t.Fatal(err)
	}
	var fwd, user FilterChain
	for _, c := range nft {
		switch c.Name {
		case "FORWARD":
			fwd = c
		case "DOCKER-USER":
			user = c
		}
	}
	if fwd.Table != "ip filter" || fwd.Hook != "forward" || fwd.Priority != 0 || fwd.Policy != "drop" ||
		!cmp.Equal(fwd.Rules, []FilterRule{{Text: "handle 7", Verdict: "jump", Target: "DOCKER-USER"}, {Text: "handle 8", Verdict: "jump", Target: "DOCKER-FORWARD"}}) {
		t.Errorf("nft ip filter FORWARD: %+v", fwd)
	}
	wantUser = []FilterRule{
		{Text: "handle 18", In: []string{"enp1s0f1np1"}, Out: []string{"enp1s0f0np0"}, Verdict: "accept"},
		{Text: "handle 17", In: []string{"enp1s0f0np0"}, Out: []string{"enp1s0f1np1"}, Verdict: "accept"},
		{Text: "handle 16", Verdict: "return"},
	}
	if d := cmp.Diff(wantUser, user.Rules); d != "" {
		t.Errorf("nft DOCKER-USER (-want +got):\n%s", d)
	}
}

// A native ruleset: sets of interface names, ct state, a port match (only
// part of the traffic), a second base chain at a later priority.
func TestParseFirewallNative(t *testing.T) {
	chains, err := ParseNFTJSON([]byte(verbatim(t, "firewall/nft-forward-accepts-ring.txt")[0]))
	if err != nil {
		t.Fatal(err)
	}
	want := []FilterChain{
		{Table: "inet filter", Name: "forward", Hook: "forward", Priority: 0, Policy: "drop", Rules: []FilterRule{
			{Text: "handle 2", CTState: []string{"established", "related"}, Verdict: "accept"},
			{Text: "handle 3", Partial: true, Verdict: "drop"},
			{Text: "handle 6", In: []string{"enp1s0f0np0", "enp1s0f1np1"}, Out: []string{"enp1s0f0np0", "enp1s0f1np1"}, Verdict: "accept"},
		}},
		{Table: "inet extra", Name: "later", Hook: "forward", Priority: 10, Policy: "accept", Rules: []FilterRule{
			{Text: "handle 2", Src: []string{"10.0.0.0/8"}, Verdict: "drop"},
		}},
	}
	if d := cmp.Diff(want, chains); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := ParseNFTJSON([]byte(verbatim(t, "firewall/nft-text-listing.txt")[0])); err == nil || err.Error() != "nft's ruleset is listed as text, not JSON" {
		t.Errorf("nft's text listing: %v", err)
	}
}

// REJECT with its option, a quoted comment, a goto; nft shows the comment
// and REJECT as xt expressions.
func TestParseFirewallTargets(t *testing.T) {
	blocks := verbatim(t, "firewall/goto-comment-reject.txt")
	want := []FilterRule{
		{Text: "-A FORWARD -p tcp -m multiport --dports 22,80 -j DROP", Partial: true, Verdict: "drop"},
		{Text: `-A FORWARD -i enp1s0f0np0 -m comment --comment "ring: port 0 twin 0" -g RING`, In: []string{"enp1s0f0np0"}, Verdict: "goto", Target: "RING"},
		{Text: "-A FORWARD -i enp1s0f1np1 -j REJECT --reject-with icmp-port-unreachable", In: []string{"enp1s0f1np1"}, Verdict: "reject"},
	}
	ipt := ParseIptablesS([]byte(blocks[0]))
	if len(ipt) != 4 || ipt[1].Name != "FORWARD" || ipt[1].Policy != "accept" {
		t.Fatalf("chains %+v", ipt)
	}
	if d := cmp.Diff(want, ipt[1].Rules); d != "" {
		t.Errorf("iptables FORWARD (-want +got):\n%s", d)
	}
	nft, err := ParseNFTJSON([]byte(blocks[1]))
	if err != nil {
		t.Fatal(err)
	}
	want = []FilterRule{
		{Text: "handle 3", Partial: true, Verdict: "drop"},
		{Text: "handle 4", In: []string{"enp1s0f0np0"}, Verdict: "goto", Target: "RING"},
		{Text: "handle 5", In: []string{"enp1s0f1np1"}, Verdict: "drop"},
	}
	if d := cmp.Diff(want, nft[1].Rules); d != "" {
		t.Errorf("nft FORWARD (-want +got):\n%s", d)
	}
}
