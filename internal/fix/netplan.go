package fix

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// renderNetplan writes /etc/netplan/40-cx7.yaml for a node's rails, in the
// shape of NVIDIA's playbooks plus the MTU they leave out.
func renderNetplan(rails []Rail, opt Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by sparkrig fix (topology %s, %s addressing).\n", opt.Topology, opt.Addressing)
	b.WriteString("# Both twins of every cabled port are addressed, each twin on its own subnet,\n")
	fmt.Fprintf(&b, "# MTU %d on both ends of every link.\n", opt.MTU)
	b.WriteString("network:\n  version: 2\n  ethernets:\n")
	for _, r := range rails {
		fmt.Fprintf(&b, "    # port %d twin %d", r.Port, r.Twin)
		if len(r.Peers) > 0 {
			fmt.Fprintf(&b, " -> %s", strings.Join(r.Peers, ", "))
		}
		fmt.Fprintf(&b, "\n    %s:\n      dhcp4: false\n", r.NetDev)
		if opt.Addressing == LinkLocal {
			// Keep the IPv6 link-local address: without it the fe80 GIDs vanish
			// and the RoCEv2 IPv4 GID moves off index 3 (NCCL_IB_GID_INDEX).
			b.WriteString("      link-local: [ipv4, ipv6]\n")
		}
		fmt.Fprintf(&b, "      mtu: %d\n", r.MTU)
		if r.Addr != "" {
			fmt.Fprintf(&b, "      addresses:\n        - %s\n", r.Addr)
		}
	}
	return []byte(b.String())
}

// netplanIfaces lists the interfaces a netplan file configures, or an
// error for a file that cannot be read (the caller refuses rather than guess).
func netplanIfaces(b []byte) ([]string, error) {
	cs, err := facts.ParseNetplan(NetplanPath, b)
	if err != nil {
		return nil, fmt.Errorf("parse netplan: %w", err)
	}
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out, nil
}

// netplanConfig reads what a netplan file fix wrote persists, per interface.
// An unreadable file persists nothing.
func netplanConfig(b []byte) []facts.IfaceConfig {
	cs, _ := facts.ParseNetplan(NetplanPath, b)
	return cs
}
