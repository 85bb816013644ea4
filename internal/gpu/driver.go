package gpu

import (
	"bytes"
	"fmt"
)

// Driver is the part of the CUDA driver API (libcuda) sparkrig uses: it is
// loaded first because its absence means there is no usable GPU at all.
type Driver struct {
	Path          string
	cuInit        func(uint32) int32
	cuDeviceGet   func(*int32, int32) int32
	cuDeviceName  func(*byte, int32, int32) int32
	cuDriverVersn func(*int32) int32
}

// LoadDriver loads libcuda from path and initialises it.
func LoadDriver(path string) (*Driver, error) {
	d := &Driver{Path: path}
	if _, err := open(path, []binding{
		{"cuInit", &d.cuInit},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceName},
		{"cuDriverGetVersion", &d.cuDriverVersn},
	}); err != nil {
		return nil, err
	}
	if rc := d.cuInit(0); rc != 0 {
		return nil, fmt.Errorf("cuInit: CUresult %d (is the NVIDIA kernel module loaded and a GPU visible?)", rc)
	}
	return d, nil
}

// DeviceName returns the marketing name of device ordinal dev.
func (d *Driver) DeviceName(dev int) string {
	var h int32
	if d.cuDeviceGet(&h, int32(dev)) != 0 {
		return ""
	}
	var b [256]byte
	if d.cuDeviceName(&b[0], int32(len(b)), h) != 0 {
		return ""
	}
	return cString(b[:])
}

// cString returns the bytes of b up to the first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// FormatCUDAVersion turns 13000 into "13.0".
func FormatCUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
