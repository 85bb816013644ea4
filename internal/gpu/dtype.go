package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is an element type as NCCL, cuBLAS and nccl-tests name it.
type DType struct {
	Name string // nccl-tests' name: float, half, bfloat16
	Size int64
	nccl int32
	cuda int32 // cudaDataType
}

// Element types sparkrig benchmarks with.
var (
	Float32  = DType{Name: "float", Size: 4, nccl: ncclFloat32, cuda: 0}
	Float16  = DType{Name: "half", Size: 2, nccl: ncclFloat16, cuda: cudaR16F}
	BFloat16 = DType{Name: "bfloat16", Size: 2, nccl: ncclBfloat16, cuda: cudaR16BF}
)

// ParseDType accepts the usual spellings: float/fp32, half/fp16, bfloat16/bf16.
func ParseDType(s string) (DType, error) {
	switch s {
	case "float", "float32", "fp32":
		return Float32, nil
	case "half", "float16", "fp16":
		return Float16, nil
	case "bfloat16", "bf16":
		return BFloat16, nil
	}
	return DType{}, fmt.Errorf("unknown data type %q (want float, half or bfloat16)", s)
}

// put stores v at element i of b.
func (d DType) put(b []byte, i int64, v float32) {
	switch d.Size {
	case 4:
		binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(v))
	default:
		binary.LittleEndian.PutUint16(b[i*2:], d.to16(v))
	}
}

// get reads element i of b.
func (d DType) get(b []byte, i int64) float32 {
	if d.Size == 4 {
		return math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
	return d.from16(binary.LittleEndian.Uint16(b[i*2:]))
}

func (d DType) to16(v float32) uint16 {
	if d.nccl == ncclBfloat16 {
		bits := math.Float32bits(v)
		return uint16((bits + 0x7fff + (bits >> 16 & 1)) >> 16) // round to nearest even
	}
	return float32ToHalf(v)
}

func (d DType) from16(h uint16) float32 {
	if d.nccl == ncclBfloat16 {
		return math.Float32frombits(uint32(h) << 16)
	}
	return halfToFloat32(h)
}

// float32ToHalf converts normal values in half's range (the check patterns);
// others saturate to ±Inf or flush to zero.
func float32ToHalf(v float32) uint16 {
	bits := math.Float32bits(v)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		return sign
	}
	h := uint32(exp)<<10 | mant>>13
	if mant&0x1fff > 0x1000 || (mant&0x1fff == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		return float32(math.Copysign(float64(mant)/(1<<24), float64(int32(sign)|1)))
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
