package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// srcIOMMUCap is where the translated-mode DMA cap of GB10 comes from.
const srcIOMMUCap = "ServeTheHome, 8x NVIDIA GB10 cluster (https://www.servethehome.com/big-cluster-little-power-the-8x-nvidia-gb10-cluster-marvell-cisco-ubiquiti-qnap-arm/4/): iommu.passthrough=0 is the GB10 kernel default and caps direct DMA near 12.7 Gb/s per port; NCCL stages through the CPU"

// sparkIOMMU says how the ConnectX-7's DMA is translated. Translated
// (DMA-FQ) is the DGX Spark default: raw RDMA into host memory is capped
// near 12.7 Gb/s per port while NCCL, which stages through the CPU, is
// not; a raw RDMA figure near that cap is this mode, not a degraded NIC.
var sparkIOMMU = Check{
	ID: "spark.iommu", Title: "IOMMU mode of the ConnectX-7",
	Profiles: spark, Needs: []string{facts.SrcIOMMU},
	Run: func(n *facts.Node) []report.Finding {
		mode, where := cx7IOMMU(n)
		switch mode {
		case facts.IOMMUPassthrough:
			return []report.Finding{ok("iommu", "passthrough ("+where+")")}
		case facts.IOMMUTranslated:
			return []report.Finding{{Severity: report.Info, Subject: "iommu",
				Observed: "translated (" + where + ")",
				Expected: "translated is the DGX Spark default; passthrough lifts the direct-DMA cap",
				Why:      "in translated mode direct DMA (ib_write_bw into host memory) is capped near 12.7 Gb/s per port, while NCCL on GB10 stages through the CPU and is not held to it: a raw RDMA result near 13 Gb/s per port on such a node is this mode, not a degraded ConnectX-7",
				Remedy: &report.Remedy{Kind: report.RemedyManual, Steps: []report.Step{
					{Action: report.ActionConfigure, Text: "only if raw RDMA must reach line rate (NVIDIA's RDMA guide keeps the default): add iommu.passthrough=1 to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then sudo update-grub"},
					{Action: report.ActionReboot, Text: "sudo reboot"},
				}},
				Source: srcIOMMUCap}}
		}
		return []report.Finding{{Severity: report.Info, Subject: "iommu", Observed: "mode unknown (" + where + ")",
			Expected: "the IOMMU domain type of the ConnectX-7 functions"}}
	},
}

// cx7IOMMU is the IOMMU mode of the node's ConnectX-7 functions, from
// their groups' domain types, else the node's mode, with where it was read.
func cx7IOMMU(n *facts.Node) (mode, where string) {
	types := map[string][]string{}
	for _, f := range n.PCI {
		if f.Vendor == nil || *f.Vendor != "0x15b3" || f.IOMMUGroup == "" {
			continue
		}
		if t := n.IOMMU.GroupTypes[f.IOMMUGroup]; t != "" {
			types[t] = append(types[t], f.Addr)
		}
	}
	if len(types) == 1 {
		for t, addrs := range types {
			sort.Strings(addrs)
			return facts.GroupMode(t), fmt.Sprintf("IOMMU group type %s of %s", t, strings.Join(addrs, ", "))
		}
	}
	m := n.IOMMU
	switch {
	case len(m.GroupTypes) > 0 && m.Mode() != "":
		return m.Mode(), fmt.Sprintf("%d IOMMU groups", len(m.GroupTypes))
	case m.DefaultDomain != "":
		return m.Mode(), "kernel log: iommu: Default domain type: " + m.DefaultDomain
	case m.Cmdline != "":
		return m.Cmdline, "kernel command line"
	}
	return "", "no IOMMU group types, boot line or command-line setting"
}
