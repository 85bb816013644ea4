// Package capture collects a node's raw evidence into a snapshot: the files
// listed in Files and the outputs of the commands listed in Commands.
//
// The two lists are declarative on purpose. The local capture (Local) walks
// them in Go; the SSH capture script is generated from the very same lists, so
// a snapshot taken over SSH holds the same items under the same names.
// Nothing here interprets evidence: parsing lives in package facts.
package capture

import "time"

// Path is one file, symlink or glob the capture reads.
type Path struct {
	// Glob is an absolute path or a filepath.Match pattern. A pattern that
	// matches nothing is recorded once, as missing, under the pattern itself.
	Glob string
	// Link records a symlink's target (readlink) instead of reading content:
	// sysfs links such as /sys/class/net/*/device name PCI addresses and drivers.
	Link bool
	// NameOnly records that the path exists without reading it (symlinks as
	// links, regular files as empty files); used for shared libraries.
	NameOnly bool
	// Why says what the evidence is for.
	Why string
}

// Each values: a command run once per item of a set found on the node.
const (
	// EachNetdev runs a command once per physical network interface, that is
	// every /sys/class/net/<name> with a device link; "{netdev}" in Argv and
	// the command id are replaced by the interface name ("ethtool.enp1s0f0np0").
	EachNetdev = "netdev"
)

// Command is one command the capture runs. Its stdout, stderr and exit status
// are stored under cmds/<ID>.
type Command struct {
	// ID names the command's evidence; stable, [a-z0-9-] only.
	ID   string
	Argv []string
	// Each, when set, runs the command once per member of that set; the
	// evidence is stored as "<ID>.<member>".
	Each string
	// Timeout bounds the command; DefaultTimeout when zero.
	Timeout time.Duration
	// Filter, when set, is an extended regular expression (POSIX ERE, the
	// subset Go's regexp shares): only stdout lines that match are kept.
	Filter string
	// Tail, when positive, keeps only the last Tail lines (after Filter).
	Tail int
	// Why says what the evidence is for.
	Why string
	// Local, when set, makes the local capture call it instead of running
	// Argv: it writes what the script's command prints, read in Go so the
	// node needs no tool (an ELF note through debug/elf, not readelf).
	Local func() []byte
}

// Limits on what one item may add to a snapshot.
const (
	DefaultTimeout = 5 * time.Second
	// MaxFileBytes bounds a file read (/proc/cpuinfo of a 192-core host is ~0.5 MiB).
	MaxFileBytes = 4 << 20
	// MaxOutputBytes bounds a command's stdout and stderr each.
	MaxOutputBytes = 16 << 20
)

