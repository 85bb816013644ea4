package capture

import (
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

func TestAnonymizerReplacesConsistently(t *testing.T) {
	a := NewAnonymizer()
	a.Learn("spark-01", nil, &facts.Node{Hostname: "spark-01.lab.example.com", NetDevs: []facts.NetDev{
		{Name: "enp1s0f0np0", MAC: "4c:bb:47:2c:8e:1a", Addrs: []facts.Addr{{CIDR: "192.168.100.10/24"}, {CIDR: "fe80::4ebb:47ff:fe2c:8e1a/64"}}},
		{Name: "enP7s7", MAC: "4c:bb:47:2c:8e:1f", Addrs: []facts.Addr{{CIDR: "81.2.69.160/24"}}},
	}})
	s := snapshot.New("spark-01")
	s.Data["files/etc/hostname"] = []byte("spark-01.lab.example.com\n")
	s.Data["cmds/ip-addr.stdout"] = []byte("2: enp1s0f0np0    inet 192.168.100.10/24 link/ether 4c:bb:47:2c:8e:1a\n3: enP7s7 inet 81.2.69.160/24 brd 81.2.69.255\n4: sparkrig-spark-01x 4C:BB:47:2C:8E:1F\n")
	s.Data["files/sys/class/infiniband/rocep1s0f0/ports/1/gids/0"] = []byte("fe80:0000:0000:0000:4ebb:47ff:fe2c:8e1a\n")
	s.Data["files/sys/class/infiniband/rocep1s0f0/ports/1/gids/9"] = []byte("0000:0000:0000:0000:0000:ffff:5102:45a0\n")
	a.Rewrite(s)
	want := map[string]string{
		"files/etc/hostname":  "node-02\n",
		"cmds/ip-addr.stdout": "2: enp1s0f0np0    inet 192.168.100.10/24 link/ether 02:00:00:00:00:01\n3: enP7s7 inet 203.0.113.1/24 brd 81.2.69.255\n4: sparkrig-spark-01x 02:00:00:00:00:02\n",
		"files/sys/class/infiniband/rocep1s0f0/ports/1/gids/0": "fe80:0000:0000:0000:0000:00ff:fe00:0001\n",
		"files/sys/class/infiniband/rocep1s0f0/ports/1/gids/9": "0000:0000:0000:0000:0000:ffff:cb00:7101\n",
	}
	for k, v := range want {
		if got := string(s.Data[k]); got != v {
			t.Errorf("%s:\n got %q\nwant %q", k, got, v)
		}
	}
	if s.Manifest.Host != "node-01" || !s.Manifest.Anonymized {
		t.Errorf("manifest host %q, anonymized %v", s.Manifest.Host, s.Manifest.Anonymized)
	}
}
