package fix

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
)

// ErrRefused marks a plan fix will not carry out because it would touch the
// management interface or the interface the SSH session arrives on.
var ErrRefused = errors.New("refused")

// ManagementIface is the DGX Spark's 10 GbE management port.
const ManagementIface = "enP7s7"

// protected lists the interfaces fix must leave alone on a node: the Spark's
// management port and the one the SSH session arrives on.
func protected(n Node) []string {
	var out []string
	for _, d := range n.Facts.NetDevs {
		if d.Name == ManagementIface {
			out = append(out, d.Name)
		}
	}
	if n.Facts.DGX != nil && !slices.Contains(out, ManagementIface) {
		out = append(out, ManagementIface)
	}
	if n.SSHIface != "" && !slices.Contains(out, n.SSHIface) {
		out = append(out, n.SSHIface)
	}
	sort.Strings(out)
	return out
}

// guard refuses a host plan that would touch a protected interface, take over
// the subnet a protected interface (or any interface fix does not manage)
// lives on, or drop a protected interface's configuration by replacing the
// netplan file that holds it.
func guard(n Node, hp HostPlan) error {
	railNames := map[string]bool{}
	for _, r := range hp.Rails {
		railNames[r.NetDev] = true
		if slices.Contains(hp.Protected, r.NetDev) {
			return fmt.Errorf("%w: the plan would reconfigure %s, which carries %s", ErrRefused, r.NetDev, protectedWhy(n, r.NetDev))
		}
	}
	for _, d := range n.Facts.NetDevs {
		if railNames[d.Name] || d.Name == "lo" {
			continue
		}
		for _, a := range d.Addrs {
			p, err := netip.ParsePrefix(a.CIDR)
			if err != nil || !p.Addr().Is4() {
				continue
			}
			for _, r := range hp.Rails {
				if r.Addr == "" {
					continue // link-local: 169.254/16 on other interfaces is normal
				}
				s, err := netip.ParsePrefix(r.Subnet)
				if err == nil && s.Overlaps(p.Masked()) {
					return fmt.Errorf("%w: rail subnet %s overlaps %s on %s; choose other --subnets", ErrRefused, s, a.CIDR, d.Name)
				}
			}
		}
	}
	if cur, ok := n.Current[NetplanPath]; ok {
		ifaces, err := netplanIfaces(cur)
		if err != nil {
			return fmt.Errorf("%w: %s exists and cannot be read (%v); move it aside first", ErrRefused, NetplanPath, err)
		}
		for _, i := range ifaces {
			if slices.Contains(hp.Protected, i) {
				return fmt.Errorf("%w: %s configures %s, which carries %s; replacing it would cut that off", ErrRefused, NetplanPath, i, protectedWhy(n, i))
			}
		}
	}
	return nil
}

func protectedWhy(n Node, iface string) string {
	if iface == n.SSHIface {
		return "this SSH session"
	}
	return "management traffic"
}
