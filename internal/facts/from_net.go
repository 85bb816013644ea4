package facts

import (
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// pci fills PCI functions of the network, display and 3D classes from sysfs,
// completed by lspci (description; link fields when sysfs lacks them).
func (b *builder) pci() {
	byAddr := map[string]*PCIFunc{}
	var order []string
	for _, p := range b.matching("/sys/bus/pci/devices/*/class") {
		class := b.value(p)
		if !(strings.HasPrefix(class, "0x02") || strings.HasPrefix(class, "0x03")) {
			continue
		}
		dir := path.Dir(p)
		f := &PCIFunc{
			Addr:     path.Base(dir),
			Class:    class,
			CapSpeed: parsePCIeSpeed(b.value(dir + "/max_link_speed")),
			CapWidth: atoi0(b.value(dir + "/max_link_width")),
			StaSpeed: parsePCIeSpeed(b.value(dir + "/current_link_speed")),
			StaWidth: atoi0(b.value(dir + "/current_link_width")),
			NUMANode: numaNode(b.value(dir + "/numa_node")),
		}
		if v := b.value(dir + "/vendor"); v != "" {
			f.Vendor = &v
		}
		if t, ok := b.s.Link(dir + "/driver"); ok {
			f.Driver = path.Base(t)
		}
		if t, ok := b.s.Link(dir + "/iommu_group"); ok {
			f.IOMMUGroup = path.Base(t)
		}
		byAddr[f.Addr] = f
		order = append(order, f.Addr)
	}
	lspciOK := false
	for _, id := range []string{"lspci-mellanox", "lspci-nvidia"} {
		out, _, ok := b.s.Cmd(id)
		if !ok {
			continue
		}
		lspciOK = true
		for _, lf := range parseLspciVV(out) {
			f := byAddr[lf.Addr]
			if f == nil {
				lf := lf
				f = &lf
				byAddr[f.Addr] = f
				order = append(order, f.Addr)
			}
			f.Desc = lf.Desc
			if f.StaWidth == 0 {
				f.CapSpeed, f.CapWidth, f.StaSpeed, f.StaWidth = lf.CapSpeed, lf.CapWidth, lf.StaSpeed, lf.StaWidth
			}
			if f.Driver == "" {
				f.Driver = lf.Driver
			}
		}
	}
	sort.Strings(order)
	for _, a := range order {
		b.n.PCI = append(b.n.PCI, *byAddr[a])
	}
	switch {
	case len(order) > 0 || lspciOK:
		b.set(SrcPCI, "ok", "")
	default:
		b.set(SrcPCI, snapshot.StatusMissing, "no PCI functions in sysfs and no lspci output")
	}
	for i := range b.n.GPUs {
		if f := b.n.PCIFunc(b.n.GPUs[i].PCIBus); f != nil {
			b.n.GPUs[i].NUMANode = f.NUMANode
		}
	}
}

func atoi0(s string) int {
	if n := atoiPtr(s); n != nil {
		return *n
	}
	return 0
}

// numaNode reads a numa_node attribute; -1 (no NUMA information) is nil.
func numaNode(s string) *int {
	n := atoiPtr(s)
	if n == nil || *n < 0 {
		return nil
	}
	return n
}

// netdevs builds interfaces from sysfs, adding addresses from `ip -j addr`.
// Virtual interfaces (lo, bridges, veths) are left out.
func (b *builder) netdevs() {
	var ip []NetDev
	if out, ok := b.cmd(SrcIPAddr, "ip-addr"); ok {
		var err error
		if ip, err = parseIPAddrJSON(out); err != nil {
			b.set(SrcIPAddr, "unparsable", err.Error())
		} else {
			b.set(SrcIPAddr, "ok", "")
		}
	}
	ipByName := map[string]NetDev{}
	for _, d := range ip {
		ipByName[d.Name] = d
	}
	names := b.s.List("/sys/class/net")
	for _, name := range names {
		dir := "/sys/class/net/" + name
		if t, ok := b.s.Link(dir); ok && strings.Contains(t, "/virtual/") {
			continue
		}
		d := NetDev{Name: name, Addrs: []Addr{}, MTU: atoi0(b.value(dir + "/mtu")), OperState: b.value(dir + "/operstate"), MAC: b.value(dir + "/address")}
		if c := b.value(dir + "/carrier"); c != "" {
			up := c == "1"
			d.Carrier = &up
		}
		if sp := atoiPtr(b.value(dir + "/speed")); sp != nil && *sp > 0 {
			d.SpeedMbps = sp
		}
		if t, ok := b.s.Link(dir + "/device"); ok {
			d.PCIAddr = path.Base(t)
		}
		if t, ok := b.s.Link(dir + "/device/driver"); ok {
			d.Driver = path.Base(t)
		}
		d.NUMANode = numaNode(b.value(dir + "/device/numa_node"))
		if x, ok := ipByName[name]; ok {
			d.Addrs = x.Addrs
			if d.MTU == 0 {
				d.MTU, d.OperState, d.MAC = x.MTU, x.OperState, x.MAC
			}
		}
		b.ethtool(&d)
		b.n.NetDevs = append(b.n.NetDevs, d)
	}
	if len(names) > 0 {
		b.set(SrcNetSysfs, "ok", "")
		return
	}
	b.set(SrcNetSysfs, snapshot.StatusMissing, "no /sys/class/net entries captured")
	for _, d := range ip { // fall back to ip alone
		if d.Name != "lo" {
			b.n.NetDevs = append(b.n.NetDevs, d)
		}
	}
}

// ethtool completes speed and FEC from ethtool output.
func (b *builder) ethtool(d *NetDev) {
	if out, _, ok := b.s.Cmd("ethtool." + d.Name); ok {
		b.set(SrcEthtool, "ok", "")
		if d.SpeedMbps == nil {
			d.SpeedMbps = parseEthtoolSpeed(out)
		}
	}
	if out, _, ok := b.s.Cmd("ethtool-fec." + d.Name); ok {
		d.FEC = parseEthtoolFEC(out)
	}
}

// parseEthtoolSpeed reads "Speed: 200000Mb/s" from ethtool output.
func parseEthtoolSpeed(b []byte) *int {
	for _, l := range lines(b) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Speed:"); ok {
			n := atoiPtr(strings.TrimSuffix(strings.TrimSpace(v), "Mb/s"))
			if n != nil && *n > 0 {
				return n
			}
		}
	}
	return nil
}

