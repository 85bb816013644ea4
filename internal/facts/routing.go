package facts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Route is one route of the main table.
type Route struct {
	Dst     string `json:"dst"` // "default" or a prefix ("192.168.102.0/24")
	Gateway string `json:"gateway,omitempty"`
	Dev     string `json:"dev,omitempty"`
	Proto   string `json:"proto,omitempty"` // "kernel" for a connected subnet, "static", "dhcp", ...
}

// Neighbor is one ARP or NDP entry that has a link-layer address.
type Neighbor struct {
	IP    string `json:"ip"`
	Dev   string `json:"dev"`
	MAC   string `json:"mac"`
	State string `json:"state,omitempty"`
}

// LLDPNeighbor is one LLDP neighbour heard on an interface.
type LLDPNeighbor struct {
	Iface     string `json:"iface"`
	ChassisID string `json:"chassis_id,omitempty"`
	SysName   string `json:"sys_name,omitempty"`
	PortID    string `json:"port_id,omitempty"`
}

// Source names of the routing evidence.
const (
	SrcRoutes    = "ip-route"
	SrcNeighbors = "ip-neigh"
	SrcFirewall  = "firewall"
	SrcLLDP      = "lldp"
)

func (b *builder) routing() {
	b.n.MachineID = b.value("/etc/machine-id")
	if out, ok := b.cmd(SrcRoutes, "ip-route"); ok {
		if rs, err := ParseIPRouteJSON(out); err == nil {
			b.n.Routes = rs
			b.set(SrcRoutes, "ok", "")
		} else {
			b.set(SrcRoutes, "unparsable", err.Error())
		}
	}
	if out, ok := b.cmd(SrcNeighbors, "ip-neigh"); ok {
		if ns, err := ParseIPNeighJSON(out); err == nil {
			b.n.Neighbors = ns
			b.set(SrcNeighbors, "ok", "")
		} else {
			b.set(SrcNeighbors, "unparsable", err.Error())
		}
	}
	b.firewall()
	if out, ok := b.cmd(SrcLLDP, "lldp"); ok {
		b.n.LLDP = ParseLLDPKeyValue(out)
		b.set(SrcLLDP, "ok", "")
	}
}

// ParseIPRouteJSON reads `ip -j route show`.
func ParseIPRouteJSON(b []byte) ([]Route, error) {
	var raw []struct {
		Dst      string `json:"dst"`
		Gateway  string `json:"gateway"`
		Dev      string `json:"dev"`
		Protocol string `json:"protocol"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return []Route{}, nil
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make([]Route, 0, len(raw))
	for _, r := range raw {
		out = append(out, Route{Dst: r.Dst, Gateway: r.Gateway, Dev: r.Dev, Proto: r.Protocol})
	}
	return out, nil
}

// ParseIPNeighJSON reads `ip -j neigh show`; entries without a MAC (FAILED,
// INCOMPLETE) are left out.
func ParseIPNeighJSON(b []byte) ([]Neighbor, error) {
	var raw []struct {
		Dst    string   `json:"dst"`
		Dev    string   `json:"dev"`
		LLAddr string   `json:"lladdr"`
		State  []string `json:"state"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return []Neighbor{}, nil
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := []Neighbor{}
	for _, r := range raw {
		if r.LLAddr == "" {
			continue
		}
		out = append(out, Neighbor{IP: r.Dst, Dev: r.Dev, MAC: strings.ToLower(r.LLAddr), State: strings.Join(r.State, ",")})
	}
	return out, nil
}

// ParseLLDPKeyValue reads `lldpctl -f keyvalue`
// (lldp.eth0.chassis.name=sw1, lldp.eth0.chassis.mac=..., lldp.eth0.port.ifname=...).
func ParseLLDPKeyValue(b []byte) []LLDPNeighbor {
	by := map[string]*LLDPNeighbor{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		f := strings.SplitN(k, ".", 3)
		if !ok || len(f) < 3 || f[0] != "lldp" {
			continue
		}
		n := by[f[1]]
		if n == nil {
			n = &LLDPNeighbor{Iface: f[1]}
			by[f[1]] = n
			order = append(order, f[1])
		}
		switch f[2] {
		case "chassis.name":
			n.SysName = v
		case "chassis.mac", "chassis.id":
			if n.ChassisID == "" {
				n.ChassisID = v
			}
		case "port.ifname", "port.local":
			if n.PortID == "" {
				n.PortID = v
			}
		}
	}
	out := make([]LLDPNeighbor, 0, len(order))
	for _, i := range order {
		out = append(out, *by[i])
	}
	return out
}

// firewall reads the filter rules: iptables -S and nft -j list ruleset,
// either or both. Where nft is installed its ruleset must be read too: the
// kernel applies its forward chains as well as iptables' (iptables-nft
// puts its own there). A ruleset that did not come out as JSON (a capture
// made before sparkrig asked for JSON) leaves the firewall unread.
func (b *builder) firewall() {
	ipt, iptOK := b.cmd(SrcFirewall, "iptables")
	nft, it, nftRan := b.s.Cmd("nft")
	nftOK := nftRan && it.ExitCode == 0
	if !iptOK && !nftOK {
		return
	}
	fw := &Firewall{}
	if nftRan && it.ExitCode != 0 && it.ExitCode != 127 { // 127: the shell found no nft
		fw.NFTError = strings.TrimSpace("nft exited " + strconv.Itoa(it.ExitCode) + ": " + firstLine(b.s.Stderr("nft")))
	}
	if iptOK {
		fw.Iptables = ParseIptablesS(ipt)
	}
	if nftOK {
		chains, err := ParseNFTJSON(nft)
		if err != nil {
			b.set(SrcFirewall, "unparsable", err.Error()+" (an older capture: capture again)")
			return
		}
		fw.NFT, fw.NFTRead = chains, true
	}
	b.n.Firewall = fw
	switch {
	case !iptOK:
		b.set(SrcFirewall, "ok", "nftables only")
	case !nftOK:
		b.set(SrcFirewall, "ok", "iptables only")
	default:
		b.set(SrcFirewall, "ok", "")
	}
}
