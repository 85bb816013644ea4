package facts

import (
	"regexp"
	"strings"
	"sync"
)

// NICEvent is a link, cable or PCIe slot event in the kernel log.
type NICEvent struct {
	Kind   string `json:"kind"`   // one of the Event* kinds
	Device string `json:"device"` // the netdev, the PCI function or the slot
	Line   string `json:"line"`
}

// NICEvent kinds.
const (
	EventLinkDown      = "link-down"     // mlx5_core <pci> <netdev>: Link down
	EventLinkUp        = "link-up"       // mlx5_core <pci> <netdev>: Link up
	EventCablePlugged  = "cable-plugged" // Port module event: module N, Cable plugged
	EventCableRemoved  = "cable-removed" // Port module event: module N, Cable unplugged
	EventSlotHotplug   = "slot-hotplug"  // pciehp: Slot(N): Card present / Card not present
	EventSlotLinkState = "slot-link"     // pciehp: Slot(N): Link Up / Link Down
)

var (
	// drivers/net/ethernet/mellanox/mlx5/core/en_main.c, as in
	// "mlx5_core 0000:41:00.0 enp65s0f0np0: Link up".
	mlx5LinkRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`mlx5_core (\S+) (\S+): Link (up|down)`) })
	// mlx5 port module events, as in
	// "mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged".
	mlx5ModuleRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`mlx5_core (\S+): Port module event: module \d+, Cable (plugged|unplugged)`)
	})
	// drivers/pci/hotplug/pciehp, as in
	// "pcieport 0000:c0:01.2: pciehp: Slot(2): Card present".
	pciehpRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(\S+): pciehp: Slot\(([^)]*)\): (Card present|Card not present|Link Up|Link Down)`)
	})
)

// nicEvent returns the event a kernel-log line records, if any.
func nicEvent(l string) (NICEvent, bool) {
	l = strings.TrimSpace(l)
	if m := mlx5LinkRe().FindStringSubmatch(l); m != nil {
		k := EventLinkUp
		if m[3] == "down" {
			k = EventLinkDown
		}
		return NICEvent{Kind: k, Device: m[2], Line: l}, true
	}
	if m := mlx5ModuleRe().FindStringSubmatch(l); m != nil {
		k := EventCablePlugged
		if m[2] == "unplugged" {
			k = EventCableRemoved
		}
		return NICEvent{Kind: k, Device: NormalizePCIAddr(m[1]), Line: l}, true
	}
	if m := pciehpRe().FindStringSubmatch(l); m != nil {
		k := EventSlotHotplug
		if strings.HasPrefix(m[3], "Link") {
			k = EventSlotLinkState
		}
		return NICEvent{Kind: k, Device: NormalizePCIAddr(m[1]) + " slot " + m[2], Line: l}, true
	}
	return NICEvent{}, false
}

// LinkDowns counts the link-down events of one netdev.
func (k KernelLog) LinkDowns(netdev string) int {
	n := 0
	for _, e := range k.Events {
		if e.Kind == EventLinkDown && e.Device == netdev {
			n++
		}
	}
	return n
}

// HotplugEvents returns the cable and slot events: a cable plugged or
// pulled, a PCIe slot's card appearing or going.
func (k KernelLog) HotplugEvents() []NICEvent {
	var out []NICEvent
	for _, e := range k.Events {
		switch e.Kind {
		case EventCablePlugged, EventCableRemoved, EventSlotHotplug:
			out = append(out, e)
		}
	}
	return out
}
