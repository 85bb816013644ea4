package report

// LinkEvidence is what one bench run between nodes says about its links,
// with the facts of its nodes: kept in the run's document so that analyze
// names the same causes of a slow link as the run did.
type LinkEvidence struct {
	// LinkGbps is the negotiated Ethernet speed of the ports (200 on a
	// DGX Spark), 0 when unknown.
	LinkGbps float64 `json:"link_gbps"`
	// PCIeFull is true when every ConnectX-7 function trained at its
	// capability (Gen5 x4 on a DGX Spark).
	PCIeFull bool `json:"pcie_full"`
	// RawGbps is raw RDMA (ib_write_bw) per rail, in Gb/s.
	RawGbps map[string]float64 `json:"raw_gbps,omitempty"`
	// NCCLBusGBps is the NCCL bus bandwidth plateau in GB/s (0: not run),
	// and NCCLExpectGBps what the topology should give.
	NCCLBusGBps    float64 `json:"nccl_busbw_gbps,omitempty"`
	NCCLExpectGBps float64 `json:"nccl_expected_gbps,omitempty"`
	// IOMMU is the nodes' IOMMU mode: "translated", "passthrough" or "".
	IOMMU string `json:"iommu,omitempty"`
	// Hotplug lists cable or PCIe slot hot-plug events of this boot on
	// the nodes.
	Hotplug []string `json:"hotplug,omitempty"`
}
