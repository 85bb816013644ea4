package check

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// sparkPort is one QSFP port of the DGX Spark ConnectX-7: two PCIe functions
// ("twins"), each a Gen5 x4 endpoint good for about 100 Gb/s.
type sparkPort = platform.SparkPort

var sparkPorts = platform.SparkPorts[:]

// pairName names both twins of a port, the subject of per-port findings.
func pairName(p sparkPort) string { return p.Twins[0] + "+" + p.Twins[1] }

// presentSparkNetdevs lists the CX-7 netdevs the node has, port by port.
func presentSparkNetdevs(n *facts.Node) []*facts.NetDev {
	var out []*facts.NetDev
	for _, p := range sparkPorts {
		for _, t := range p.Twins {
			if d := n.NetDev(t); d != nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// eachCabledTwin collects f's finding for every present twin of a cabled
// port, with the twin as its subject; a zero Finding adds nothing.
func eachCabledTwin(n *facts.Node, f func(p sparkPort, d *facts.NetDev) report.Finding) []report.Finding {
	var out []report.Finding
	for _, p := range cabledPorts(n) {
		for _, t := range p.Twins {
			d := n.NetDev(t)
			if d == nil {
				continue // spark.cx7-present reports it
			}
			if fd := f(p, d); fd.Severity != "" {
				fd.Subject = t
				out = append(out, fd)
			}
		}
	}
	return out
}

// eachTwinPair collects f's finding for every port of ports whose twins are
// both present, with the pair as its subject; a zero Finding adds nothing.
func eachTwinPair(n *facts.Node, ports []sparkPort, f func(p sparkPort, a, b *facts.NetDev) report.Finding) []report.Finding {
	var out []report.Finding
	for _, p := range ports {
		a, b := n.NetDev(p.Twins[0]), n.NetDev(p.Twins[1])
		if a == nil || b == nil {
			continue
		}
		if fd := f(p, a, b); fd.Severity != "" {
			fd.Subject = pairName(p)
			out = append(out, fd)
		}
	}
	return out
}

// cabled reports whether a port has a live cable: a twin with carrier or up.
func cabled(n *facts.Node, p sparkPort) bool {
	for _, t := range p.Twins {
		if d := n.NetDev(t); d != nil && ((d.Carrier != nil && *d.Carrier) || d.OperState == "up") {
			return true
		}
	}
	return false
}

func cabledPorts(n *facts.Node) []sparkPort {
	var out []sparkPort
	for _, p := range sparkPorts {
		if cabled(n, p) {
			out = append(out, p)
		}
	}
	return out
}

func anyCabled(n *facts.Node) (bool, string) {
	if len(cabledPorts(n)) == 0 {
		return false, "no ConnectX-7 port has a cable (no twin has carrier)"
	}
	return true, ""
}

var spark = []Profile{ProfileSpark}

var sparkCX7Present = Check{
	ID: "spark.cx7-present", Title: "ConnectX-7 netdevs and RoCE devices present and mapped",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs},
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, p := range sparkPorts {
			for i, t := range p.Twins {
				d := n.NetDev(t)
				switch {
				case d == nil:
					out = append(out, report.Finding{Severity: report.Fail, Subject: t,
						Observed: "interface absent", Expected: t + " (" + p.Name + ") present",
						Why:    "each QSFP port is two PCIe functions; a missing function halves that port's bandwidth",
						Remedy: report.Manual(report.ActionFirmware, "check `lspci -d 15b3:` lists four ConnectX-7 functions and `dmesg | grep mlx5` for probe errors; update the DGX OS and firmware"),
						Source: srcPlaybook})
				case n.Has(facts.SrcRDMA) && d.RDMADev == "":
					out = append(out, report.Finding{Severity: report.Warn, Subject: t,
						Observed: "no RDMA device on " + t, Expected: p.RDMA[i] + " ==> " + t,
						Why:    "NCCL uses RoCE through the RDMA device; without it traffic falls back to TCP sockets",
						Remedy: report.Manual(report.ActionRun, "sudo modprobe mlx5_ib && ibdev2netdev"),
						Source: srcPlaybook})
				default:
					out = append(out, ok(t, t+" present"+rdmaSuffix(d)))
				}
			}
		}
		return out
	},
}

func rdmaSuffix(d *facts.NetDev) string {
	if d.RDMADev == "" {
		return ""
	}
	return ", RDMA " + d.RDMADev
}

var sparkLinkSpeed = Check{
	ID: "spark.link-speed", Title: "cabled port negotiated 200 Gb/s",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		return eachCabledTwin(n, func(_ sparkPort, d *facts.NetDev) report.Finding {
			switch {
			case d.SpeedMbps == nil:
				return report.Finding{}
			case *d.SpeedMbps >= 200000:
				return ok("", fmt.Sprintf("%d Mb/s", *d.SpeedMbps))
			}
			return report.Finding{Severity: report.Warn,
				Observed: fmt.Sprintf("%d Mb/s", *d.SpeedMbps), Expected: "200000 Mb/s",
				Why:    "a port that negotiated 100G (typically behind a switch with auto-negotiation) caps the link at half its bandwidth",
				Remedy: report.Manual(report.ActionInspect, "force 200G on the switch port (MikroTik: set the interface speed to 200G-baseCR4, auto-negotiation off), then check `ethtool "+d.Name+" | grep Speed`"),
				Source: "DGX Spark platform notes, pitfall 4; " + srcCommunity}
		})
	},
}

