// Package facts turns a node's snapshot into typed facts.
//
// Parsing is pure: every parser takes bytes (or a snapshot.Snapshot value) and
// returns typed values; nothing here opens files or runs commands. A source
// that was not captured leaves its facts absent (nil pointers, empty slices)
// and is recorded in Node.Sources, so checks can say "not evaluated" instead of
// passing by default.
package facts

// Node is everything sparkrig knows about one machine.
type Node struct {
	Host     string `json:"host"`
	Hostname string `json:"hostname,omitempty"`

	OS     OSInfo      `json:"os"`
	DGX    *DGXRelease `json:"dgx,omitempty"`
	CPU    CPU         `json:"cpu"`
	Memory Memory      `json:"memory"`

	Driver  GPUDriver `json:"driver"`
	GPUs    []GPU     `json:"gpus"`
	NetDevs []NetDev  `json:"netdevs"`
	RDMA    []RDMADev `json:"rdma"`
	PCI     []PCIFunc `json:"pci"`

	// Sysctls holds the values of the kernel parameters sparkrig reads, keyed
	// by dotted name ("net.core.rmem_max").
	Sysctls map[string]string `json:"sysctls"`
	// Modules lists loaded kernel modules.
	Modules []string `json:"modules"`
	Limits  Limits   `json:"limits"`
	NCCL    NCCL     `json:"nccl"`
	// NetConfig is what the persistent network configuration (netplan,
	// NetworkManager, systemd-networkd) says about each interface.
	NetConfig []IfaceConfig `json:"net_config"`
	KernelLog KernelLog     `json:"kernel_log"`
	// IOMMU is how device DMA is translated.
	IOMMU IOMMU `json:"iommu"`

	// MachineID is /etc/machine-id (cloned images share it).
	MachineID string `json:"machine_id,omitempty"`
	// Routes are the main table's routes (ip route).
	Routes []Route `json:"routes,omitempty"`
	// Neighbors are the ARP/NDP entries with a MAC (ip neigh).
	Neighbors []Neighbor `json:"neighbors,omitempty"`
	// Firewall is what the filter rules do to forwarded traffic; nil when
	// they could not be read (iptables and nft need root).
	Firewall *Firewall `json:"firewall,omitempty"`
	// LLDP are the neighbours lldpd heard, per interface.
	LLDP []LLDPNeighbor `json:"lldp,omitempty"`

	// Sources records, per evidence source, whether it could be read.
	Sources map[string]SourceStatus `json:"sources"`
}

// SourceStatus says whether one evidence source was available.
type SourceStatus struct {
	Status string `json:"status"` // "ok", "missing", "denied", "error", "unparsable", "not-captured"
	Detail string `json:"detail,omitempty"`
}

// StatusNotCaptured marks a source the snapshot never asked for (taken by an
// older sparkrig or with a shorter evidence list), as against "missing": the
// node was asked and has no such file or command.
const StatusNotCaptured = "not-captured"

// Has reports whether the named source was captured and parsed.
func (n *Node) Has(source string) bool { return n.Sources[source].Status == "ok" }

// OSInfo describes the operating system and kernel.
type OSInfo struct {
	ID         string `json:"id,omitempty"`         // os-release ID ("ubuntu")
	VersionID  string `json:"version_id,omitempty"` // "24.04"
	PrettyName string `json:"pretty_name,omitempty"`
	Kernel     string `json:"kernel,omitempty"` // uname -r
	Arch       string `json:"arch,omitempty"`   // uname -m
	Cmdline    string `json:"cmdline,omitempty"`
}

// DGXRelease is /etc/dgx-release.
type DGXRelease struct {
	Name    string `json:"name"`              // DGX_NAME
	Version string `json:"version,omitempty"` // DGX_SWBUILD_VERSION or similar
}

