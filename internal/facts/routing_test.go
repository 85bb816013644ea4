package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dockerIptables is `iptables -S` on a host after Docker installed its
// chains (the chains and policy Docker's documentation on packet filtering
// describes: FORWARD DROP, DOCKER-USER first in FORWARD, RETURN by default).
const dockerIptables = `-P INPUT ACCEPT
-P FORWARD DROP
-P OUTPUT ACCEPT
-N DOCKER
-N DOCKER-ISOLATION-STAGE-1
-N DOCKER-ISOLATION-STAGE-2
-N DOCKER-USER
-A FORWARD -j DOCKER-USER
-A FORWARD -j DOCKER-ISOLATION-STAGE-1
-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A DOCKER-USER -i enp1s0f0np0 -o enp1s0f1np1 -j ACCEPT
-A DOCKER-USER -j RETURN
`

const nftForwardDrop = `table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
	}
}
`

const lldpKeyValue = `lldp.enp1s0f1np1.via=LLDP
lldp.enp1s0f1np1.rid=1
lldp.enp1s0f1np1.age=0 day, 00:10:11
lldp.enp1s0f1np1.chassis.mac=48:a9:8a:11:22:33
lldp.enp1s0f1np1.chassis.name=crs812-rack1
lldp.enp1s0f1np1.port.ifname=qsfp56-dd-1-1
`

func TestRoutingParsers(t *testing.T) {
	fw := ParseIptablesS([]byte(dockerIptables))
	want := Firewall{ForwardPolicy: "DROP", DockerUserChain: true, DockerUser: []string{"-i enp1s0f0np0 -o enp1s0f1np1 -j ACCEPT", "-j RETURN"}}
	if d := cmp.Diff(want, fw); d != "" {
		t.Errorf("iptables (-want +got):\n%s", d)
	}
	if got := ParseNFTForwardDrop([]byte(nftForwardDrop)); !cmp.Equal(got, []string{"inet filter forward"}) {
		t.Errorf("nft: %q", got)
	}
	if got := ParseLLDPKeyValue([]byte(lldpKeyValue)); !cmp.Equal(got, []LLDPNeighbor{{Iface: "enp1s0f1np1", ChassisID: "48:a9:8a:11:22:33", SysName: "crs812-rack1", PortID: "qsfp56-dd-1-1"}}) {
		t.Errorf("lldp: %+v", got)
	}
	rs, err := ParseIPRouteJSON([]byte(`[{"dst":"default","gateway":"10.0.0.1","dev":"enP7s7","protocol":"dhcp","flags":[]},{"dst":"192.168.4.0/24","gateway":"192.168.6.1","dev":"enp1s0f1np1","protocol":"static","flags":[]}]`))
	if err != nil || !cmp.Equal(rs, []Route{{Dst: "default", Gateway: "10.0.0.1", Dev: "enP7s7", Proto: "dhcp"}, {Dst: "192.168.4.0/24", Gateway: "192.168.6.1", Dev: "enp1s0f1np1", Proto: "static"}}) {
		t.Errorf("routes %+v, %v", rs, err)
	}
	ns, err := ParseIPNeighJSON([]byte(`[{"dst":"192.168.100.11","dev":"enp1s0f1np1","lladdr":"4C:BB:47:00:00:02","state":["REACHABLE"]},{"dst":"192.168.100.9","dev":"enp1s0f1np1","state":["FAILED"]}]`))
	if err != nil || !cmp.Equal(ns, []Neighbor{{IP: "192.168.100.11", Dev: "enp1s0f1np1", MAC: "4c:bb:47:00:00:02", State: "REACHABLE"}}) {
		t.Errorf("neighbours %+v, %v", ns, err)
	}
}

func FuzzRoutingParsers(f *testing.F) {
	for _, s := range []string{dockerIptables, nftForwardDrop, lldpKeyValue, `[{"dst":"default"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseIptablesS(b)
		ParseNFTForwardDrop(b)
		ParseLLDPKeyValue(b)
		ParseIPRouteJSON(b)
		ParseIPNeighJSON(b)
	})
}
