package gpu

import (
	"context"
	"fmt"
)

// CopyResult is one memory-copy measurement, reported like nvbandwidth:
// bytes copied per second (a device-local copy moves twice that through DRAM).
type CopyResult struct {
	Name   string  `json:"name"` // d2d, h2d, d2h, d2d_peer
	Src    int     `json:"src"`  // device, or -1 for host
	Dst    int     `json:"dst"`
	Bytes  int64   `json:"bytes"`
	Iters  int     `json:"iters"`
	GBs    float64 `json:"gbs"`
	Method string  `json:"method"`
}

// MemoryOptions is one memory benchmark.
type MemoryOptions struct {
	Bytes   int64
	Iters   int
	Devices []int
	Tests   []string // d2d, h2d, d2h, peer
}

// RunMemory measures the copies in o.Tests with cudaMemcpyAsync on one
// stream, timed by CUDA events after one untimed copy.
func (s *Stack) RunMemory(ctx context.Context, o MemoryOptions) ([]CopyResult, error) {
	defer lockThread()()
	var out []CopyResult
	for _, test := range o.Tests {
		for _, d := range o.Devices {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			var r []CopyResult
			var err error
			switch test {
			case "d2d", "h2d", "d2h":
				var one CopyResult
				one, err = s.copyBench(test, d, o)
				r = []CopyResult{one}
			case "peer":
				r, err = s.peerBench(d, o)
			default:
				err = fmt.Errorf("unknown memory test %q (want d2d, h2d, d2h or peer)", test)
			}
			if err != nil {
				return out, err
			}
			out = append(out, r...)
		}
	}
	return out, nil
}

func (s *Stack) copyBench(test string, dev int, o MemoryOptions) (CopyResult, error) {
	rt := s.RT
	res := CopyResult{Name: test, Src: dev, Dst: dev, Bytes: o.Bytes, Iters: o.Iters, Method: "cudaMemcpyAsync"}
	if err := rt.SetDevice(dev); err != nil {
		return res, err
	}
	n := uint64(o.Bytes)
	a, err := rt.Malloc(n)
	if err != nil {
		return res, err
	}
	defer rt.Free(a)
	var b uintptr
	kind := int32(memcpyDeviceToDevice)
	switch test {
	case "d2d":
		b, err = rt.Malloc(n)
		defer rt.Free(b)
	default:
		b, err = rt.MallocHost(n)
		defer rt.FreeHost(b)
	}
	if err != nil {
		return res, err
	}
	dst, src := a, b
	switch test {
	case "h2d":
		kind, res.Src = memcpyHostToDevice, -1
	case "d2h":
		kind, dst, src, res.Dst = memcpyDeviceToHost, b, a, -1
	}
	sec, err := s.timeCopies(o.Iters, func(stream uintptr) int32 { return rt.memcpyAsync(dst, src, n, kind, stream) })
	res.GBs = float64(o.Bytes) * float64(o.Iters) / sec / 1e9
	return res, err
}

// peerBench copies from dev to every other device over NVLink or PCIe.
func (s *Stack) peerBench(dev int, o MemoryOptions) ([]CopyResult, error) {
	rt := s.RT
	var out []CopyResult
	n := uint64(o.Bytes)
	for _, peer := range o.Devices {
		if peer == dev {
			continue
		}
		if err := rt.SetDevice(peer); err != nil {
			return out, err
		}
		dst, err := rt.Malloc(n)
		if err != nil {
			return out, err
		}
		if err := rt.SetDevice(dev); err != nil {
			return out, err
		}
		rt.deviceEnablePeerAccs(int32(peer), 0) // already enabled is fine
		src, err := rt.Malloc(n)
		if err != nil {
			rt.Free(dst)
			return out, err
		}
		sec, err := s.timeCopies(o.Iters, func(stream uintptr) int32 {
			return rt.memcpyPeerAsync(dst, int32(peer), src, int32(dev), n, stream)
		})
		rt.Free(src)
		rt.SetDevice(peer)
		rt.Free(dst)
		rt.SetDevice(dev)
		if err != nil {
			return out, err
		}
		out = append(out, CopyResult{Name: "d2d_peer", Src: dev, Dst: peer, Bytes: o.Bytes, Iters: o.Iters,
			GBs: float64(o.Bytes) * float64(o.Iters) / sec / 1e9, Method: "cudaMemcpyPeerAsync"})
	}
	return out, nil
}

// timeCopies runs copy once untimed, then iters times between two events.
func (s *Stack) timeCopies(iters int, copy func(stream uintptr) int32) (float64, error) {
	rt := s.RT
	stream, err := rt.NewStream()
	if err != nil {
		return 0, err
	}
	defer rt.streamDestroy(stream)
	tm, err := rt.newTimer()
	if err != nil {
		return 0, err
	}
	defer tm.close()
	if err := rt.check("cudaMemcpyAsync", copy(stream)); err != nil {
		return 0, err
	}
	tm.begin(stream)
	for range iters {
		if err := rt.check("cudaMemcpyAsync", copy(stream)); err != nil {
			return 0, err
		}
	}
	tm.stop(stream)
	return tm.seconds()
}
