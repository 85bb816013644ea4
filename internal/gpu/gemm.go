package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
	"unsafe"
)

// GEMMOptions is one GEMM burn-in: C = A·B with A m×k, B k×n, for a fixed time.
type GEMMOptions struct {
	DType    DType
	M, N, K  int
	Duration time.Duration
	Device   int
}

// FLOPs is the work of one GEMM (a multiply and an add per term).
func (o GEMMOptions) FLOPs() float64 { return 2 * float64(o.M) * float64(o.N) * float64(o.K) }

// Bytes is the device memory the three matrices take.
func (o GEMMOptions) Bytes() uint64 {
	return uint64(o.M*o.K+o.K*o.N+o.M*o.N)*uint64(o.DType.Size) + gemmWorkspaceBytes
}

// GEMMResult is the burn-in's outcome.
type GEMMResult struct {
	Tool    string  `json:"tool"` // "sparkrig (cuBLAS x.y.z)" or "torch x.y"
	DType   string  `json:"dtype"`
	M       int     `json:"m"`
	N       int     `json:"n"`
	K       int     `json:"k"`
	Iters   int     `json:"iters"`
	Seconds float64 `json:"gpu_seconds"`
	TFLOPS  float64 `json:"tflops"`      // over the whole run
	Best    float64 `json:"best_tflops"` // best batch
}

// RunGEMM runs cublasGemmEx (FP32 accumulate, like torch.matmul) back to back
// for o.Duration after a warm-up, timing batches with CUDA events; tick gets
// each batch's TFLOP/s.
func (s *Stack) RunGEMM(ctx context.Context, o GEMMOptions, tick func(tflops float64, elapsed time.Duration)) (GEMMResult, error) {
	defer lockThread()()
	res := GEMMResult{DType: o.DType.Name, M: o.M, N: o.N, K: o.K}
	b, err := s.CUBLAS()
	if err != nil {
		return res, err
	}
	res.Tool = "sparkrig (cuBLAS " + b.Version() + ")"
	rt := s.RT
	if err := rt.SetDevice(o.Device); err != nil {
		return res, err
	}
	g, err := newGEMM(rt, b, o)
	if err != nil {
		return res, err
	}
	defer g.close()
	tm, err := rt.newTimer()
	if err != nil {
		return res, err
	}
	defer tm.close()
	batch := 1
	for range 3 { // warm-up, and size a batch to about 100 ms
		sec, err := g.batch(tm, batch)
		if err != nil {
			return res, err
		}
		if sec > 0 {
			batch = max(1, int(0.1/(sec/float64(batch))))
		}
	}
	start := time.Now()
	for time.Since(start) < o.Duration && ctx.Err() == nil {
		sec, err := g.batch(tm, batch)
		if err != nil {
			return res, err
		}
		tf := o.FLOPs() * float64(batch) / sec / 1e12
		res.Iters += batch
		res.Seconds += sec
		res.Best = max(res.Best, tf)
		if tick != nil {
			tick(tf, time.Since(start))
		}
	}
	if res.Seconds > 0 {
		res.TFLOPS = o.FLOPs() * float64(res.Iters) / res.Seconds / 1e12
	}
	return res, ctx.Err()
}

type gemm struct {
	rt             *CUDART
	b              *CUBLAS
	o              GEMMOptions
	h, stream      uintptr
	a, bm, c, work uintptr
	alpha, beta    float32
}

func newGEMM(rt *CUDART, b *CUBLAS, o GEMMOptions) (*gemm, error) {
	g := &gemm{rt: rt, b: b, o: o, alpha: 1}
	var err error
	if g.stream, err = rt.NewStream(); err != nil {
		return nil, err
	}
	if err := cublasCheck("cublasCreate", b.create(&g.h)); err != nil {
		return nil, err
	}
	b.setStream(g.h, g.stream)
	sz := o.DType.Size
	for _, m := range []struct {
		p     *uintptr
		elems int
		fill  bool
	}{{&g.a, o.M * o.K, true}, {&g.bm, o.K * o.N, true}, {&g.c, o.M * o.N, false}} {
		if *m.p, err = rt.Malloc(uint64(m.elems) * uint64(sz)); err != nil {
			g.close()
			return nil, err
		}
		if err := g.fill(*m.p, m.elems, m.fill); err != nil {
			g.close()
			return nil, err
		}
	}
	if g.work, err = rt.Malloc(gemmWorkspaceBytes); err != nil {
		g.close()
		return nil, err
	}
	return g, cublasCheck("cublasSetWorkspace", b.setWorkspace(g.h, g.work, gemmWorkspaceBytes))
}

// fill writes uniform values in [-1, 1) (or zeros): real data, as the torch
// comparison uses, keeps the tensor cores' power draw honest.
func (g *gemm) fill(p uintptr, elems int, random bool) error {
	if !random {
		return g.rt.Memset(p, 0, uint64(elems)*uint64(g.o.DType.Size))
	}
	host := make([]byte, int64(elems)*g.o.DType.Size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range int64(elems) {
		g.o.DType.put(host, i, r.Float32()*2-1)
	}
	return g.rt.CopyToDevice(p, host)
}

func (g *gemm) batch(tm *timer, n int) (float64, error) {
	o, dt := g.o, g.o.DType.cuda
	tm.begin(g.stream)
	for range n {
		rc := g.b.gemmEx(g.h, cublasOpN, cublasOpN, int32(o.M), int32(o.N), int32(o.K),
			unsafe.Pointer(&g.alpha), g.a, dt, int32(o.M), g.bm, dt, int32(o.K),
			unsafe.Pointer(&g.beta), g.c, dt, int32(o.M), cublasCompute32F, cublasGemmDefault)
		if err := cublasCheck("cublasGemmEx", rc); err != nil {
			return 0, err
		}
	}
	tm.stop(g.stream)
	return tm.seconds()
}

func (g *gemm) close() {
	if g.h != 0 {
		g.b.destroy(g.h)
	}
	for _, p := range []uintptr{g.a, g.bm, g.c, g.work} {
		g.rt.Free(p)
	}
}

// ValidateGEMM checks the shape.
func (o GEMMOptions) Validate() error {
	if o.M <= 0 || o.N <= 0 || o.K <= 0 {
		return fmt.Errorf("gemm shape %dx%dx%d: every dimension must be positive", o.M, o.N, o.K)
	}
	if o.DType.Size != 2 {
		return fmt.Errorf("gemm data type %s: want bf16 or fp16", o.DType.Name)
	}
	if o.Duration <= 0 {
		return fmt.Errorf("duration %v: must be positive", o.Duration)
	}
	return nil
}