// parseEthtoolFEC reads "Active FEC encoding: RS" from `ethtool --show-fec`.
func parseEthtoolFEC(b []byte) *string {
	for _, l := range lines(b) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Active FEC encoding:"); ok {
			v = strings.TrimSpace(v)
			return &v
		}
	}
	return nil
}

// rdma builds RDMA devices from sysfs, or from ibv_devinfo when sysfs was
// not captured, and maps each to its netdev.
func (b *builder) rdma() {
	names := b.s.List("/sys/class/infiniband")
	for _, name := range names {
		b.n.RDMA = append(b.n.RDMA, b.rdmaDev(name))
	}
	src := "sysfs"
	if len(names) == 0 {
		if out, ok := b.cmd(SrcRDMA, "ibv-devinfo"); ok {
			b.n.RDMA, src = parseIbvDevinfo(out), "ibv_devinfo"
		}
	}
	m := b.rdmaNetdevMap()
	for i := range b.n.RDMA {
		r := &b.n.RDMA[i]
		if r.NetDev == "" {
			r.NetDev = m[r.Name]
		}
		for j := range b.n.NetDevs {
			nd := &b.n.NetDevs[j]
			if nd.Name == r.NetDev || (r.PCIAddr != "" && nd.PCIAddr == r.PCIAddr) {
				nd.RDMADev, r.NetDev = r.Name, nd.Name
				if r.PCIAddr == "" {
					r.PCIAddr = nd.PCIAddr
				}
			}
		}
	}
	switch {
	case len(b.n.RDMA) > 0:
		b.set(SrcRDMA, "ok", src)
	case b.triedRDMA():
		b.set(SrcRDMA, "ok", "no RDMA devices")
	}
}

