package facts

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ipLink is one element of `ip -j addr show` / `ip -j link show`.
type ipLink struct {
	IfName    string `json:"ifname"`
	MTU       int    `json:"mtu"`
	OperState string `json:"operstate"`
	Address   string `json:"address"`
	AddrInfo  []struct {
		Family    string `json:"family"`
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
		Dynamic   bool   `json:"dynamic"`
	} `json:"addr_info"`
}

// parseIPAddrJSON reads `ip -j addr show` (or `ip -j link show`) into
// interfaces with their addresses, in kernel order.
func parseIPAddrJSON(b []byte) ([]NetDev, error) {
	var links []ipLink
	if err := json.Unmarshal(b, &links); err != nil {
		return nil, fmt.Errorf("ip -j addr: %w", err)
	}
	out := make([]NetDev, 0, len(links))
	for _, l := range links {
		nd := NetDev{Name: l.IfName, MTU: l.MTU, OperState: l.OperState, MAC: l.Address, Addrs: []Addr{}}
		for _, a := range l.AddrInfo {
			if a.Local == "" {
				continue
			}
			nd.Addrs = append(nd.Addrs, Addr{
				CIDR:    a.Local + "/" + strconv.Itoa(a.PrefixLen),
				Family:  a.Family,
				Scope:   a.Scope,
				Dynamic: a.Dynamic,
			})
		}
		out = append(out, nd)
	}
	return out, nil
}
