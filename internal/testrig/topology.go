package testrig

import "fmt"

// Sparks returns n host specs named spark-01 … spark-NN, every CX-7 twin at
// MTU 9000, addressed for the given layout:
//
//	"pair": spark-01 port 1 ↔ spark-02 port 1, twins on 192.168.100/24 and 192.168.101/24
//	"ring": three nodes cabled N1.P0–N2.P1, N2.P0–N3.P1, N3.P0–N1.P1, six /24s
//	        addressed as in NVIDIA's "Connect Three Sparks" playbook
//	"none": no data links (management network only; any n)
//
// Tests start from these and change what they need.
func Sparks(n int, layout string) (Config, error) {
	cfg := Config{}
	for i := range n {
		cfg.Hosts = append(cfg.Hosts, HostSpec{Name: fmt.Sprintf("spark-%02d", i+1), NetDevs: map[string]NetDev{}})
	}
	switch layout {
	case "none", "":
	case "pair":
		if n != 2 {
			return cfg, fmt.Errorf("layout pair needs 2 hosts, not %d", n)
		}
		for twin, dev := range PortNetDevs(1) {
			for i := range 2 {
				cfg.Hosts[i].NetDevs[dev] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.%d/24", 100+twin, 10+i)}}
			}
		}
		cfg.Links = Cable("spark-01", 1, "spark-02", 1)
	case "ring":
		if n < 3 {
			return cfg, fmt.Errorf("layout ring needs 3 or more hosts, not %d", n)
		}
		if n > 3 {
			// Cable k joins node k's port 0 (.1) to node k+1's port 1 (.2) on
			// 192.168.2k.x (twin 0) and 192.168.2k+1.x (twin 1).
			for k := range n {
				next := (k + 1) % n
				for twin := range 2 {
					cfg.Hosts[k].NetDevs[PortNetDevs(0)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.1/24", 2*k+twin)}}
					cfg.Hosts[next].NetDevs[PortNetDevs(1)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.2/24", 2*k+twin)}}
				}
				cfg.Links = append(cfg.Links, Cable(cfg.Hosts[k].Name, 0, cfg.Hosts[next].Name, 1)...)
			}
			break
		}
		// NVIDIA's "Connect Three Sparks" addressing: cable N1.P0–N2.P1 on
		// 192.168.0-1.x, N1.P1–N3.P0 on 192.168.2-3.x, N2.P0–N3.P1 on
		// 192.168.4-5.x; the port-0 end is .1, the port-1 end .2.
		for _, c := range []struct{ p0, p1, subnet int }{{0, 1, 0}, {2, 0, 2}, {1, 2, 4}} {
			for twin := range 2 {
				cfg.Hosts[c.p0].NetDevs[PortNetDevs(0)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.1/24", c.subnet+twin)}}
				cfg.Hosts[c.p1].NetDevs[PortNetDevs(1)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.2/24", c.subnet+twin)}}
			}
			cfg.Links = append(cfg.Links, Cable(cfg.Hosts[c.p0].Name, 0, cfg.Hosts[c.p1].Name, 1)...)
		}
	default:
		return cfg, fmt.Errorf("unknown layout %q (pair, ring, none)", layout)
	}
	return cfg, nil
}
