package facts

import (
	"strconv"
	"strings"
)

// ParseMeminfo reads /proc/meminfo into byte counts keyed by field name
// ("MemTotal", "CmaTotal"). Values without a unit are kept as they are.
func ParseMeminfo(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	for _, l := range lines(b) {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[strings.TrimSpace(k)] = n
	}
	return out
}

// memoryFrom fills the Memory facts from parsed meminfo.
func memoryFrom(mi map[string]uint64) Memory {
	get := func(k string) *uint64 {
		if v, ok := mi[k]; ok {
			return &v
		}
		return nil
	}
	return Memory{
		TotalBytes:     get("MemTotal"),
		AvailableBytes: get("MemAvailable"),
		SwapTotalBytes: get("SwapTotal"),
		CmaTotalBytes:  get("CmaTotal"),
		CmaFreeBytes:   get("CmaFree"),
	}
}

// parseSelectedMode returns the bracketed choice of a sysfs selector such as
// /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never").
func parseSelectedMode(b []byte) string {
	s := string(b)
	i := strings.IndexByte(s, '[')
	j := strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return strings.TrimSpace(s)
	}
	return s[i+1 : j]
}