var sparkTwinDown = Check{
	ID: "spark.twin-down", Title: "both twins of a cabled port up",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		return eachCabledTwin(n, func(p sparkPort, d *facts.NetDev) report.Finding {
			if d.OperState == "up" {
				return ok("", "up")
			}
			return report.Finding{Severity: report.Fail,
				Observed: "operstate " + d.OperState + " while its twin on " + p.Name + " is up", Expected: "both twins of a cabled port up",
				Why:    "the cable carries two ~100 Gb/s functions; with one down the port runs at half bandwidth",
				Remedy: report.Manual(report.ActionRun, "sudo ip link set "+d.Name+" up   # and check /etc/netplan/40-cx7.yaml configures it"),
				Source: "DGX Spark platform notes (twins); " + srcPlaybook}
		})
	},
}

var sparkTwinUnaddressed = Check{
	ID: "spark.twin-unaddressed", Title: "both twins of a cabled port addressed",
	Profiles: spark, Needs: []string{facts.SrcIPAddr}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, p := range cabledPorts(n) {
			var have, lack []string
			for _, t := range p.Twins {
				if d := n.NetDev(t); d != nil && len(ipv4(d)) > 0 {
					have = append(have, t)
				} else {
					lack = append(lack, t)
				}
			}
			subject := pairName(p)
			switch len(have) {
			case 2:
				out = append(out, ok(subject, "both twins have IPv4 addresses"))
			case 1:
				out = append(out, report.Finding{Severity: report.Fail, Subject: lack[0],
					Observed: "no IPv4 address; its twin " + have[0] + " has one", Expected: "both twins of " + p.Name + " addressed, on different subnets",
					Why:    "each twin carries only ~100 Gb/s, so a port with one addressed twin runs at half bandwidth",
					Remedy: report.Manual(report.ActionRun, twinNetplanFix(n, p)),
					Source: srcPlaybook + "; " + srcSeed001})
			default:
				out = append(out, report.Finding{Severity: report.Warn, Subject: subject,
					Observed: p.Name + " is cabled but neither twin has an IPv4 address", Expected: "both twins addressed",
					Why:    "RoCE needs an IP address (GID) on each function; an unaddressed cabled port carries no NCCL traffic",
					Remedy: report.Manual(report.ActionRun, twinNetplanFix(n, p)),
					Source: srcPlaybook})
			}
		}
		return out
	},
}

// twinNetplanFix says how to address both twins of a port: sparkrig fix
// with the peer node (it keeps the addressing in place and edits only these
// stanzas), or the same stanzas by hand. Each twin keeps its static address
// when it has one on a subnet of its own; a twin without one gets the next
// /24 up (the cluster doctor names the peer's subnet instead, when it sees it).
func twinNetplanFix(n *facts.Node, p sparkPort) string {
	addrs := twinAddrs(n, p)
	return fmt.Sprintf(`sparkrig fix --plan --hosts %s,PEER
# (PEER: the node at the other end of the cable; --apply makes the change)
# or by hand, keeping everything else in /etc/netplan/40-cx7.yaml (mode 600),
# under network: ethernets: set
#   %s:
#     addresses: [%s]
#     mtu: %d
#     dhcp4: false
#   %s:
#     addresses: [%s]
#     mtu: %d
#     dhcp4: false
# then: sudo netplan apply`, n.Host, p.Twins[0], addrs[0], tuning.RailMTU, p.Twins[1], addrs[1], tuning.RailMTU) + peerMoves(n, p, addrs)
}

