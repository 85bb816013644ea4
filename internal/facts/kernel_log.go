package facts

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// xidRe matches the NVIDIA driver's Xid report, e.g.
// "NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=..., GPU has fallen off the bus."
var xidRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)`) })

// defaultDomainRe is drivers/iommu/iommu.c's boot line
// "iommu: Default domain type: Translated".
var defaultDomainRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`iommu: Default domain type: (\w+)`) })

// iommuFromKernelLog reads the IOMMU default domain and the SMMU driver
// from the kernel log.
func iommuFromKernelLog(b []byte, m *IOMMU) {
	for _, l := range lines(b) {
		if x := defaultDomainRe().FindStringSubmatch(l); x != nil {
			m.DefaultDomain = x[1]
		}
		if strings.Contains(l, "arm-smmu-v3") {
			m.SMMUv3 = true
		}
	}
}

// parseKernelLog picks Xid events and mlx5 lines out of dmesg or
// journalctl -k output (any prefix: "<6>[ t]", "[ t]", syslog time and host).
func parseKernelLog(b []byte) KernelLog {
	kl := KernelLog{XIDs: []XID{}, MLX5: []LogLine{}}
	for _, l := range lines(b) {
		if m := xidRe().FindStringSubmatch(l); m != nil {
			code, _ := strconv.Atoi(m[2])
			kl.XIDs = append(kl.XIDs, XID{Code: code, PCIBus: NormalizePCIAddr(strings.TrimSuffix(m[1], ".0") + ".0"), Line: strings.TrimSpace(l)})
			continue
		}
		if strings.Contains(l, "AER:") {
			kl.AER = append(kl.AER, LogLine{Line: strings.TrimSpace(l)})
		}
		if strings.Contains(l, "mlx5") {
			kl.MLX5 = append(kl.MLX5, LogLine{Line: strings.TrimSpace(l)})
		}
		if e, ok := nicEvent(l); ok {
			kl.Events = append(kl.Events, e)
		}
	}
	return kl
}
