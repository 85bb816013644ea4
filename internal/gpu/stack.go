package gpu

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrNoDriver means libcuda could not be found or initialised: no GPU here.
var ErrNoDriver = errors.New("no CUDA driver found")

// Stack is the set of loaded libraries. Only the driver and the runtime are
// required; NCCL and cuBLAS are loaded on demand by the benchmarks that need them.
type Stack struct {
	Search SearchInput
	Driver *Driver
	RT     *CUDART
	nccl   *NCCL
	cublas *CUBLAS
}

// Open loads libcuda and the CUDA runtime found by in.
func Open(in SearchInput) (*Stack, error) {
	p, err := in.Find(LibCUDA)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoDriver, err)
	}
	drv, err := LoadDriver(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	p, err = in.Find(LibCUDART)
	if err != nil {
		return nil, err
	}
	rt, err := LoadCUDART(p)
	if err != nil {
		return nil, err
	}
	return &Stack{Search: in, Driver: drv, RT: rt}, nil
}

// NCCL loads libnccl on first use.
func (s *Stack) NCCL() (*NCCL, error) {
	if s.nccl != nil {
		return s.nccl, nil
	}
	p, err := s.Search.Find(LibNCCL)
	if err != nil {
		return nil, err
	}
	s.nccl, err = LoadNCCL(p)
	return s.nccl, err
}

// CUBLAS loads libcublas on first use. libcublasLt is loaded first from the
// same search so that libcublas does not pick up a mismatched one.
func (s *Stack) CUBLAS() (*CUBLAS, error) {
	if s.cublas != nil {
		return s.cublas, nil
	}
	if lt, err := s.Search.Find(LibCUBLASLt); err == nil {
		if _, err := open(lt, nil); err != nil {
			return nil, err
		}
	}
	p, err := s.Search.Find(LibCUBLAS)
	if err != nil {
		return nil, err
	}
	s.cublas, err = LoadCUBLAS(p)
	return s.cublas, err
}

// lockThread pins the calling goroutine to its OS thread: the CUDA runtime's
// current device is per thread. The returned function undoes it.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
