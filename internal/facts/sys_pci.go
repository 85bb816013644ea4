package facts

import (
	"regexp"
	"strings"
	"sync"
)

// parsePCIeSpeed normalises a link speed: sysfs "32.0 GT/s PCIe" and lspci
// "32GT/s" both become "32GT/s"; "Unknown" becomes "".
func parsePCIeSpeed(s string) string {
	f := strings.Fields(strings.TrimSpace(s))
	if len(f) == 0 || strings.HasPrefix(f[0], "Unknown") {
		return ""
	}
	v := f[0]
	v = strings.TrimSuffix(v, "GT/s")
	v = strings.TrimSuffix(v, ".0")
	return v + "GT/s"
}

// PCIeGen maps a link speed to its PCIe generation (0 if unknown).
func PCIeGen(speed string) int {
	switch speed {
	case "2.5GT/s":
		return 1
	case "5GT/s":
		return 2
	case "8GT/s":
		return 3
	case "16GT/s":
		return 4
	case "32GT/s":
		return 5
	case "64GT/s":
		return 6
	}
	return 0
}

var (
	lspciHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] `)
	})
	lnkRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Speed ([0-9.]+GT/s)[^,]*, Width x([0-9]+)`) })
)

// parseLspciVV reads `lspci -vv` (with or without -D): per function the
// description, driver, LnkCap and LnkSta. Without root, capabilities read
// "<access denied>" and the link fields stay empty.
func parseLspciVV(b []byte) []PCIFunc {
	var out []PCIFunc
	var cur *PCIFunc
	for _, l := range lines(b) {
		if lspciHeader().MatchString(l) {
			addr, desc, _ := strings.Cut(l, " ")
			out = append(out, PCIFunc{Addr: NormalizePCIAddr(addr), Desc: desc})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "LnkCap:"):
			if m := lnkRe().FindStringSubmatch(t); m != nil {
				cur.CapSpeed, cur.CapWidth = parsePCIeSpeed(m[1]), *atoiPtr(m[2])
			}
		case strings.HasPrefix(t, "LnkSta:"):
			if m := lnkRe().FindStringSubmatch(t); m != nil {
				cur.StaSpeed, cur.StaWidth = parsePCIeSpeed(m[1]), *atoiPtr(m[2])
			}
		case strings.HasPrefix(t, "Kernel driver in use:"):
			cur.Driver = strings.TrimSpace(strings.TrimPrefix(t, "Kernel driver in use:"))
		case strings.HasPrefix(t, "NUMA node:"):
			cur.NUMANode = atoiPtr(strings.TrimPrefix(t, "NUMA node:"))
		}
	}
	return out
}
