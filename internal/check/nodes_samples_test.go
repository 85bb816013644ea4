package check

// Content of the generated DGX Spark trees. Where a real sample exists it is
// used verbatim; the rest is written to match it. testdata/nodes/README.md
// lists which is which.

// osRelease2404 is Ubuntu 24.04's /etc/os-release as shipped by the base-files package.
const osRelease2404 = `PRETTY_NAME="Ubuntu 24.04.3 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.3 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
`

// dgxRelease carries DGX_NAME="DGX Spark" as the platform notes give it; the
// other keys follow the DGX OS release-file layout.
const dgxRelease = `DGX_NAME="DGX Spark"
DGX_PRETTY_NAME="NVIDIA DGX Spark"
DGX_SWBUILD_DATE="2025-09-10-13-50-03"
DGX_SWBUILD_VERSION="7.2.3"
DGX_COMMIT_ID="833b4a7"
DGX_PLATFORM="DGX Server for KVM"
DGX_SERIAL_NUMBER="Not Specified"
`

// meminfoSpark is a 128 GB unified-memory node; CmaTotal/CmaFree are set per case.
const meminfoSpark = `MemTotal:       125535996 kB
MemFree:        117436248 kB
MemAvailable:   120106532 kB
Buffers:           69848 kB
Cached:          3215596 kB
SwapCached:            0 kB
Active:          3262356 kB
Inactive:        1618992 kB
SwapTotal:             0 kB
SwapFree:              0 kB
Dirty:                 4 kB
AnonPages:       1640124 kB
Mapped:           869400 kB
Shmem:            122432 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
CmaTotal:          %d kB
CmaFree:           %d kB
`

const modulesSpark = `nvidia_uvm 2125824 0 - Live 0x0000000000000000 (OE)
nvidia_drm 135168 2 - Live 0x0000000000000000 (OE)
nvidia_modeset 1720320 1 nvidia_drm, Live 0x0000000000000000 (OE)
nvidia 14225408 17 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (OE)
mlx5_ib 471040 0 - Live 0x0000000000000000
ib_uverbs 192512 1 mlx5_ib, Live 0x0000000000000000
ib_core 471040 2 mlx5_ib,ib_uverbs, Live 0x0000000000000000
mlx5_core 2412544 1 mlx5_ib, Live 0x0000000000000000
r8127 159744 0 - Live 0x0000000000000000 (OE)
`

const limitsUnlimited = `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max file size             unlimited            unlimited            bytes     
Max data size             unlimited            unlimited            bytes     
Max stack size            8388608              unlimited            bytes     
Max core file size        0                    unlimited            bytes     
Max resident set          unlimited            unlimited            bytes     
Max processes             490083               490083               processes 
Max open files            1048576              1048576              files     
Max locked memory         unlimited            unlimited            bytes     
Max address space         unlimited            unlimited            bytes     
Max file locks            unlimited            unlimited            locks     
Max pending signals       490083               490083               signals   
Max msgqueue size         819200               819200               bytes     
Max nice priority         0                    0                    
Max realtime priority     0                    0                    
Max realtime timeout      unlimited            unlimited            us        
`