// peerMoves says, for each twin the hand fix puts on a subnet it is not on
// now, that the peer's end of that link must move with it: a link's two
// ends share one subnet, so a hand fix of one node alone breaks the pair.
func peerMoves(n *facts.Node, p sparkPort, addrs [2]netip.Prefix) string {
	var b strings.Builder
	for i, t := range p.Twins {
		d := n.NetDev(t)
		if d != nil && slices.ContainsFunc(ipv4(d), func(a netip.Prefix) bool { return a.Masked() == addrs[i].Masked() }) {
			continue
		}
		fmt.Fprintf(&b, "\n# and PEER's twin cabled to %s into %s too\n# (e.g. %s): a link's two ends share one subnet", t, addrs[i].Masked(), peerExample(addrs[i]))
	}
	return b.String()
}

// peerExample is the next host address after a's in its subnet.
func peerExample(a netip.Prefix) string {
	next := a.Addr().Next()
	if !a.Contains(next) {
		next = a.Masked().Addr().Next()
	}
	return netip.PrefixFrom(next, a.Bits()).String()
}

// twinAddrs proposes one static IPv4 prefix per twin, on distinct subnets.
func twinAddrs(n *facts.Node, p sparkPort) [2]netip.Prefix {
	var out [2]netip.Prefix
	for i, t := range p.Twins {
		if d := n.NetDev(t); d != nil {
			for _, a := range ipv4(d) {
				if !isLinkLocal(a) && !dynamic(d, a) {
					out[i] = a
					break
				}
			}
		}
	}
	if out[0].IsValid() && out[1].IsValid() && out[0].Masked() == out[1].Masked() {
		out[1] = netip.Prefix{}
	}
	for i := range out {
		other := out[1-i]
		if out[i].IsValid() {
			continue
		}
		if !other.IsValid() {
			out[i] = netip.MustParsePrefix([]string{"192.168.100.10/24", "192.168.101.10/24"}[i])
			continue
		}
		b := other.Addr().As4()
		b[2]++
		out[i] = netip.PrefixFrom(netip.AddrFrom4(b), other.Bits())
	}
	return out
}

var sparkTwinsSameSubnet = Check{
	ID: "spark.twins-same-subnet", Title: "twins on different subnets",
	Profiles: spark, Needs: []string{facts.SrcIPAddr},
	Run: func(n *facts.Node) []report.Finding {
		return eachTwinPair(n, sparkPorts, func(p sparkPort, a, b *facts.NetDev) report.Finding {
			if len(ipv4(a)) == 0 || len(ipv4(b)) == 0 {
				return report.Finding{} // spark.twin-unaddressed reports it
			}
			switch shared := sharedSubnet(ipv4(a), ipv4(b)); shared {
			case "link-local":
				return report.Finding{Severity: report.Info,
					Observed: "both twins use IPv4 link-local (169.254.0.0/16)", Expected: "link-local or static per-twin subnets",
					Why:    "NVIDIA's link-local option works for two nodes; static per-twin subnets make routing explicit",
					Source: srcPlaybook}
			case "":
				return ok("", cidrs(ipv4(a))+" / "+cidrs(ipv4(b)))
			default:
				return report.Finding{Severity: report.Fail,
					Observed: "both twins in " + shared, Expected: "each twin on its own subnet (e.g. 192.168.100.0/24 and 192.168.101.0/24)",
					Why:    "two interfaces on one subnet make the kernel route and answer ARP through either, which breaks RoCE connections",
					Remedy: report.Manual(report.ActionRun, twinNetplanFix(n, p)),
					Source: "DGX Spark platform notes, pitfall 2; " + srcPlaybook}
			}
		})
	},
}

