package check

// Where expectations come from; a finding's Source names one of these.
const (
	srcSeed000     = "seed 000 (DGX Spark multi-node networking chapter)"
	srcSeed001     = "seed 001 (DGX Spark RoCE benchmarks)"
	srcSeed002     = "seed 002 (GPU system tuning: OS, CPU and network chapters)"
	srcSeed004     = "seed 004 (GPU cluster performance tuning)"
	srcPlaybook    = "NVIDIA dgx-spark-playbooks (connect-two-sparks, nccl)"
	srcCommunity   = "community reports on DGX Spark clusters (uncertain: a warning, not a failure)"
	srcNCCLDoc     = "NCCL documentation (environment variables)"
	srcNVIDIASMI   = "NVIDIA nvidia-smi and GPU deployment documentation"
	srcXIDDoc      = "NVIDIA Xid error documentation"
	srcRDMADoc     = "NVIDIA ConnectX / MLNX_OFED documentation"
	srcPCIeSysfs   = "PCIe link capability vs status (sysfs, lspci LnkCap/LnkSta)"
	srcSparkBIOS   = "community reports: DGX Spark BIOS before 2026-04 trains the second CX-7 function at x2"
	srcGPUDirectGB = "community reports, several projects: GPUDirect RDMA is unavailable on GB10"
)
