package gpu

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Device describes one GPU as the runtime sees it.
type Device struct {
	Index        int    `json:"index"`
	Name         string `json:"name"`
	PCIBus       string `json:"pci_bus,omitempty"`
	Capability   string `json:"compute_capability"` // "9.0", "12.1"
	SMs          int    `json:"sms"`
	Integrated   bool   `json:"integrated"` // unified memory shared with the CPU (GB10)
	MemFreeBytes uint64 `json:"mem_free_bytes"`
	MemTotBytes  uint64 `json:"mem_total_bytes"`
}

// SMArch returns the architecture name PyTorch lists for it, e.g. "sm_121".
func (d Device) SMArch() string { return report.SMArch(d.Capability) }

// Info is the software stack and its devices.
type Info struct {
	Driver     string            `json:"driver,omitempty"`      // kernel module, e.g. 580.95.05
	DriverCUDA string            `json:"driver_cuda,omitempty"` // newest CUDA the driver supports
	Runtime    string            `json:"cuda_runtime,omitempty"`
	NCCL       string            `json:"nccl,omitempty"`
	CUBLAS     string            `json:"cublas,omitempty"`
	Libraries  map[string]string `json:"libraries"`
	Missing    map[string]string `json:"missing,omitempty"` // library → what was searched
	Devices    []Device          `json:"devices"`
}

// Info gathers versions, library paths and devices. Missing optional
// libraries are recorded, not fatal. driverVersion is the parsed
// /proc/driver/nvidia/version (the caller reads the file).
func (s *Stack) Info(driverVersion string) (Info, error) {
	defer lockThread()()
	rt, drv := s.RT.Versions()
	in := Info{Driver: driverVersion, DriverCUDA: FormatCUDAVersion(drv), Runtime: FormatCUDAVersion(rt),
		Libraries: map[string]string{"cuda": s.Driver.Path, "cudart": s.RT.Path}, Missing: map[string]string{}}
	if n, err := s.NCCL(); err == nil {
		_, in.NCCL = n.Version()
		in.Libraries["nccl"] = n.Path
	} else {
		in.Missing["nccl"] = err.Error()
	}
	if b, err := s.CUBLAS(); err == nil {
		in.CUBLAS = b.Version()
		in.Libraries["cublas"] = b.Path
	} else {
		in.Missing["cublas"] = err.Error()
	}
	n, err := s.RT.DeviceCount()
	if err != nil {
		return in, err
	}
	for i := 0; i < n; i++ {
		d, err := s.device(i)
		if err != nil {
			return in, err
		}
		in.Devices = append(in.Devices, d)
	}
	return in, nil
}

func (s *Stack) device(i int) (Device, error) {
	d := Device{Index: i, Name: s.Driver.DeviceName(i)}
	if err := s.RT.SetDevice(i); err != nil {
		return d, err
	}
	maj, _ := s.RT.Attr(i, attrCCMajor)
	min, _ := s.RT.Attr(i, attrCCMinor)
	d.Capability = fmt.Sprintf("%d.%d", maj, min)
	d.SMs, _ = s.RT.Attr(i, attrMultiProcCnt)
	integ, _ := s.RT.Attr(i, attrIntegrated)
	d.Integrated = integ == 1
	d.PCIBus, _ = s.RT.PCIBusID(i)
	var err error
	d.MemFreeBytes, d.MemTotBytes, err = s.RT.MemInfo()
	return d, err
}