// sharedSubnet returns a subnet both address lists fall in ("" if none).
func sharedSubnet(a, b []netip.Prefix) string {
	for _, x := range a {
		for _, y := range b {
			if isLinkLocal(x) && isLinkLocal(y) {
				return "link-local"
			}
			if x.Masked() == y.Masked() || x.Contains(y.Addr()) || y.Contains(x.Addr()) {
				return x.Masked().String()
			}
		}
	}
	return ""
}

// activeSparkNetdevs lists CX-7 netdevs that are cabled or addressed.
func activeSparkNetdevs(n *facts.Node) []*facts.NetDev {
	var out []*facts.NetDev
	for _, p := range sparkPorts {
		c := cabled(n, p)
		for _, t := range p.Twins {
			if d := n.NetDev(t); d != nil && (c || len(ipv4(d)) > 0) {
				out = append(out, d)
			}
		}
	}
	return out
}

var sparkMTU = Check{
	ID: "spark.mtu", Title: "jumbo MTU on the ConnectX-7 data path",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, d := range activeSparkNetdevs(n) {
			if twinMTUDiffers(n, d.Name) {
				continue // spark.mtu-twins-differ reports it, with a fix for both
			}
			if mtuNotApplied(n, d) {
				continue // spark.mtu-not-applied: the files are right, the running state is not
			}
			if d.MTU >= tuning.RailMTU {
				out = append(out, ok(d.Name, fmt.Sprintf("MTU %d", d.MTU)))
				continue
			}
			out = append(out, report.Finding{Severity: report.Warn, Subject: d.Name,
				Observed: fmt.Sprintf("MTU %d", d.MTU), Expected: fmt.Sprintf("MTU %d (and the same on the peer and any switch)", tuning.RailMTU),
				Why:    "with MTU 1500 RoCE runs at active_mtu 1024 and all_gather loses about 5 % bus bandwidth",
				Remedy: report.Manual(report.ActionRun, fmt.Sprintf("add `mtu: %d` under %s in /etc/netplan/40-cx7.yaml, then `sudo netplan apply` (now: sudo ip link set %s mtu %d)", tuning.RailMTU, d.Name, d.Name, tuning.RailMTU)),
				Source: srcSeed000 + "; " + srcCommunity})
		}
		return out
	},
}

// mtuNotApplied reports a netdev running below the jumbo MTU its
// persistent configuration sets.
func mtuNotApplied(n *facts.Node, d *facts.NetDev) bool {
	want, _ := configuredMTU(n, d.Name)
	return want >= tuning.RailMTU && d.MTU < want
}

// twinMTUDiffers reports whether a cabled netdev's twin has another MTU.
func twinMTUDiffers(n *facts.Node, name string) bool {
	for _, p := range cabledPorts(n) {
		a, b := n.NetDev(p.Twins[0]), n.NetDev(p.Twins[1])
		if a != nil && b != nil && (a.Name == name || b.Name == name) {
			return a.MTU != b.MTU
		}
	}
	return false
}

var sparkMTUTwins = Check{
	ID: "spark.mtu-twins-differ", Title: "equal MTU on both twins",
	Profiles: spark, Needs: []string{facts.SrcNetSysfs}, Applies: anyCabled,
	Run: func(n *facts.Node) []report.Finding {
		return eachTwinPair(n, cabledPorts(n), func(_ sparkPort, a, b *facts.NetDev) report.Finding {
			if a.MTU == b.MTU {
				return ok("", fmt.Sprintf("MTU %d on both", a.MTU))
			}
			if mtuNotApplied(n, a) || mtuNotApplied(n, b) {
				return ok("", "see spark.mtu-not-applied: the configured MTU is not in effect")
			}
			return report.Finding{Severity: report.Warn,
				Observed: fmt.Sprintf("%s MTU %d, %s MTU %d", a.Name, a.MTU, b.Name, b.MTU), Expected: "the same MTU on both twins",
				Why:    "NCCL stripes traffic over both twins, so the smaller MTU sets the pace and mismatched peers drop jumbo frames",
				Remedy: report.Manual(report.ActionRun, fmt.Sprintf("set `mtu: %d` for both %s and %s in /etc/netplan/40-cx7.yaml; sudo netplan apply", tuning.RailMTU, a.Name, b.Name)),
				Source: srcSeed000}
		})
	},
}

