package gpu

import "github.com/sparkrig/sparkrig/internal/report"

// Report is the stack as the report model carries it; py, when given, is
// the Python environment and archVerdict what its kernels mean for GPU 0.
func (in Info) Report(py *PythonEnv, archVerdict string) *report.GPUInfo {
	out := &report.GPUInfo{Driver: in.Driver, DriverCUDA: in.DriverCUDA, Runtime: in.Runtime, NCCL: in.NCCL, CUBLAS: in.CUBLAS,
		Libraries: in.Libraries, Missing: in.Missing, Devices: []report.GPUDevice{}}
	for _, d := range in.Devices {
		out.Devices = append(out.Devices, report.GPUDevice{Index: d.Index, Name: d.Name, PCIBus: d.PCIBus, Capability: d.Capability,
			SMArch: d.SMArch(), SMs: d.SMs, Integrated: d.Integrated, MemFreeBytes: d.MemFreeBytes, MemTotalBytes: d.MemTotBytes,
			MemFree: report.HumanBytes(int64(d.MemFreeBytes)), MemTotal: report.HumanBytes(int64(d.MemTotBytes))})
	}
	if py != nil {
		out.Python = &report.PythonEnv{Python: py.Python, Error: py.Error, Torch: py.Torch, TorchCUDA: py.TorchCUDA, NCCL: py.NCCL,
			ArchList: py.ArchList, ArchVerdict: archVerdict}
	}
	return out
}

// CopyReport is a memory benchmark's results as the report model carries
// them; peak gives the memory peak of a source device, where it has one.
func CopyReport(res []CopyResult, peak func(src int) (report.Peak, bool)) []report.GPUCopy {
	out := []report.GPUCopy{}
	for _, r := range res {
		c := report.GPUCopy{Name: r.Name, Src: r.Src, Dst: r.Dst, Bytes: r.Bytes, Size: report.HumanBytes(r.Bytes), Iters: r.Iters, GBs: r.GBs, Method: r.Method}
		if r.Name == "d2d" && peak != nil {
			if p, ok := peak(r.Src); ok {
				c.Peak = &p
			}
		}
		out = append(out, c)
	}
	return out
}

// Report is the run as the report model carries it.
func (r GEMMResult) Report() report.GPUGEMM {
	return report.GPUGEMM{Tool: r.Tool, DType: r.DType, M: r.M, N: r.N, K: r.K, Iters: r.Iters, Seconds: r.Seconds, TFLOPS: r.TFLOPS, Best: r.Best}
}
