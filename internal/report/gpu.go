package report

// GPU is what `sparkrig bench gpu info|memory` found: the software stack and
// devices, and copy rates.
type GPU struct {
	Info   *GPUInfo  `json:"info,omitempty"`
	Copies []GPUCopy `json:"copies,omitempty"`
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