// nvidiaSMIGB10 follows the nvidia-smi -q -x schema with the values of the
// real GB10 table in fixture nvidia-smi/02 (driver 580.95.05, CUDA 13.0,
// persistence on, bus 0000000F:01:00.0, memory "Not Supported", MIG N/A).
const nvidiaSMIGB10 = `<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Sat Dec  6 13:53:03 2025</timestamp>
	<driver_version>580.95.05</driver_version>
	<cuda_version>13.0</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="0000000F:01:00.0">
		<product_name>NVIDIA GB10</product_name>
		<product_brand>NVIDIA</product_brand>
		<product_architecture>Blackwell</product_architecture>
		<display_mode>Disabled</display_mode>
		<display_active>Disabled</display_active>
		<persistence_mode>Enabled</persistence_mode>
		<mig_mode>
			<current_mig>N/A</current_mig>
			<pending_mig>N/A</pending_mig>
		</mig_mode>
		<uuid>GPU-6a6c1e9e-04c5-8a3b-2f5e-5b2a61d0c7f1</uuid>
		<minor_number>0</minor_number>
		<pci>
			<pci_bus>01</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>000F</pci_domain>
			<pci_bus_id>0000000F:01:00.0</pci_bus_id>
		</pci>
		<performance_state>P0</performance_state>
		<clocks_event_reasons>
			<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>
			<clocks_event_reason_applications_clocks_setting>Not Active</clocks_event_reason_applications_clocks_setting>
			<clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>
			<clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>
			<clocks_event_reason_hw_thermal_slowdown>Not Active</clocks_event_reason_hw_thermal_slowdown>
			<clocks_event_reason_hw_power_brake_slowdown>Not Active</clocks_event_reason_hw_power_brake_slowdown>
			<clocks_event_reason_sync_boost>Not Active</clocks_event_reason_sync_boost>
			<clocks_event_reason_sw_thermal_slowdown>Not Active</clocks_event_reason_sw_thermal_slowdown>
			<clocks_event_reason_display_clocks_setting>Not Active</clocks_event_reason_display_clocks_setting>
		</clocks_event_reasons>
		<fb_memory_usage>
			<total>N/A</total>
			<reserved>N/A</reserved>
			<used>N/A</used>
			<free>N/A</free>
		</fb_memory_usage>
		<ecc_mode>
			<current_ecc>N/A</current_ecc>
			<pending_ecc>N/A</pending_ecc>
		</ecc_mode>
		<remapped_rows>N/A</remapped_rows>
		<processes>
		</processes>
	</gpu>
</nvidia_smi_log>
`

// lspciSparkCX7 is verbatim from fixture pci/01 (the four ConnectX-7 lines of
// `lspci | grep -iE 'mellanox|connectx|ethernet'` on a DGX Spark).
const lspciSparkCX7 = `0000:01:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
0000:01:00.1 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
0002:01:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
0002:01:00.1 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
`

// dmesgSpark holds the mlx5 line of fixture proc/03 that survives the
// capture's kernel-log filter, verbatim.
const dmesgSpark = `<6>[   14.952018] mlx5_core 0000:41:00.0 enp65s0f0np0: Link up
`

// dmesgCablePlugged is the cable hot-plug line of fixture proc/04 (NVIDIA
// daqiri docs, an IGX Orin's ConnectX-7), verbatim.
const dmesgCablePlugged = `[ 3712.267103] mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged
`

// dmesgFlaps is derived: the mlx5_core link lines of fixtures proc/03 and
// proc/04 in their own format, for spark1's enp1s0f1np1 going down and up
// three times (no recording of a flapping Spark port is at hand).
const dmesgFlaps = `[ 5120.118230] mlx5_core 0000:01:00.1 enp1s0f1np1: Link down
[ 5121.904512] mlx5_core 0000:01:00.1 enp1s0f1np1: Link up
[ 5302.551078] mlx5_core 0000:01:00.1 enp1s0f1np1: Link down
[ 5303.910244] mlx5_core 0000:01:00.1 enp1s0f1np1: Link up
[ 5877.003611] mlx5_core 0000:01:00.1 enp1s0f1np1: Link down
[ 5878.771930] mlx5_core 0000:01:00.1 enp1s0f1np1: Link up
`

// ncclBuildsAptAndPip is the capture's nccl-build-id output for a node
// with DGX OS's libnccl2 and a pip wheel nvidia-nccl-cu13. Stand-in: the
// build IDs are the 8-digit prefixes vllm-project/vllm #41725 quotes for
// the apt (c0db9360) and pip (a7f420a1) builds of 2.28.9, in readelf -n's
// line format; the paths are those the same thread names.
const ncclBuildsAptAndPip = `== /usr/lib/aarch64-linux-gnu/libnccl.so.2	/usr/lib/aarch64-linux-gnu/libnccl.so.2.29.7
    Build ID: c0db9360
== /usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2	/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2
    Build ID: a7f420a1
`