// CPU describes processors and their frequency governors.
type CPU struct {
	Model     string   `json:"model,omitempty"`
	Cores     int      `json:"cores"`
	Governors []string `json:"governors,omitempty"` // distinct scaling governors seen
	NUMANodes int      `json:"numa_nodes"`
}

// Memory is /proc/meminfo and related settings, in bytes.
type Memory struct {
	TotalBytes     *uint64 `json:"total_bytes,omitempty"`
	AvailableBytes *uint64 `json:"available_bytes,omitempty"`
	SwapTotalBytes *uint64 `json:"swap_total_bytes,omitempty"`
	CmaTotalBytes  *uint64 `json:"cma_total_bytes,omitempty"`
	CmaFreeBytes   *uint64 `json:"cma_free_bytes,omitempty"`
	THP            string  `json:"thp,omitempty"` // selected mode of transparent_hugepage/enabled
}

// GPUDriver is the NVIDIA driver as nvidia-smi reports it.
type GPUDriver struct {
	Version     string `json:"version,omitempty"`
	CUDAVersion string `json:"cuda_version,omitempty"`
}

// GPU is one NVIDIA GPU.
type GPU struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	UUID        string `json:"uuid,omitempty"`
	PCIBus      string `json:"pci_bus"` // normalised "0000:18:00.0"
	Persistence string `json:"persistence,omitempty"`
	MIGMode     string `json:"mig_mode,omitempty"` // "Enabled", "Disabled", "N/A"
	// MemoryTotalMiB is nil where NVML answers "Not Supported" (GB10).
	MemoryTotalMiB   *uint64  `json:"memory_total_mib,omitempty"`
	ECCMode          string   `json:"ecc_mode,omitempty"`
	ECCUncorrectable *uint64  `json:"ecc_uncorrectable,omitempty"`
	RemapPending     string   `json:"remap_pending,omitempty"`
	RemapFailure     string   `json:"remap_failure,omitempty"`
	ThrottleReasons  []string `json:"throttle_reasons,omitempty"` // active reasons other than idle
	NUMANode         *int     `json:"numa_node,omitempty"`
	ComputeCap       string   `json:"compute_cap,omitempty"`
	Processes        int      `json:"processes"`
}

// NetDev is one network interface.
type NetDev struct {
	Name      string  `json:"name"`
	MTU       int     `json:"mtu"`
	OperState string  `json:"operstate,omitempty"`
	Carrier   *bool   `json:"carrier,omitempty"`
	SpeedMbps *int    `json:"speed_mbps,omitempty"` // nil when unknown or link down
	Driver    string  `json:"driver,omitempty"`
	PCIAddr   string  `json:"pci_addr,omitempty"`
	MAC       string  `json:"mac,omitempty"`
	Addrs     []Addr  `json:"addrs"`
	NUMANode  *int    `json:"numa_node,omitempty"`
	FEC       *string `json:"fec,omitempty"`
	// RDMADev is the RDMA device on the same PCI function, if any.
	RDMADev string `json:"rdma_dev,omitempty"`
}

// Addr is an address on an interface.
type Addr struct {
	CIDR    string `json:"cidr"`   // "192.168.100.10/24"
	Family  string `json:"family"` // "inet" or "inet6"
	Scope   string `json:"scope,omitempty"`
	Dynamic bool   `json:"dynamic"` // a DHCP/RA lease (has a finite valid lifetime)
}

// RDMADev is one RDMA device (an mlx5 function) with its ports.
type RDMADev struct {
	Name    string     `json:"name"`
	NetDev  string     `json:"netdev,omitempty"`
	PCIAddr string     `json:"pci_addr,omitempty"`
	FWVer   string     `json:"fw_ver,omitempty"`
	BoardID string     `json:"board_id,omitempty"`
	Ports   []RDMAPort `json:"ports"`
}