// Files is every file and link the capture reads, in order.
var Files = []Path{
	// Identity and operating system.
	{Glob: "/proc/sys/kernel/hostname", Why: "host name"},
	{Glob: "/etc/machine-id", Why: "machine id (the same on two nodes means a cloned image)"},
	{Glob: "/etc/os-release", Why: "distribution and release (Ubuntu 24.04+ expected on DGX Spark)"},
	{Glob: "/etc/dgx-release", Why: `DGX OS identity; DGX_NAME="DGX Spark" selects the dgx-spark profile`},
	{Glob: "/proc/sys/kernel/osrelease", Why: "kernel release"},
	{Glob: "/proc/version", Why: "kernel build string"},
	{Glob: "/proc/cmdline", Why: "kernel command line (kho=off on 7.0 kernels, iommu settings)"},
	{Glob: "/sys/kernel/iommu_groups/*/type", Why: "IOMMU domain type per group (DMA-FQ, DMA: translated; identity: passthrough)"},

	// CPU, memory, NUMA.
	{Glob: "/proc/cpuinfo", Why: "CPU model and core count"},
	{Glob: "/proc/meminfo", Why: "memory, swap and CmaTotal (0 kB breaks ibv_reg_mr on DGX Spark)"},
	{Glob: "/proc/swaps", Why: "active swap devices"},
	{Glob: "/proc/modules", Why: "loaded kernel modules (nvidia_peermem, mlx5_ib, nvidia)"},
	{Glob: "/proc/self/limits", Why: "resource limits of the capturing process (max locked memory)"},
	{Glob: "/sys/kernel/mm/transparent_hugepage/enabled", Why: "transparent huge pages mode"},
	{Glob: "/sys/kernel/mm/transparent_hugepage/defrag", Why: "transparent huge pages defrag mode"},
	{Glob: "/sys/devices/system/cpu/online", Why: "online CPUs"},
	{Glob: "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor", Why: "CPU frequency governor per core"},
	{Glob: "/sys/devices/system/node/online", Why: "online NUMA nodes"},
	{Glob: "/sys/devices/system/node/node*/cpulist", Why: "CPUs of each NUMA node"},

	// Kernel parameters (sysctl), read from /proc/sys.
	{Glob: "/proc/sys/vm/swappiness", Why: "vm.swappiness"},
	{Glob: "/proc/sys/vm/zone_reclaim_mode", Why: "vm.zone_reclaim_mode"},
	{Glob: "/proc/sys/kernel/numa_balancing", Why: "kernel.numa_balancing"},
	{Glob: "/proc/sys/net/core/rmem_max", Why: "net.core.rmem_max (TCP bootstrap and iperf3 throughput)"},
	{Glob: "/proc/sys/net/core/wmem_max", Why: "net.core.wmem_max"},
	{Glob: "/proc/sys/net/core/rmem_default", Why: "net.core.rmem_default"},
	{Glob: "/proc/sys/net/core/wmem_default", Why: "net.core.wmem_default"},
	{Glob: "/proc/sys/net/core/netdev_max_backlog", Why: "net.core.netdev_max_backlog"},
	{Glob: "/proc/sys/net/ipv4/tcp_rmem", Why: "net.ipv4.tcp_rmem"},
	{Glob: "/proc/sys/net/ipv4/tcp_wmem", Why: "net.ipv4.tcp_wmem"},
	{Glob: "/proc/sys/net/ipv4/ip_local_port_range", Why: "net.ipv4.ip_local_port_range"},
	{Glob: "/proc/sys/net/ipv4/tcp_congestion_control", Why: "net.ipv4.tcp_congestion_control"},
	{Glob: "/proc/sys/net/ipv4/conf/*/rp_filter", Why: "reverse-path filtering, all and per interface (multi-subnet RoCE, routed rings)"},
	{Glob: "/proc/sys/net/ipv4/ip_forward", Why: "net.ipv4.ip_forward (rings of four or more nodes route through a neighbour)"},
	{Glob: "/proc/sys/kernel/dmesg_restrict", Why: "whether an unprivileged dmesg is refused"},

	// Network interfaces (sysfs).
	{Glob: "/sys/class/net/*", Link: true, Why: "interface list; the target tells physical (PCI) from virtual"},
	{Glob: "/sys/class/net/*/mtu", Why: "MTU (9000 expected on CX-7 netdevs)"},
	{Glob: "/sys/class/net/*/operstate", Why: "link state"},
	{Glob: "/sys/class/net/*/carrier", Why: "cable carrier"},
	{Glob: "/sys/class/net/*/speed", Why: "negotiated speed in Mb/s (200000 per DGX Spark port)"},
	{Glob: "/sys/class/net/*/address", Why: "MAC address"},
	{Glob: "/sys/class/net/*/device", Link: true, Why: "PCI function of the interface"},
	{Glob: "/sys/class/net/*/device/driver", Link: true, Why: "driver of the interface (mlx5_core)"},
	{Glob: "/sys/class/net/*/device/numa_node", Why: "NUMA node of the NIC"},

	// RDMA devices (sysfs).
	{Glob: "/sys/class/infiniband/*/device", Link: true, Why: "PCI function of the RDMA device"},
	{Glob: "/sys/class/infiniband/*/fw_ver", Why: "firmware version"},
	{Glob: "/sys/class/infiniband/*/board_id", Why: "board id (NVD0000000087 on DGX Spark)"},
	{Glob: "/sys/class/infiniband/*/node_type", Why: "node type"},
	{Glob: "/sys/class/infiniband/*/ports/*/state", Why: "port state (4: ACTIVE)"},
	{Glob: "/sys/class/infiniband/*/ports/*/phys_state", Why: "physical port state (5: LinkUp)"},
	{Glob: "/sys/class/infiniband/*/ports/*/rate", Why: "port rate"},
	{Glob: "/sys/class/infiniband/*/ports/*/link_layer", Why: "Ethernet (RoCE) or InfiniBand"},
	// GID indexes 0-15 cover the link-local and IPv4 entries of a RoCE port;
	// the table holds up to 255 mostly empty entries.
	{Glob: "/sys/class/infiniband/*/ports/*/gids/[0-9]", Why: "GID table (index 3 = RoCEv2 IPv4 by convention)"},
	{Glob: "/sys/class/infiniband/*/ports/*/gids/1[0-5]", Why: "GID table, indexes 10-15"},
	{Glob: "/sys/class/infiniband/*/ports/*/gid_attrs/types/[0-9]", Why: "GID type (RoCE v2, IB/RoCE v1)"},
	{Glob: "/sys/class/infiniband/*/ports/*/gid_attrs/types/1[0-5]", Why: "GID type, indexes 10-15"},
	{Glob: "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/[0-9]", Why: "netdev of each GID"},
	{Glob: "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/1[0-5]", Why: "netdev of each GID, indexes 10-15"},

	// PCI functions (sysfs): link capability and status without root.
	{Glob: "/sys/bus/pci/devices/*/class", Why: "PCI class (network, display, 3D controller)"},
	{Glob: "/sys/bus/pci/devices/*/vendor", Why: "PCI vendor (0x15b3 Mellanox, 0x10de NVIDIA)"},
	{Glob: "/sys/bus/pci/devices/*/device", Why: "PCI device id"},
	{Glob: "/sys/bus/pci/devices/*/current_link_speed", Why: "PCIe link speed in use (LnkSta)"},
	{Glob: "/sys/bus/pci/devices/*/current_link_width", Why: "PCIe link width in use (x2 = old DGX Spark BIOS)"},
	{Glob: "/sys/bus/pci/devices/*/max_link_speed", Why: "PCIe link speed capability (LnkCap)"},
	{Glob: "/sys/bus/pci/devices/*/max_link_width", Why: "PCIe link width capability"},
	{Glob: "/sys/bus/pci/devices/*/numa_node", Why: "NUMA node of the function"},
	{Glob: "/sys/bus/pci/devices/*/driver", Link: true, Why: "driver bound to the function"},
	{Glob: "/sys/bus/pci/devices/*/iommu_group", Link: true, Why: "IOMMU group of the function (its type says whether its DMA is translated)"},

	// NVIDIA driver without nvidia-smi.
	{Glob: "/proc/driver/nvidia/version", Why: "NVIDIA kernel driver version"},
	{Glob: "/sys/module/nvidia_peermem/version", Why: "nvidia_peermem (GPUDirect RDMA) module version"},

	// Persistent network configuration.
	{Glob: "/etc/netplan/*.yaml", Why: "netplan (NVIDIA writes /etc/netplan/40-cx7.yaml); may be root-only"},
	{Glob: "/etc/NetworkManager/system-connections/*", Why: "NetworkManager profiles; root-only, often denied"},
	{Glob: "/etc/systemd/network/*", Why: "systemd-networkd configuration"},
	{Glob: "/etc/network/interfaces", Why: "ifupdown configuration"},

	// NCCL and limits configuration.
	{Glob: "/etc/nccl.conf", Why: "system-wide NCCL settings"},
	{Glob: "/etc/security/limits.conf", Why: "configured memlock"},
	{Glob: "/etc/security/limits.d/*", Why: "configured memlock"},
	{Glob: "/etc/sysctl.d/*.conf", Why: "persistent kernel parameters (sparkrig fix writes 60-sparkrig.conf)"},
	{Glob: "/etc/sparkrig/*", Why: "launcher environment written by sparkrig fix (cluster.env)"},
	{Glob: "/usr/lib/*-linux-gnu/libnccl.so*", NameOnly: true, Why: "NCCL library and its versioned name"},
	{Glob: "/usr/local/lib/libnccl.so*", NameOnly: true, Why: "NCCL library built from source"},
	{Glob: "/usr/local/cuda*/lib*/libnccl.so*", NameOnly: true, Why: "NCCL library inside a CUDA toolkit tree"},
	{Glob: "/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so*", NameOnly: true, Why: "NCCL library of the pip wheel nvidia-nccl-cu1x"},
}

