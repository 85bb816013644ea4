package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const lldpKeyValue = `lldp.enp1s0f1np1.via=LLDP
lldp.enp1s0f1np1.rid=1
lldp.enp1s0f1np1.age=0 day, 00:10:11
lldp.enp1s0f1np1.chassis.mac=48:a9:8a:11:22:33
lldp.enp1s0f1np1.chassis.name=crs812-rack1
lldp.enp1s0f1np1.port.ifname=qsfp56-dd-1-1
`

func TestRoutingParsers(t *testing.T) {
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
	for _, s := range []string{lldpKeyValue, `[{"dst":"default"}]`} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"docker-forward-drop.txt", "docker-user-accepts-ring.txt", "nft-forward-accepts-ring.txt", "nft-forward-drop.txt", "goto-comment-reject.txt", "nft-text-listing.txt"} {
		for _, b := range verbatim(f, "firewall/"+name) {
			f.Add([]byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseIptablesS(b)
		ParseNFTJSON(b)
		ParseLLDPKeyValue(b)
		ParseIPRouteJSON(b)
		ParseIPNeighJSON(b)
	})
}