var sparkAddrPersisted = Check{
	ID: "spark.addr-persisted", Title: "ConnectX-7 addresses persisted in configuration",
	Profiles: spark, Needs: []string{facts.SrcIPAddr, facts.SrcNetConfig},
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, d := range presentSparkNetdevs(n) {
			name := d.Name
			for _, a := range ipv4(d) {
				if isLinkLocal(a) || dynamic(d, a) {
					continue
				}
				if src := configuredBy(n, name, a); src != "" {
					out = append(out, ok(name, a.String()+" from "+src))
					continue
				}
				if detail := n.Sources[facts.SrcNetConfig].Detail; strings.HasPrefix(detail, facts.NetConfigPartial) {
					out = append(out, report.Finding{Severity: report.NotEvaluated, Subject: name,
						Observed: a.String() + " is in no readable configuration; " + detail, Expected: "the address in a netplan, NetworkManager or networkd file",
						Why: "the files that might persist it could not be read", Remedy: report.Manual(report.ActionRun, "run sparkrig doctor with sudo"), Source: srcPlaybook})
					continue
				}
				out = append(out, report.Finding{Severity: report.Warn, Subject: name,
					Observed: a.String() + " is set but no netplan, NetworkManager or networkd file configures it", Expected: "the address in /etc/netplan/40-cx7.yaml",
					Why:    "an address set by hand with `ip addr` is gone after a reboot and the cluster silently loses the link",
					Remedy: report.Manual(report.ActionRun, "persist it: add `addresses: ["+a.String()+"]` under "+name+" in /etc/netplan/40-cx7.yaml (mode 600), then `sudo netplan apply`"),
					Source: "DGX Spark platform notes, pitfall 11; " + srcPlaybook})
			}
		}
		return out
	},
}

func dynamic(d *facts.NetDev, p netip.Prefix) bool {
	for _, a := range d.Addrs {
		if a.CIDR == p.String() {
			return a.Dynamic
		}
	}
	return false
}

// configuredBy names the file that configures address a on iface ("" if none).
func configuredBy(n *facts.Node, iface string, a netip.Prefix) string {
	for _, c := range n.ConfigFor(iface) {
		for _, ca := range c.Addrs {
			if p, err := netip.ParsePrefix(ca); err == nil && p.Addr() == a.Addr() {
				return c.Source
			}
		}
	}
	return ""
}

var sparkDHCP = Check{
	ID: "spark.dhcp-on-cx7", Title: "no DHCP on ConnectX-7 netdevs",
	Profiles: spark, Needs: []string{facts.SrcIPAddr},
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, d := range presentSparkNetdevs(n) {
			name := d.Name
			var why []string
			for _, a := range d.Addrs {
				if a.Family == "inet" && a.Dynamic {
					why = append(why, a.CIDR+" is a DHCP lease")
				}
			}
			for _, c := range n.ConfigFor(name) {
				if c.DHCP4 {
					why = append(why, c.Source+" sets dhcp4")
				}
			}
			if len(why) == 0 {
				continue
			}
			out = append(out, report.Finding{Severity: report.Warn, Subject: name,
				Observed: strings.Join(why, "; "), Expected: "a static address (or IPv4 link-local) on each CX-7 netdev",
				Why:    "a lease can change or lapse, and NCCL_IB_HCA/GID pairings built on it break between runs",
				Remedy: report.Manual(report.ActionRun, "set `dhcp4: false` and a static `addresses:` entry for "+name+" in /etc/netplan/40-cx7.yaml; sudo netplan apply"),
				Source: srcSeed000 + "; " + srcPlaybook})
		}
		return out
	},
}