// triedRDMA reports whether the capture looked for RDMA devices and found none.
func (b *builder) triedRDMA() bool {
	for _, it := range b.s.Manifest.Items {
		if strings.HasPrefix(it.Name, "/sys/class/infiniband/") {
			return true
		}
	}
	return false
}

func (b *builder) rdmaDev(name string) RDMADev {
	dir := "/sys/class/infiniband/" + name
	r := RDMADev{Name: name, FWVer: b.value(dir + "/fw_ver"), BoardID: b.value(dir + "/board_id"), Ports: []RDMAPort{}}
	if t, ok := b.s.Link(dir + "/device"); ok {
		r.PCIAddr = path.Base(t)
	}
	for _, pn := range b.s.List(dir + "/ports") {
		pd := dir + "/ports/" + pn
		p := RDMAPort{Num: atoi0(pn), GIDs: []GID{}}
		p.State = parseIBState(mustFile(b.s, pd+"/state"))
		p.PhysState = parseIBState(mustFile(b.s, pd+"/phys_state"))
		p.RateGbps = parseIBRate(mustFile(b.s, pd+"/rate"))
		p.LinkLayer = b.value(pd + "/link_layer")
		for _, gi := range b.s.List(pd + "/gids") {
			g := b.value(pd + "/gids/" + gi)
			if emptyGID(g) {
				continue
			}
			p.GIDs = append(p.GIDs, GID{
				Index: atoi0(gi), GID: g, IPv4: gidIPv4(g),
				Type:   b.value(pd + "/gid_attrs/types/" + gi),
				NetDev: b.value(pd + "/gid_attrs/ndevs/" + gi),
			})
		}
		sort.Slice(p.GIDs, func(i, j int) bool { return p.GIDs[i].Index < p.GIDs[j].Index })
		r.Ports = append(r.Ports, p)
	}
	sort.Slice(r.Ports, func(i, j int) bool { return r.Ports[i].Num < r.Ports[j].Num })
	return r
}

// rdmaNetdevMap merges `rdma -j link show` and ibdev2netdev.
func (b *builder) rdmaNetdevMap() map[string]string {
	m := map[string]string{}
	if out, _, ok := b.s.Cmd("ibdev2netdev"); ok {
		for k, v := range parseIbdev2netdev(out) {
			m[k] = v
		}
	}
	if out, _, ok := b.s.Cmd("rdma-link"); ok {
		var links []struct {
			IfName string `json:"ifname"`
			NetDev string `json:"netdev"`
		}
		if json.Unmarshal(out, &links) == nil {
			for _, l := range links {
				if l.NetDev != "" {
					m[l.IfName] = l.NetDev
				}
			}
		}
	}
	return m
}

// NetConfigPartial starts the net-config source detail when some
// configuration was read and some was not (root-only files).
const NetConfigPartial = "unreadable: "

