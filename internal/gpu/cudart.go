package gpu

import (
	"fmt"
	"unsafe"
)

// Memcpy kinds from cuda_runtime_api.h.
const (
	memcpyHostToDevice   = 1
	memcpyDeviceToHost   = 2
	memcpyDeviceToDevice = 3
)

// Device attributes from cudaDeviceAttr.
const (
	attrIntegrated   = 18
	attrCCMajor      = 75
	attrCCMinor      = 76
	attrMultiProcCnt = 16
)

const streamNonBlocking = 1

// CUDART is the part of the CUDA runtime API sparkrig uses.
type CUDART struct {
	Path string

	getDeviceCount       func(*int32) int32
	setDevice            func(int32) int32
	deviceSynchronize    func() int32
	malloc               func(*uintptr, uint64) int32
	free                 func(uintptr) int32
	mallocHost           func(*uintptr, uint64) int32
	freeHost             func(uintptr) int32
	memcpy               func(dst, src uintptr, n uint64, kind int32) int32
	memcpyAsync          func(dst, src uintptr, n uint64, kind int32, stream uintptr) int32
	memcpyPeerAsync      func(dst uintptr, dstDev int32, src uintptr, srcDev int32, n uint64, stream uintptr) int32
	memset               func(p uintptr, v int32, n uint64) int32
	streamCreate         func(*uintptr, uint32) int32
	streamSynchronize    func(uintptr) int32
	streamDestroy        func(uintptr) int32
	eventCreate          func(*uintptr) int32
	eventRecord          func(ev, stream uintptr) int32
	eventSynchronize     func(uintptr) int32
	eventElapsedTime     func(*float32, uintptr, uintptr) int32
	eventDestroy         func(uintptr) int32
	memGetInfo           func(free, total *uint64) int32
	runtimeGetVersion    func(*int32) int32
	driverGetVersion     func(*int32) int32
	getErrorString       func(int32) string
	deviceGetAttribute   func(*int32, int32, int32) int32
	deviceCanAccessPeer  func(*int32, int32, int32) int32
	deviceEnablePeerAccs func(int32, uint32) int32
	deviceGetPCIBusID    func(*byte, int32, int32) int32
}