var sparkRoCEGID = Check{
	ID: "spark.roce-gid", Title: "a RoCE v2 GID for every IPv4 address of an active port",
	Profiles: spark, Needs: []string{facts.SrcRDMA}, Applies: onlyIf(hasActiveRDMAWithGIDs, "no active RDMA port with a GID table captured"),
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, r := range n.RDMA {
			for _, p := range r.Ports {
				nd := n.NetDev(r.NetDev)
				if p.State != "ACTIVE" || nd == nil || len(ipv4(nd)) == 0 {
					continue // an unaddressed netdev has no IPv4 GID; spark.twin-unaddressed covers it
				}
				subject := fmt.Sprintf("%s/%d", r.Name, p.Num)
				var found, missing []string
				for _, a := range ipv4(nd) {
					if g := roceV2For(p, a.Addr().String()); g != nil {
						found = append(found, fmt.Sprintf("%s at index %d", g.IPv4, g.Index))
					} else {
						missing = append(missing, a.Addr().String())
					}
				}
				if len(missing) == 0 {
					// Any index will do: it differs between nodes and moves
					// after interface or firmware events, and NCCL finds it.
					out = append(out, ok(subject, "RoCE v2 "+strings.Join(found, ", ")))
					continue
				}
				out = append(out, report.Finding{Severity: report.Warn, Subject: subject,
					Observed: "no RoCE v2 GID for " + strings.Join(missing, ", "), Expected: "a RoCE v2 GID for each IPv4 address of " + r.NetDev + ", at any index",
					Why:    "RoCE v2 over IPv4 needs the address's GID; without it NCCL and perftest fall back to a link-local GID that does not route between subnets",
					Remedy: report.Manual(report.ActionInspect, "check the address is on "+r.NetDev+" itself (not a bridge or VLAN above it), then `grep . /sys/class/infiniband/"+r.Name+"/ports/"+fmt.Sprint(p.Num)+"/gid_attrs/types/*`"),
					Source: "DGX Spark platform notes (NCCL_IB_GID_INDEX); " + srcCommunity})
			}
		}
		return out
	},
}

// roceV2For is the RoCE v2 GID of an IPv4 address on a port, at any index.
func roceV2For(p facts.RDMAPort, ip string) *facts.GID {
	for i := range p.GIDs {
		if g := &p.GIDs[i]; g.Type == "RoCE v2" && g.IPv4 == ip {
			return g
		}
	}
	return nil
}

// ncclGIDIndex judges a pinned NCCL_IB_GID_INDEX: the index must hold a
// RoCE v2 IPv4 GID on every active addressed port of the node, and an empty
// value is the link-local GID 0.
var ncclGIDIndex = Check{
	ID: "nccl.gid-index", Title: "a pinned NCCL_IB_GID_INDEX points at RoCE v2 IPv4 on every HCA",
	Profiles: gpuProfiles, Needs: []string{facts.SrcRDMA},
	Applies: onlyIf(func(n *facts.Node) bool { _, _, ok := pinnedGID(n); return ok }, "NCCL_IB_GID_INDEX is not set: NCCL picks the RoCE v2 GID itself"),
	Run: func(n *facts.Node) []report.Finding {
		v, where, _ := pinnedGID(n)
		subject := "NCCL_IB_GID_INDEX"
		src := "NVIDIA NCCL environment variables (NCCL_IB_GID_INDEX, default -1: automatic since 2.21); FujitsuPolycom/sparkring #186, #290; tonyd2wild/DeepSeek-v4-Flash-Vision-Exp-DSpark-1M-NVFP4-KV-2x-DGX-Spark #38, PR #40; MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark PR #11 (community)"
		unset := "remove NCCL_IB_GID_INDEX from " + where + ": NCCL 2.21 and later choose the RoCE v2 GID per device"
		idx, err := strconv.Atoi(strings.TrimSpace(v))
		if strings.TrimSpace(v) == "" || err != nil {
			return []report.Finding{{Severity: report.Warn, Subject: subject, Observed: fmt.Sprintf("NCCL_IB_GID_INDEX=%q in %s", v, where), Expected: "unset, or an index",
				Why:    "an empty or non-numeric value parses as 0: the link-local GID, which does not route between subnets; connections between nodes fail or fall back",
				Remedy: report.Manual(report.ActionRun, unset), Source: src}}
		}
		var bad []string
		for _, r := range n.RDMA {
			for _, p := range r.Ports {
				if nd := n.NetDev(r.NetDev); p.State != "ACTIVE" || nd == nil || len(ipv4(nd)) == 0 {
					continue
				}
				g := gidAt(p, idx)
				switch {
				case g == nil:
					bad = append(bad, fmt.Sprintf("%s/%d: index %d empty", r.Name, p.Num, idx))
				case g.Type != "RoCE v2" || g.IPv4 == "":
					bad = append(bad, fmt.Sprintf("%s/%d: index %d is %s %s", r.Name, p.Num, idx, g.Type, g.GID))
				}
			}
		}
		if len(bad) == 0 {
			return []report.Finding{ok(subject, fmt.Sprintf("%d (%s): RoCE v2 IPv4 on every active port", idx, where))}
		}
		return []report.Finding{{Severity: report.Warn, Subject: subject, Observed: fmt.Sprintf("%d in %s; %s", idx, where, strings.Join(bad, "; ")),
			Expected: "the index of the RoCE v2 IPv4 GID on every HCA of every node",
			Why:      "the RoCE v2 IPv4 GID sits at different indexes on different nodes and moves after reboots, link and firmware events: a pinned index (in a launcher's environment, or a container started before the move) then selects another GID and RDMA between nodes fails (ibv_modify_qp error 61)",
			Remedy:   report.Manual(report.ActionRun, unset), Source: src}}
	},
}

