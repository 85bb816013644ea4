package gpu

import (
	"fmt"
	"unsafe"
)

// cuBLAS and CUDA data-type constants from cublas_api.h and library_types.h.
const (
	cudaR16F           = 2
	cudaR16BF          = 14
	cublasCompute32F   = 68
	cublasGemmDefault  = -1
	cublasOpN          = 0
	libMajorVersion    = 0
	libMinorVersion    = 1
	libPatchLevel      = 2
	gemmWorkspaceBytes = 32 << 20 // what PyTorch gives cuBLAS on Hopper and later
)

// CUBLAS is the part of cuBLAS sparkrig uses.
type CUBLAS struct {
	Path string

	create       func(*uintptr) int32
	destroy      func(uintptr) int32
	setStream    func(uintptr, uintptr) int32
	setWorkspace func(uintptr, uintptr, uint64) int32
	getProperty  func(int32, *int32) int32
	gemmEx       func(h uintptr, ta, tb, m, n, k int32, alpha unsafe.Pointer, a uintptr, at, lda int32,
		b uintptr, bt, ldb int32, beta unsafe.Pointer, c uintptr, ct, ldc int32, compute, algo int32) int32
}

// LoadCUBLAS loads libcublas from path (it pulls in libcublasLt itself).
func LoadCUBLAS(path string) (*CUBLAS, error) {
	b := &CUBLAS{Path: path}
	_, err := open(path, []binding{
		{"cublasCreate_v2", &b.create},
		{"cublasDestroy_v2", &b.destroy},
		{"cublasSetStream_v2", &b.setStream},
		{"cublasSetWorkspace_v2", &b.setWorkspace},
		{"cublasGetProperty", &b.getProperty},
		{"cublasGemmEx", &b.gemmEx},
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func cublasCheck(what string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("%s: cublasStatus %d", what, rc)
}

// Version returns cuBLAS's version as x.y.z.
func (b *CUBLAS) Version() string {
	var maj, min, patch int32
	b.getProperty(libMajorVersion, &maj)
	b.getProperty(libMinorVersion, &min)
	b.getProperty(libPatchLevel, &patch)
	return fmt.Sprintf("%d.%d.%d", maj, min, patch)
}
