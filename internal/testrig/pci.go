package testrig

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// A veth is a virtual device, and sparkrig (like any tool) leaves virtual
// devices out. So that a rig host looks like a Spark, each netdev named like
// a ConnectX function (enp1s0f1np1, enP2p1s0f1np1, ...) gets a stand-in PCI
// function in the host's sysfs: /sys/class/net/<dev> points into a PCI tree
// (vendor 0x15b3, driver mlx5_core, Gen5 x4), and the netdev's own directory
// is the real veth's, overlaid with a device link and the configured speed.
// MTU, carrier, operstate and addresses stay the real, live values.

// pciNamePattern is systemd's predictable name of a PCI function with a
// physical port name: en[P<domain>]p<bus>s<slot>f<function>np<port>.
var pciNamePattern = regexp.MustCompile(`^enP?(\d*)p(\d+)s(\d+)f(\d+)np(\d+)$`)

// standinPCIAddr returns the PCI address a netdev's name implies ("" if none).
func standinPCIAddr(dev string) string {
	m := pciNamePattern.FindStringSubmatch(dev)
	if m == nil {
		return ""
	}
	dom, _ := strconv.Atoi("0" + m[1])
	bus, _ := strconv.Atoi(m[2])
	slot, _ := strconv.Atoi(m[3])
	fn, _ := strconv.Atoi(m[4])
	return fmt.Sprintf("%04x:%02x:%02x.%d", dom, bus, slot, fn)
}

// pciDevicePath is the function's directory below /sys/devices.
func pciDevicePath(addr string) string {
	dom := addr[:4]
	return fmt.Sprintf("pci%s:00/%s:00:00.0/%s", dom, dom, addr)
}

// netdevs returns every data netdev of the host: configured or cabled.
func (h *Host) netdevs(links []Link) []string {
	devs := map[string]bool{}
	for d := range h.spec.NetDevs {
		devs[d] = true
	}
	for _, l := range links {
		if l.A == h.Name {
			devs[l.ADev] = true
		}
		if l.B == h.Name {
			devs[l.BDev] = true
		}
	}
	return sortedKeys(devs)
}

// writePCIStandins lays out the stand-in PCI functions and returns the
// per-netdev overlay mounts to run after the /sys overlays.
func (h *Host) writePCIStandins(root string, links []Link) (string, error) {
	var mounts string
	for _, dev := range h.netdevs(links) {
		addr := standinPCIAddr(dev)
		if addr == "" {
			continue
		}
		fn := filepath.Join(root, "sys/devices", pciDevicePath(addr))
		files := map[string]string{
			"vendor": "0x15b3\n", "device": "0x1021\n", "class": "0x020000\n", "numa_node": "0\n",
			"current_link_speed": "32.0 GT/s PCIe\n", "current_link_width": "4\n",
			"max_link_speed": "32.0 GT/s PCIe\n", "max_link_width": "4\n",
			"sparkrig-standin": "stand-in PCI function of the test rig for veth " + dev + "\n",
		}
		for name, v := range files {
			if err := writeFile(filepath.Join(fn, name), []byte(v), 0o644); err != nil {
				return "", err
			}
		}
		speed := h.spec.NetDevs[dev].SpeedMbps
		if speed == 0 {
			speed = 200000
		}
		over := filepath.Join(h.Dir, "netdev", dev) // the netdev dir's upper layer
		links := []struct{ at, to string }{
			{filepath.Join(fn, "driver"), "../../../../bus/pci/drivers/mlx5_core"},
			{filepath.Join(root, "sys/class/net", dev), "../../devices/" + pciDevicePath(addr) + "/net/" + dev},
			{filepath.Join(root, "sys/bus/pci/devices", addr), "../../../devices/" + pciDevicePath(addr)},
			{filepath.Join(over, "device"), "../../../" + addr},
		}
		for _, l := range links {
			if err := symlink(l.to, l.at); err != nil {
				return "", err
			}
		}
		if err := writeFile(filepath.Join(over, "speed"), []byte(fmt.Sprintf("%d\n", speed)), 0o644); err != nil {
			return "", err
		}
		target := "/sys/devices/" + pciDevicePath(addr) + "/net/" + dev
		if err := os.MkdirAll(filepath.Join(root, target), 0o755); err != nil {
			return "", err
		}
		mounts += fmt.Sprintf("mount -t overlay sparkrig-testrig -o lowerdir=%s:/sys/devices/virtual/net/%s %s\n", over, dev, target)
	}
	return mounts, nil
}

func symlink(to, at string) error {
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	return os.Symlink(to, at)
}