// pinnedGID returns NCCL_IB_GID_INDEX as the environment or /etc/nccl.conf
// sets it (the environment wins, as in NCCL).
func pinnedGID(n *facts.Node) (value, where string, ok bool) {
	if v, ok := n.NCCL.Env["NCCL_IB_GID_INDEX"]; ok {
		return v, "the environment", true
	}
	if v, ok := n.NCCL.ConfFile["NCCL_IB_GID_INDEX"]; ok {
		return v, "/etc/nccl.conf", true
	}
	return "", "", false
}

func hasActiveRDMAWithGIDs(n *facts.Node) bool {
	for _, r := range n.RDMA {
		for _, p := range r.Ports {
			if p.State == "ACTIVE" && len(p.GIDs) > 0 {
				return true
			}
		}
	}
	return false
}

func gidAt(p facts.RDMAPort, idx int) *facts.GID {
	for i := range p.GIDs {
		if p.GIDs[i].Index == idx {
			return &p.GIDs[i]
		}
	}
	return nil
}

var sparkPCIeWidth = Check{
	ID: "spark.pcie-width", Title: "ConnectX-7 PCIe links trained at Gen5 x4",
	Profiles: spark, Needs: []string{facts.SrcPCI},
	Run: func(n *facts.Node) []report.Finding {
		var out []report.Finding
		for _, f := range n.PCI {
			if f.Vendor == nil || *f.Vendor != "0x15b3" || f.StaWidth == 0 {
				continue
			}
			obs := fmt.Sprintf("%s x%d (capable %s x%d)", f.StaSpeed, f.StaWidth, f.CapSpeed, f.CapWidth)
			switch {
			case f.StaWidth < f.CapWidth || f.StaWidth < 4:
				out = append(out, report.Finding{Severity: report.Fail, Subject: f.Addr,
					Observed: obs, Expected: "32GT/s x4 (PCIe Gen5 x4)",
					Why:    "a CX-7 function trained at x2 moves at most ~50 Gb/s, halving its twin's share of the port",
					Remedy: report.Manual(report.ActionFirmware, "update the DGX Spark BIOS/firmware (`sudo fwupdmgr refresh && sudo fwupdmgr update`), then power-cycle"),
					Source: srcSparkBIOS})
			case facts.PCIeGen(f.StaSpeed) < facts.PCIeGen(f.CapSpeed):
				out = append(out, report.Finding{Severity: report.Warn, Subject: f.Addr,
					Observed: obs, Expected: f.CapSpeed + " x" + fmt.Sprint(f.CapWidth),
					Why:    "a link below its capable speed caps RDMA bandwidth (links idle in a power-saving state also read low)",
					Remedy: report.Manual(report.ActionFirmware, "re-check under load: `sudo lspci -s "+f.Addr+" -vv | grep LnkSta`; update BIOS/firmware if it stays low"),
					Source: srcPCIeSysfs})
			default:
				out = append(out, ok(f.Addr, obs))
			}
		}
		return out
	},
}