// envFilter keeps whole NAME=value lines of the settings sparkrig reads.
const envFilter = `^((NCCL|UCX|OMPI|OMPI_MCA|GLOO)_[A-Za-z0-9_]*|CUDA_VISIBLE_DEVICES)=`

// kernelLogFilter keeps the kernel-log lines the checks read.
const kernelLogFilter = `Linux version|NVRM: Xid|mlx5|nvidia-peermem|nvidia_peermem|AER:|pciehp|iommu: Default domain|arm-smmu-v3`

// Commands is every command the capture runs.
var Commands = []Command{
	{ID: "uname", Argv: []string{"uname", "-a"}, Why: "kernel and architecture"},
	{ID: "uname-m", Argv: []string{"uname", "-m"}, Why: "machine architecture (aarch64 on DGX Spark)"},
	{ID: "nvidia-smi-q", Argv: []string{"nvidia-smi", "-q", "-x"}, Timeout: 20 * time.Second,
		Why: "GPUs: driver, CUDA, persistence, MIG, ECC, remapped rows, throttle reasons, PCI"},
	{ID: "nvidia-smi-topo", Argv: []string{"nvidia-smi", "topo", "-m"}, Timeout: 20 * time.Second,
		Why: "GPU to NIC affinity matrix"},
	{ID: "ip-addr", Argv: []string{"ip", "-j", "addr", "show"}, Why: "addresses, with dynamic (DHCP) flags"},
	{ID: "ip-link", Argv: []string{"ip", "-j", "-d", "link", "show"}, Why: "links, MTU, state, link-local parents"},
	{ID: "ip-route", Argv: []string{"ip", "-j", "route", "show"}, Why: "routes (twins on one subnet share a route)"},
	{ID: "ip-neigh", Argv: []string{"ip", "-j", "neigh", "show"}, Why: "neighbours per interface: more than one MAC behind a data port means a switch"},
	{ID: "iptables", Argv: []string{"iptables", "-S"}, Why: "filter table: the FORWARD policy (Docker sets DROP) and DOCKER-USER rules; needs root"},
	{ID: "nft", Argv: []string{"nft", "-j", "list", "ruleset"}, Why: "nftables chains (iptables-nft's too) that may drop forwarded traffic, as JSON; needs root"},
	{ID: "lldp", Argv: []string{"lldpctl", "-f", "keyvalue"}, Why: "LLDP neighbours (lldpd): a switch names itself"},
	{ID: "rdma-link", Argv: []string{"rdma", "-j", "link", "show"}, Why: "RDMA device to netdev mapping (iproute2)"},
	{ID: "ibv-devinfo", Argv: []string{"ibv_devinfo", "-v"}, Timeout: 10 * time.Second,
		Why: "RDMA devices, ports, active MTU, firmware"},
	{ID: "ibdev2netdev", Argv: []string{"ibdev2netdev"}, Why: "RDMA device to netdev mapping (MLNX tools)"},
	{ID: "ethtool", Each: EachNetdev, Argv: []string{"ethtool", "{netdev}"}, Why: "speed, duplex, auto-negotiation"},
	{ID: "ethtool-fec", Each: EachNetdev, Argv: []string{"ethtool", "--show-fec", "{netdev}"}, Why: "forward error correction"},
	{ID: "ethtool-i", Each: EachNetdev, Argv: []string{"ethtool", "-i", "{netdev}"}, Why: "driver and NIC firmware"},
	{ID: "lspci-mellanox", Argv: []string{"lspci", "-D", "-vv", "-d", "15b3:"}, Timeout: 10 * time.Second,
		Why: "ConnectX functions: LnkCap/LnkSta (full capabilities need root)"},
	{ID: "lspci-nvidia", Argv: []string{"lspci", "-D", "-vv", "-d", "10de:"}, Timeout: 10 * time.Second,
		Why: "NVIDIA functions: LnkCap/LnkSta"},
	// "Linux version" (the first line of a boot's kernel log) is kept so an
	// empty result means an unreadable log, not a clean one.
	{ID: "dmesg", Argv: []string{"dmesg"}, Filter: kernelLogFilter, Tail: 400,
		Why: "kernel log: Xid events and mlx5 link messages (refused when dmesg_restrict=1 and unprivileged)"},
	{ID: "journal-kernel", Argv: []string{"journalctl", "-k", "-b", "--no-pager", "-q"}, Timeout: 10 * time.Second,
		Filter: kernelLogFilter, Tail: 400,
		Why: "kernel log of this boot through journald, when dmesg is refused"},
	{ID: "ldconfig", Argv: []string{"ldconfig", "-p"}, Filter: `libnccl|libcudart|libibverbs|libmlx5|libnvidia-ml`,
		Why: "which NCCL, CUDA runtime and verbs libraries the loader finds"},
	{ID: "nccl-build-id", Argv: []string{"sh", "-c", ncclBuildIDScript()}, Timeout: 10 * time.Second, Local: ncclBuildIDs,
		Why: "ELF build ID of every libnccl.so.2 (package, source build, CUDA tree, pip wheel): one version string can name different builds"},
	{ID: "dpkg-nccl", Argv: []string{"dpkg-query", "-W", "-f", `${Package} ${Version}\n`, "libnccl*"},
		Why: "NCCL package version"},
	// env -0 and tr put every variable on one line of its own (a value's
	// newlines become spaces), so no line of another variable's value can
	// pass the filter as if it were a setting.
	{ID: "env", Argv: []string{"sh", "-c", `env -0 | tr '\n\000' ' \n'`}, Filter: envFilter,
		Why: "NCCL_*, UCX_*, OMPI_* settings of the capturing environment"},
	{ID: "ssh-connection", Argv: []string{"printenv", "SSH_CONNECTION"},
		Why: "the address an SSH session arrives on, so fix never reconfigures that interface"},
}
