package testrig

import "fmt"

// Sparks returns n host specs named spark-01 … spark-NN, every CX-7 twin at
// MTU 9000, addressed for the given layout:
//
//	"pair": spark-01 port 1 ↔ spark-02 port 1, twins on 192.168.100/24 and 192.168.101/24
//	"ring": three nodes cabled N1.P0–N2.P1, N2.P0–N3.P1, N3.P0–N1.P1, six /24s
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
		if n != 3 {
			return cfg, fmt.Errorf("layout ring needs 3 hosts, not %d", n)
		}
		// Cable k joins node k's port 0 to node k+1's port 1; each twin pair
		// of each cable gets its own /24.
		for k := range 3 {
			a, b := k, (k+1)%3
			for twin := range 2 {
				subnet := 100 + 2*k + twin
				cfg.Hosts[a].NetDevs[PortNetDevs(0)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.%d/24", subnet, 10+a)}}
				cfg.Hosts[b].NetDevs[PortNetDevs(1)[twin]] = NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("192.168.%d.%d/24", subnet, 10+b)}}
			}
			cfg.Links = append(cfg.Links, Cable(cfg.Hosts[a].Name, 0, cfg.Hosts[b].Name, 1)...)
		}
	default:
		return cfg, fmt.Errorf("unknown layout %q (pair, ring, none)", layout)
	}
	return cfg, nil
}