var sparkCMA = Check{
	ID: "spark.cma", Title: "contiguous memory area available for RDMA registration",
	Profiles: spark, Needs: []string{facts.SrcMeminfo},
	Run: func(n *facts.Node) []report.Finding {
		cma := n.Memory.CmaTotalBytes
		if cma == nil {
			return []report.Finding{{Severity: report.Info, Subject: "kernel", Observed: "no CmaTotal line in /proc/meminfo", Expected: "CmaTotal > 0 kB"}}
		}
		if *cma > 0 {
			return []report.Finding{ok("kernel", fmt.Sprintf("CmaTotal %d kB", *cma>>10))}
		}
		obs := "CmaTotal: 0 kB on kernel " + n.OS.Kernel
		if !strings.Contains(n.OS.Cmdline, "kho=off") {
			obs += ", kernel command line lacks kho=off"
		}
		var rem *report.Remedy
		if KHOKernel(n.OS.Kernel) && !strings.Contains(n.OS.Cmdline, "kho=off") {
			rem = KHOOff()
		} else {
			// kho=off is the remedy of 7.0 kernels only; elsewhere the pool
			// is missing for a reason sparkrig cannot see.
			rem = report.Manual(report.ActionInspect, "look for cma=0 or a CMA size on the kernel command line (cat /proc/cmdline) and in /etc/default/grub, and check the running kernel is a DGX OS kernel (uname -r; sudo apt full-upgrade installs it)")
		}
		return []report.Finding{{Severity: report.Warn, Subject: "kernel", Observed: obs, Expected: "CmaTotal > 0 kB (kho=off on 7.0 kernels)",
			Why:    "without a CMA pool ibv_reg_mr fails with ENOMEM and NCCL cannot register buffers for RoCE",
			Remedy: rem,
			Source: "DGX Spark platform notes, pitfall 9; " + srcCommunity}}
	},
}

var sparkGPUDirect = Check{
	ID: "spark.gpudirect", Title: "GPUDirect RDMA on GB10",
	Profiles: spark, Needs: []string{facts.SrcModules},
	Run: func(n *facts.Node) []report.Finding {
		return []report.Finding{{Severity: report.Info, Subject: "node",
			Observed: "nvidia_peermem " + loadedWord(n, "nvidia_peermem"), Expected: "not available on GB10 (normal)",
			Why:    "GB10 has no GPUDirect RDMA: NCCL stages through host memory and logs no GDRDMA, which is expected",
			Source: srcGPUDirectGB}}
	},
}

func loadedWord(n *facts.Node, mod string) string {
	if slices.Contains(n.Modules, mod) {
		return "loaded"
	}
	return "not loaded"
}

var sparkOS = Check{
	ID: "spark.os", Title: "Ubuntu 24.04 or later",
	Profiles: spark, Needs: []string{facts.SrcOSRelease},
	Run: func(n *facts.Node) []report.Finding {
		obs := strings.TrimSpace(n.OS.PrettyName + " (" + n.OS.Kernel + ")")
		if n.OS.ID == "ubuntu" && facts.CompareVersions(n.OS.VersionID, "24.04") >= 0 {
			return []report.Finding{ok("os", obs)}
		}
		return []report.Finding{{Severity: report.Warn, Subject: "os", Observed: obs, Expected: "Ubuntu 24.04+ (DGX OS) with the current NVIDIA driver",
			Why:    "the DGX Spark network stack and NCCL builds are validated on DGX OS / Ubuntu 24.04",
			Remedy: report.Manual(report.ActionUpgrade, "sudo apt update && sudo apt full-upgrade (DGX OS), or reinstall DGX OS"),
			Source: srcSeed000}}
	},
}

// KHOKernel says whether a kernel release is one whose kexec handover
// scratch memory breaks RDMA registration (linux-nvidia 7.0), so that
// kho=off is its remedy.
func KHOKernel(release string) bool { return strings.HasPrefix(release, "7.0.") || release == "7.0" }

// KHOOff adds kho=off to the kernel command line; running it twice adds it
// once.
func KHOOff() *report.Remedy {
	return &report.Remedy{Kind: report.RemedyManual, Steps: []report.Step{
		{Action: report.ActionRun, Text: "grep -q 'kho=off' /etc/default/grub || sudo sed -i 's/^GRUB_CMDLINE_LINUX_DEFAULT=\"/&kho=off /' /etc/default/grub"},
		{Action: report.ActionRun, Text: "sudo update-grub"},
		{Action: report.ActionReboot, Text: "sudo reboot"},
	}, Requires: []string{"a linux-nvidia 7.0 kernel (uname -r)"}}
}
