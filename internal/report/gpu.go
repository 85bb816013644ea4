package report

import "github.com/sparkrig/sparkrig/internal/results"

// GPU is what `sparkrig bench gpu` found: the software stack and devices
// (info), copy rates (memory), collective tables (collective) and GEMM
// throughput (gemm).
type GPU struct {
	Info        *GPUInfo            `json:"info,omitempty"`
	Copies      []GPUCopy           `json:"copies,omitempty"`
	Collectives []results.NCCLTable `json:"collectives,omitempty"`
	// GEMM is sparkrig's own run, then torch.matmul's when compared.
	GEMM []GPUGEMM `json:"gemm,omitempty"`
	// Validity says whether the GPU's state while collective or gemm ran
	// lets the result speak for the hardware.
	Validity *Validity `json:"validity,omitempty"`
}

// Validity is the state gate's answer for a result: clocks, power and RoCE
// MTU sampled while it ran, and the reasons it is not valid.
type Validity struct {
	Valid   bool     `json:"valid"`
	Sampled bool     `json:"sampled"` // false: the state could not be read
	Reasons []string `json:"reasons,omitempty"`
}

// GPUGEMM is one tool's GEMM run: sparkrig's cuBLAS, or torch.matmul.
type GPUGEMM struct {
	Tool    string  `json:"tool"`
	DType   string  `json:"dtype"`
	M       int     `json:"m"`
	N       int     `json:"n"`
	K       int     `json:"k"`
	Iters   int     `json:"iters"`
	Seconds float64 `json:"gpu_seconds"`
	TFLOPS  float64 `json:"tflops"`      // over the whole run
	Best    float64 `json:"best_tflops"` // best batch
}

// GPUInfo is the driver, CUDA runtime and libraries found, each device, and
// with a Python environment its torch build.
type GPUInfo struct {
	Driver     string            `json:"driver,omitempty"`
	DriverCUDA string            `json:"driver_cuda,omitempty"` // newest CUDA the driver supports
	Runtime    string            `json:"cuda_runtime,omitempty"`
	NCCL       string            `json:"nccl,omitempty"`
	CUBLAS     string            `json:"cublas,omitempty"`
	Libraries  map[string]string `json:"libraries"`
	Missing    map[string]string `json:"missing,omitempty"` // library → what was searched
	Devices    []GPUDevice       `json:"devices"`
	Python     *PythonEnv        `json:"python,omitempty"`
}

// GPUDevice is one GPU. Sizes are in bytes, with the short form the
// sweep flags take (1M, 256M, 8G).
type GPUDevice struct {
	Index         int    `json:"index"`
	Name          string `json:"name"`
	PCIBus        string `json:"pci_bus,omitempty"`
	Capability    string `json:"compute_capability"` // "9.0", "12.1"
	SMArch        string `json:"sm_arch"`            // "sm_121"
	SMs           int    `json:"sms"`
	Integrated    bool   `json:"integrated"` // unified memory shared with the CPU (GB10)
	MemFreeBytes  uint64 `json:"mem_free_bytes"`
	MemTotalBytes uint64 `json:"mem_total_bytes"`
	MemFree       string `json:"mem_free"`
	MemTotal      string `json:"mem_total"`
}

// PythonEnv is the PyTorch build of a Python environment; ArchVerdict says
// in words whether its kernels serve GPU 0.
type PythonEnv struct {
	Python      string   `json:"python"`
	Error       string   `json:"error,omitempty"`
	Torch       string   `json:"torch,omitempty"`
	TorchCUDA   string   `json:"torch_cuda,omitempty"`
	NCCL        string   `json:"nccl,omitempty"`
	ArchList    []string `json:"arch_list,omitempty"`
	ArchVerdict string   `json:"arch_verdict,omitempty"`
}

// GPUCopy is one copy test; Peak is the memory peak a device-to-device copy
// is compared with, where the platform has one.
type GPUCopy struct {
	Name   string  `json:"name"` // d2d, h2d, d2h, d2d_peer
	Src    int     `json:"src"`  // device, or -1 for the host
	Dst    int     `json:"dst"`
	Bytes  int64   `json:"bytes"`
	Size   string  `json:"size"` // Bytes as the flags take it
	Iters  int     `json:"iters"`
	GBs    float64 `json:"gbs"`
	Method string  `json:"method,omitempty"`
	Peak   *Peak   `json:"peak,omitempty"`
}

// Peak is a platform's rated figure, with its name and source.
type Peak struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source,omitempty"`
}