// RDMAPort is a port of an RDMA device.
type RDMAPort struct {
	Num       int    `json:"num"`
	State     string `json:"state"`      // "ACTIVE", "DOWN", ...
	PhysState string `json:"phys_state"` // "LinkUp", "Disabled", ...
	RateGbps  int    `json:"rate_gbps"`
	LinkLayer string `json:"link_layer"` // "Ethernet" or "InfiniBand"
	GIDs      []GID  `json:"gids"`
}

// GID is one populated GID table entry.
type GID struct {
	Index  int    `json:"index"`
	GID    string `json:"gid"`
	Type   string `json:"type"`             // "RoCE v2", "IB/RoCE v1"
	NetDev string `json:"netdev,omitempty"` // gid_attrs/ndevs
	IPv4   string `json:"ipv4,omitempty"`   // set for ::ffff:a.b.c.d entries
}

// PCIFunc is one PCIe function with its link capability and status.
type PCIFunc struct {
	Addr     string  `json:"addr"` // "0000:01:00.0"
	Class    string  `json:"class,omitempty"`
	Desc     string  `json:"desc,omitempty"`
	Driver   string  `json:"driver,omitempty"`
	CapSpeed string  `json:"cap_speed,omitempty"` // "32GT/s"
	CapWidth int     `json:"cap_width,omitempty"`
	StaSpeed string  `json:"sta_speed,omitempty"`
	StaWidth int     `json:"sta_width,omitempty"`
	NUMANode *int    `json:"numa_node,omitempty"`
	Vendor   *string `json:"vendor,omitempty"`
	// IOMMUGroup is the function's IOMMU group ("" when not captured).
	IOMMUGroup string `json:"iommu_group,omitempty"`
}

// Limits are resource limits relevant to RDMA.
type Limits struct {
	// MemlockKiB is the soft memlock limit in KiB; nil when unknown, -1 for unlimited.
	MemlockKiB *int64 `json:"memlock_kib,omitempty"`
	// ConfiguredMemlock says what /etc/security/limits.conf(.d) sets ("unlimited", "65536", "").
	ConfiguredMemlock string `json:"configured_memlock,omitempty"`
}

// NCCL describes the NCCL library and its configuration on the node.
type NCCL struct {
	Version  string            `json:"version,omitempty"` // "2.28.9"
	Library  string            `json:"library,omitempty"` // path of libnccl.so.2 found
	ConfFile map[string]string `json:"conf_file"`         // /etc/nccl.conf
	Env      map[string]string `json:"env"`               // NCCL_* / UCX_* / OMPI_* in the environment
	// Builds are the libnccl.so.2 files found, each with its ELF build ID.
	Builds []NCCLBuild `json:"builds,omitempty"`
}

// IfaceConfig is what persistent configuration says about one interface.
type IfaceConfig struct {
	Name   string   `json:"name"`
	Source string   `json:"source"` // file that configures it ("/etc/netplan/40-cx7.yaml")
	Tool   string   `json:"tool"`   // "netplan", "networkmanager", "networkd", "ifupdown"
	Addrs  []string `json:"addrs"`  // static CIDRs
	DHCP4  bool     `json:"dhcp4"`
	MTU    int      `json:"mtu,omitempty"`
	// LinkLocal is true when the config asks for IPv4 link-local addressing.
	LinkLocal bool `json:"link_local"`
}

// KernelLog holds the kernel-log lines checks care about.
type KernelLog struct {
	XIDs []XID     `json:"xids"`
	MLX5 []LogLine `json:"mlx5"`
	// AER are PCIe Advanced Error Reporting lines.
	AER []LogLine `json:"aer,omitempty"`
	// Events are link, cable and PCIe slot events, in log order.
	Events []NICEvent `json:"events,omitempty"`
}

// XID is an NVIDIA Xid event from the kernel log.
type XID struct {
	Code   int    `json:"code"`
	PCIBus string `json:"pci_bus,omitempty"`
	Line   string `json:"line"`
}

// LogLine is one kernel-log line.
type LogLine struct {
	Line string `json:"line"`
}
