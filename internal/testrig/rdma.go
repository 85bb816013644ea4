package testrig

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
)

// Stand-in RoCE devices (HostSpec.RDMA): for each netdev with a stand-in PCI
// function, /sys/class/infiniband/<roce name> as a DGX Spark shows it. The
// identity values are those of a real Spark's ConnectX-7 (ibv_devinfo on a
// DGX Spark: fw_ver 28.45.4028, board_id NVD0000000087, link layer
// Ethernet); the port state and the GID table are derived from the veth's
// real state, MAC and IPv4 addresses, in the kernel's sysfs formats.

const (
	standinFW    = "28.45.4028"
	standinBoard = "NVD0000000087"
)

// RoCEName is the RDMA device name the mlx5 driver gives the function
// behind a netdev: enp1s0f1np1 → rocep1s0f1, enP2p1s0f1np1 → roceP2p1s0f1.
func RoCEName(netdev string) string {
	n := strings.TrimPrefix(netdev, "en")
	if i := strings.LastIndex(n, "np"); i > 0 {
		n = n[:i]
	}
	return "roce" + n
}

type ipLink struct {
	IfName    string   `json:"ifname"`
	Address   string   `json:"address"`
	OperState string   `json:"operstate"`
	Flags     []string `json:"flags"`
	AddrInfo  []struct {
		Family string `json:"family"`
		Local  string `json:"local"`
	} `json:"addr_info"`
}

// writeRDMAStandins lays out the devices from the live netdevs of the host.
func (h *Host) writeRDMAStandins(root string, links []Link) error {
	out, err := exec.Command("ip", "-n", h.NS, "-j", "addr", "show").Output()
	if err != nil {
		return fmt.Errorf("host %s: ip addr: %w", h.Name, err)
	}
	var ls []ipLink
	if err := json.Unmarshal(out, &ls); err != nil {
		return err
	}
	byName := map[string]ipLink{}
	for _, l := range ls {
		byName[l.IfName] = l
	}
	for _, dev := range h.netdevs(links) {
		addr := standinPCIAddr(dev)
		l, ok := byName[dev]
		if addr == "" || !ok {
			continue
		}
		if err := writeRoCE(filepath.Join(root, "sys/class/infiniband", RoCEName(dev)), addr, dev, l); err != nil {
			return err
		}
	}
	return nil
}

func writeRoCE(dir, pciAddr, dev string, l ipLink) error {
	up := false // carrier: operstate lags a freshly created veth by up to a second
	for _, f := range l.Flags {
		up = up || f == "LOWER_UP"
	}
	state, phys := "1: DOWN", "3: Disabled"
	if up {
		state, phys = "4: ACTIVE", "5: LinkUp"
	}
	files := map[string]string{
		"fw_ver": standinFW, "board_id": standinBoard, "node_type": "1: CA",
		"sparkrig-standin": "stand-in RoCE device of the test rig for veth " + dev,
		"ports/1/state":    state, "ports/1/phys_state": phys, "ports/1/link_layer": "Ethernet",
		"ports/1/rate": "200 Gb/sec (4X HDR)",
	}
	// Port counters as a ConnectX port has them, all zero: stand-ins that do
	// not count (a test that needs one to move writes it from outside).
	for _, c := range []string{"counters/symbol_error", "counters/link_error_recovery", "counters/link_downed", "counters/port_rcv_errors",
		"counters/port_xmit_discards", "counters/port_xmit_data", "counters/port_rcv_data",
		"hw_counters/out_of_sequence", "hw_counters/packet_seq_err", "hw_counters/local_ack_timeout_err", "hw_counters/roce_adp_retrans"} {
		files["ports/1/"+c] = "0"
	}
	gids := []string{}
	if mac, err := net.ParseMAC(l.Address); err == nil && len(mac) == 6 {
		gids = append(gids, linkLocalGID(mac), linkLocalGID(mac))
	}
	for _, a := range l.AddrInfo {
		if ip, err := netip.ParseAddr(a.Local); err == nil && a.Family == "inet" && ip.Is4() {
			g := ipv4GID(ip)
			gids = append(gids, g, g)
		}
	}
	for i := range 16 {
		g, typ, nd := "0000:0000:0000:0000:0000:0000:0000:0000", "", ""
		if i < len(gids) {
			g, nd = gids[i], dev
			typ = "IB/RoCE v1"
			if i%2 == 1 {
				typ = "RoCE v2"
			}
		}
		files[fmt.Sprintf("ports/1/gids/%d", i)] = g
		if typ != "" {
			files[fmt.Sprintf("ports/1/gid_attrs/types/%d", i)] = typ
			files[fmt.Sprintf("ports/1/gid_attrs/ndevs/%d", i)] = nd
		}
	}
	for name, v := range files {
		if err := writeFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
			return err
		}
	}
	return symlink("../../../"+pciAddr, filepath.Join(dir, "device"))
}

// linkLocalGID is the fe80 GID from the MAC (modified EUI-64), as sysfs prints it.
func linkLocalGID(mac net.HardwareAddr) string {
	return fmt.Sprintf("fe80:0000:0000:0000:%02x%02x:%02xff:fe%02x:%02x%02x", mac[0]^2, mac[1], mac[2], mac[3], mac[4], mac[5])
}

// ipv4GID is the IPv4-mapped GID ("0000:...:ffff:c0a8:640a").
func ipv4GID(ip netip.Addr) string {
	b := ip.As4()
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3])
}