// LoadCUDART loads the CUDA runtime from path.
func LoadCUDART(path string) (*CUDART, error) {
	c := &CUDART{Path: path}
	_, err := open(path, []binding{
		{"cudaGetDeviceCount", &c.getDeviceCount},
		{"cudaSetDevice", &c.setDevice},
		{"cudaDeviceSynchronize", &c.deviceSynchronize},
		{"cudaMalloc", &c.malloc},
		{"cudaFree", &c.free},
		{"cudaMallocHost", &c.mallocHost},
		{"cudaFreeHost", &c.freeHost},
		{"cudaMemcpy", &c.memcpy},
		{"cudaMemcpyAsync", &c.memcpyAsync},
		{"cudaMemcpyPeerAsync", &c.memcpyPeerAsync},
		{"cudaMemset", &c.memset},
		{"cudaStreamCreateWithFlags", &c.streamCreate},
		{"cudaStreamSynchronize", &c.streamSynchronize},
		{"cudaStreamDestroy", &c.streamDestroy},
		{"cudaEventCreate", &c.eventCreate},
		{"cudaEventRecord", &c.eventRecord},
		{"cudaEventSynchronize", &c.eventSynchronize},
		{"cudaEventElapsedTime", &c.eventElapsedTime},
		{"cudaEventDestroy", &c.eventDestroy},
		{"cudaMemGetInfo", &c.memGetInfo},
		{"cudaRuntimeGetVersion", &c.runtimeGetVersion},
		{"cudaDriverGetVersion", &c.driverGetVersion},
		{"cudaGetErrorString", &c.getErrorString},
		{"cudaDeviceGetAttribute", &c.deviceGetAttribute},
		{"cudaDeviceCanAccessPeer", &c.deviceCanAccessPeer},
		{"cudaDeviceEnablePeerAccess", &c.deviceEnablePeerAccs},
		{"cudaDeviceGetPCIBusId", &c.deviceGetPCIBusID},
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// check turns a cudaError_t into an error naming the call.
func (c *CUDART) check(what string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (cudaError %d)", what, c.getErrorString(rc), rc)
}

// DeviceCount returns the number of visible GPUs.
func (c *CUDART) DeviceCount() (int, error) {
	var n int32
	err := c.check("cudaGetDeviceCount", c.getDeviceCount(&n))
	return int(n), err
}

// SetDevice makes dev current on the calling OS thread (lock it first).
func (c *CUDART) SetDevice(dev int) error {
	return c.check("cudaSetDevice", c.setDevice(int32(dev)))
}

// Malloc allocates n bytes on the current device.
func (c *CUDART) Malloc(n uint64) (uintptr, error) {
	var p uintptr
	err := c.check(fmt.Sprintf("cudaMalloc(%d bytes)", n), c.malloc(&p, n))
	return p, err
}

// Free releases device memory.
func (c *CUDART) Free(p uintptr) {
	if p != 0 {
		c.free(p)
	}
}

// MallocHost allocates n bytes of pinned host memory.
func (c *CUDART) MallocHost(n uint64) (uintptr, error) {
	var p uintptr
	err := c.check(fmt.Sprintf("cudaMallocHost(%d bytes)", n), c.mallocHost(&p, n))
	return p, err
}

// FreeHost releases pinned host memory.
func (c *CUDART) FreeHost(p uintptr) {
	if p != 0 {
		c.freeHost(p)
	}
}

// CopyToDevice copies b to device memory at dst.
func (c *CUDART) CopyToDevice(dst uintptr, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return c.check("cudaMemcpy H2D", c.memcpy(dst, uintptr(unsafe.Pointer(&b[0])), uint64(len(b)), memcpyHostToDevice))
}

// CopyFromDevice copies device memory at src into b.
func (c *CUDART) CopyFromDevice(b []byte, src uintptr) error {
	if len(b) == 0 {
		return nil
	}
	return c.check("cudaMemcpy D2H", c.memcpy(uintptr(unsafe.Pointer(&b[0])), src, uint64(len(b)), memcpyDeviceToHost))
}

// Memset fills n bytes at p with v.
func (c *CUDART) Memset(p uintptr, v byte, n uint64) error {
	return c.check("cudaMemset", c.memset(p, int32(v), n))
}

// DeviceSync waits for all work on the current device.
func (c *CUDART) DeviceSync() error {
	return c.check("cudaDeviceSynchronize", c.deviceSynchronize())
}

// NewStream creates a non-blocking stream on the current device.
func (c *CUDART) NewStream() (uintptr, error) {
	var s uintptr
	err := c.check("cudaStreamCreateWithFlags", c.streamCreate(&s, streamNonBlocking))
	return s, err
}

// Sync waits for stream s.
func (c *CUDART) Sync(s uintptr) error {
	return c.check("cudaStreamSynchronize", c.streamSynchronize(s))
}

// MemInfo returns free and total memory of the current device.
func (c *CUDART) MemInfo() (free, total uint64, err error) {
	err = c.check("cudaMemGetInfo", c.memGetInfo(&free, &total))
	return free, total, err
}

// Attr returns a device attribute.
func (c *CUDART) Attr(dev, attr int) (int, error) {
	var v int32
	err := c.check("cudaDeviceGetAttribute", c.deviceGetAttribute(&v, int32(attr), int32(dev)))
	return int(v), err
}

// PCIBusID returns the device's PCI address, e.g. 0000:19:00.0.
func (c *CUDART) PCIBusID(dev int) (string, error) {
	var b [32]byte
	if err := c.check("cudaDeviceGetPCIBusId", c.deviceGetPCIBusID(&b[0], int32(len(b)), int32(dev))); err != nil {
		return "", err
	}
	return cString(b[:]), nil
}

// Versions returns the CUDA runtime and driver API versions (e.g. 13000).
func (c *CUDART) Versions() (rt, drv int) {
	var r, d int32
	c.runtimeGetVersion(&r)
	c.driverGetVersion(&d)
	return int(r), int(d)
}

// timer measures GPU time between two events on a stream.
type timer struct {
	c          *CUDART
	start, end uintptr
}

func (c *CUDART) newTimer() (*timer, error) {
	t := &timer{c: c}
	if err := c.check("cudaEventCreate", c.eventCreate(&t.start)); err != nil {
		return nil, err
	}
	if err := c.check("cudaEventCreate", c.eventCreate(&t.end)); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *timer) begin(stream uintptr) { t.c.eventRecord(t.start, stream) }
func (t *timer) stop(stream uintptr)  { t.c.eventRecord(t.end, stream) }

// seconds waits for the end event and returns the elapsed GPU time.
func (t *timer) seconds() (float64, error) {
	if err := t.c.check("cudaEventSynchronize", t.c.eventSynchronize(t.end)); err != nil {
		return 0, err
	}
	var ms float32
	err := t.c.check("cudaEventElapsedTime", t.c.eventElapsedTime(&ms, t.start, t.end))
	return float64(ms) / 1e3, err
}

func (t *timer) close() {
	t.c.eventDestroy(t.start)
	t.c.eventDestroy(t.end)
}
