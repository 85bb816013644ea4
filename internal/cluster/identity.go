package cluster

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// identitySource is where the cloned-image and copied-netplan pitfalls are
// described.
const identitySource = "DGX Spark platform notes (known issues: the same address on two nodes; cloned images)"

// identity finds what must be unique across nodes and is not: IPv4
// addresses (on any interface, across nodes and rails), MACs, host names
// and machine ids. A duplicate address answers a ping locally, so neither
// the links nor the ping mesh can see it.
func identity(nodes []*facts.Node) []report.Finding {
	type owner struct{ host, dev string }
	addrs := map[netip.Addr][]owner{}
	macs := map[string][]owner{}
	names := map[string][]string{}
	ids := map[string][]string{}
	for _, n := range nodes {
		seenMAC := map[string]bool{}
		for _, d := range n.NetDevs {
			for _, a := range d.Addrs {
				p, err := netip.ParsePrefix(a.CIDR)
				if err != nil || !p.Addr().Is4() || p.Addr().IsLoopback() {
					continue
				}
				if o := (owner{n.Host, d.Name}); !slices.Contains(addrs[p.Addr()], o) {
					addrs[p.Addr()] = append(addrs[p.Addr()], o)
				}
			}
			// a bridge or bond takes a member's MAC: only other nodes count
			if m := strings.ToLower(d.MAC); m != "" && m != "00:00:00:00:00:00" && !seenMAC[m] &&
				!slices.ContainsFunc(macs[m], func(o owner) bool { return o.host == n.Host }) {
				seenMAC[m] = true
				macs[m] = append(macs[m], owner{n.Host, d.Name})
			}
		}
		// the same node given twice (two snapshots of it) is not a clone
		if n.Hostname != "" && !slices.Contains(names[n.Hostname], n.Host) {
			names[n.Hostname] = append(names[n.Hostname], n.Host)
		}
		if n.MachineID != "" && !slices.Contains(ids[n.MachineID], n.Host) {
			ids[n.MachineID] = append(ids[n.MachineID], n.Host)
		}
	}
	list := func(os []owner) string {
		s := make([]string, len(os))
		for i, o := range os {
			s[i] = o.host + " " + o.dev
		}
		return strings.Join(s, " and ")
	}
	var out []report.Finding
	var keys []netip.Addr
	for a, os := range addrs {
		if len(os) > 1 {
			keys = append(keys, a)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	for _, a := range keys {
		out = append(out, report.Finding{ID: "cluster.duplicate-address", Severity: report.Fail, Subject: a.String(),
			Title:    "an IPv4 address is on more than one interface",
			Observed: fmt.Sprintf("%s on %s", a, list(addrs[a])), Expected: "every address on one interface of one node",
			Why: "a copied netplan gives two nodes the same address: a ping to it is answered by the node itself, so links look " +
				"healthy while nothing reaches the peer; NCCL and MPI connect to the wrong host or to themselves",
			Remedy: report.Manual(report.ActionRun, "give each node its own host number on every rail (sparkrig fix --renumber plans it), then netplan apply"),
			Source: identitySource})
	}
	var dupMACs []string
	for m, os := range macs {
		if len(os) > 1 {
			dupMACs = append(dupMACs, m)
		}
	}
	sort.Strings(dupMACs)
	for _, m := range dupMACs {
		out = append(out, report.Finding{ID: "cluster.duplicate-mac", Severity: report.Fail, Subject: m,
			Title:    "a MAC address is on more than one node",
			Observed: fmt.Sprintf("%s on %s", m, list(macs[m])), Expected: "unique MACs",
			Why:    "two nodes with one MAC on a shared segment steal each other's frames (a cloned VM or a MAC set in netplan)",
			Remedy: report.Manual(report.ActionRun, "remove the macaddress: setting from the copied netplan (or regenerate the VM's MAC)"),
			Source: identitySource})
	}
	dups := func(m map[string][]string, id, what, why, fix string) {
		var vs []string
		for v, hs := range m {
			if len(hs) > 1 {
				vs = append(vs, v)
			}
		}
		sort.Strings(vs)
		for _, v := range vs {
			out = append(out, report.Finding{ID: id, Severity: report.Fail, Subject: v, Title: what + " is the same on more than one node",
				Observed: fmt.Sprintf("%s on %s", v, strings.Join(m[v], " and ")), Expected: "unique on every node",
				Why: why, Remedy: report.Manual(report.ActionRun, fix), Source: identitySource})
		}
	}
	dups(names, "cluster.duplicate-hostname", "the host name",
		"MPI, Ray and NCCL's bootstrap name ranks by host name: two nodes of one name collide (a cloned image)",
		"sudo hostnamectl set-hostname NEW-NAME on one of them, and update /etc/hosts")
	dups(ids, "cluster.duplicate-machine-id", "/etc/machine-id",
		"a cloned image: systemd derives DHCP client ids and the journal's identity from it, so two nodes look like one",
		"on the clone: sudo rm /etc/machine-id && sudo systemd-machine-id-setup, then reboot")
	return out
}

// markDuplicates flags links whose two ends hold the same address.
func markDuplicates(links []report.Link) {
	for i := range links {
		l := &links[i]
		if l.A.Addr != "" && l.A.Addr == l.B.Addr {
			l.Flag(report.LinkFaulty, fmt.Sprintf("both ends hold %s: the link answers itself", l.A.Addr))
		}
	}
}