// netConfig reads netplan, NetworkManager and networkd configuration.
func (b *builder) netConfig() {
	tried, denied := false, []string{}
	for _, it := range b.s.Manifest.Items {
		dir := path.Dir(it.Name)
		if it.Kind == snapshot.KindCmd || !(dir == "/etc/netplan" || dir == "/etc/NetworkManager/system-connections" || dir == "/etc/systemd/network") {
			continue
		}
		tried = true
		if it.Status == snapshot.StatusDenied {
			denied = append(denied, it.Name)
			continue
		}
		data, ok := b.s.File(it.Name)
		if !ok {
			continue
		}
		switch {
		case dir == "/etc/netplan":
			cs, err := parseNetplan(it.Name, data)
			if err != nil {
				b.set(SrcNetConfig, "unparsable", err.Error())
				continue
			}
			b.n.NetConfig = append(b.n.NetConfig, cs...)
		case dir == "/etc/NetworkManager/system-connections":
			if c, ok := parseNMConnection(it.Name, data); ok {
				b.n.NetConfig = append(b.n.NetConfig, c)
			}
		case strings.HasSuffix(it.Name, ".network"):
			if c, ok := parseNetworkdNetwork(it.Name, data); ok {
				b.n.NetConfig = append(b.n.NetConfig, c)
			}
		}
	}
	switch {
	case len(denied) > 0 && len(b.n.NetConfig) > 0:
		b.set(SrcNetConfig, "ok", NetConfigPartial+strings.Join(denied, ", "))
	case len(denied) > 0:
		b.set(SrcNetConfig, snapshot.StatusDenied, "cannot read "+strings.Join(denied, ", "))
	case !tried:
		b.set(SrcNetConfig, snapshot.StatusMissing, "network configuration not captured")
	case b.n.Sources[SrcNetConfig].Status == "":
		b.set(SrcNetConfig, "ok", "")
	}
}

// ConfigFor returns the persistent configuration entries naming iface.
func (n *Node) ConfigFor(iface string) []IfaceConfig {
	var out []IfaceConfig
	for _, c := range n.NetConfig {
		if c.Name == iface {
			out = append(out, c)
		}
	}
	return out
}

// nccl reads /etc/nccl.conf, the NCCL_* environment and the library version.
func (b *builder) nccl() {
	if d, ok := b.file(SrcNCCLConf, "/etc/nccl.conf"); ok {
		b.n.NCCL.ConfFile = parseKeyValues(d)
		b.set(SrcNCCLConf, "ok", "")
	}
	if out, ok := b.cmd(SrcEnv, "env"); ok {
		b.n.NCCL.Env = parseKeyValues(out)
		b.set(SrcEnv, "ok", "")
	} else if _, it, _ := b.s.Cmd("env"); it.ExitCode == 1 && len(b.s.Stderr("env")) == 0 {
		b.set(SrcEnv, "ok", "") // a filter that kept nothing
	}
	if out, _, ok := b.s.Cmd("ldconfig"); ok {
		b.n.NCCL.Library = parseLdconfigNCCL(out)
	}
	if out, ok := b.cmd(SrcNCCLBuild, "nccl-build-id"); ok {
		b.n.NCCL.Builds = parseNCCLBuilds(out)
		b.set(SrcNCCLBuild, "ok", "")
	}
	if out, _, ok := b.s.Cmd("dpkg-nccl"); ok {
		b.n.NCCL.Version = parseDpkgNCCL(out)
	}
	if b.n.NCCL.Version == "" {
		for _, it := range b.s.Manifest.Items {
			if strings.Contains(it.Name, "libnccl.so") && it.Status == snapshot.StatusOK {
				if v := ncclVersionFromNames(it.Target, it.Name); v != "" {
					b.n.NCCL.Version = v
					if b.n.NCCL.Library == "" {
						b.n.NCCL.Library = it.Name
					}
				}
			}
		}
	}
	if b.n.NCCL.Version != "" || b.n.NCCL.Library != "" {
		b.set(SrcNCCLLib, "ok", "")
	} else {
		b.set(SrcNCCLLib, snapshot.StatusMissing, "no libnccl.so.2 found by ldconfig, dpkg or in the usual directories")
	}
}

// PCIFunc returns the PCI function at addr, or nil.
func (n *Node) PCIFunc(addr string) *PCIFunc {
	for i := range n.PCI {
		if n.PCI[i].Addr == addr {
			return &n.PCI[i]
		}
	}
	return nil
}

// NetDev returns the interface named name, or nil.
func (n *Node) NetDev(name string) *NetDev {
	for i := range n.NetDevs {
		if n.NetDevs[i].Name == name {
			return &n.NetDevs[i]
		}
	}
	return nil
}
