package facts

import (
	"slices"
	"strings"
)

// IOMMU is how the node translates device DMA: the kernel command line,
// the domain type of each IOMMU group, and what the kernel logged at boot.
type IOMMU struct {
	// Cmdline is what the kernel command line asks: "passthrough"
	// (iommu.passthrough=1 or iommu=pt), "translated" (iommu.passthrough=0),
	// or "" (nothing: the kernel's built-in default).
	Cmdline string `json:"cmdline,omitempty"`
	// GroupTypes maps each IOMMU group to its domain type
	// (/sys/kernel/iommu_groups/N/type: "DMA-FQ", "DMA", "identity").
	GroupTypes map[string]string `json:"group_types,omitempty"`
	// DefaultDomain is the kernel log's "iommu: Default domain type: X"
	// ("Translated", "Passthrough").
	DefaultDomain string `json:"default_domain,omitempty"`
	// SMMUv3 is set when the kernel log names the arm-smmu-v3 driver.
	SMMUv3 bool `json:"smmu_v3,omitempty"`
}

// IOMMU modes.
const (
	IOMMUPassthrough = "passthrough"
	IOMMUTranslated  = "translated"
)

// GroupMode is the mode of one IOMMU group's domain type: identity is
// passthrough, DMA and DMA-FQ translate, anything else is unknown ("").
func GroupMode(typ string) string {
	switch typ {
	case "identity":
		return IOMMUPassthrough
	case "DMA", "DMA-FQ":
		return IOMMUTranslated
	}
	return ""
}

// iommuFromCmdline reads iommu.passthrough= and iommu=pt; the last word wins,
// as the kernel parses them in order.
func iommuFromCmdline(cmdline string) string {
	mode := ""
	for _, w := range strings.Fields(cmdline) {
		switch {
		case w == "iommu=pt" || w == "iommu.passthrough=1" || w == "iommu.passthrough=on" || w == "iommu.passthrough=y":
			mode = IOMMUPassthrough
		case w == "iommu.passthrough=0" || w == "iommu.passthrough=off" || w == "iommu.passthrough=n" || w == "iommu=nopt":
			mode = IOMMUTranslated
		}
	}
	return mode
}

// Mode says how the node translates DMA: the groups' domain types when
// they agree, else the boot log, else the command line; "" when unknown.
func (m IOMMU) Mode() string {
	var modes []string
	for _, t := range m.GroupTypes {
		if g := GroupMode(t); g != "" && !slices.Contains(modes, g) {
			modes = append(modes, g)
		}
	}
	if len(modes) == 1 {
		return modes[0]
	}
	switch m.DefaultDomain {
	case "Translated":
		return IOMMUTranslated
	case "Passthrough":
		return IOMMUPassthrough
	}
	return m.Cmdline
}
