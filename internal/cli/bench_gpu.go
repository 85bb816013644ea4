package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// gpuOptions are the flags every bench gpu subcommand shares.
type gpuOptions struct {
	python  string
	libDirs []string
	format  string
	memFrac float64
}

func (o *gpuOptions) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&o.python, "python", "", "a Python interpreter (e.g. .venv/bin/python): search its nvidia-* wheels and compare with its PyTorch")
	f.StringSliceVar(&o.libDirs, "lib-dir", nil, "directories searched first for libcuda, libcudart, libnccl, libcublas")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.Float64Var(&o.memFrac, "mem-fraction", 0.5, "most of the free GPU memory (MemAvailable on unified memory) a benchmark may use")
}

func (o *gpuOptions) validate(name string) error {
	if _, err := checkFormat(name, o.format, render.TextAndJSON); err != nil {
		return err
	}
	if o.memFrac <= 0 || o.memFrac > 0.9 {
		return exitf(ExitUnknown, "%s: --mem-fraction %g: want more than 0 and at most 0.9", name, o.memFrac)
	}
	return nil
}

// newBenchGPUCmd is `sparkrig bench gpu`.
func newBenchGPUCmd(env *Env) *cobra.Command {
	o := &gpuOptions{}
	cmd := &cobra.Command{
		Use:   "gpu",
		Short: "GPU benchmarks through the node's own CUDA, NCCL and cuBLAS libraries (nothing to build)",
		Long: `Measure NCCL collectives, memory copies and GEMM throughput with the libraries
already on this node (libcuda, libcudart, libnccl, libcublas), loaded at run time.

Libraries are searched in --lib-dir, LD_LIBRARY_PATH, CUDA_HOME, the nvidia-*
wheels of --python's environment, the ld.so cache and the standard directories.`,
	}
	o.addFlags(cmd)
	cmd.AddCommand(newGPUInfoCmd(env, o), newGPUCollectiveCmd(env, o), newGPUMemoryCmd(env, o), newGPUGEMMCmd(env, o))
	return cmd
}

// bench is bench.GPUOptions from the shared flags, its text going to
// stdout as it is measured when the format is text.
func (o *gpuOptions) bench(env *Env) bench.GPUOptions {
	g := bench.GPUOptions{Python: o.python, LibDirs: o.libDirs, MemFraction: o.memFrac, Getenv: env.Getenv,
		TTY: env.StdoutTTY, ToolVersion: Version, Now: env.Now}
	if o.format == "text" {
		g.Text = env.Stdout
	}
	return g
}

func newGPUInfoCmd(env *Env, o *gpuOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "driver, CUDA runtime, NCCL and cuBLAS versions, devices; with --python the PyTorch stack",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate("bench gpu info"); err != nil {
				return err
			}
			r, err := bench.GPUInfo(cmd.Context(), o.bench(env))
			if err != nil {
				return exitf(ExitUnknown, "bench gpu info: %v", err)
			}
			return writeDocument(env, r, o.format)
		},
	}
}

// collectiveOptions are the flags of bench gpu collective.
type collectiveOptions struct {
	ops                                                      []string
	minB, maxB, dtype, devices, checkB, rendezvous, jsonFile string
	factor                                                   int64
	iters, warmup, rank, nranks, device                      int
}

func newGPUCollectiveCmd(env *Env, g *gpuOptions) *cobra.Command {
	o := &collectiveOptions{}
	cmd := &cobra.Command{
		Use:   "collective",
		Short: "NCCL collectives over a size sweep, reported like nccl-tests (time, algbw, busbw, #wrong)",
		Long: `Run NCCL collectives over a size sweep and print nccl-tests' table.

One process drives every selected GPU (ncclCommInitAll). For one process per
GPU or per node, start one sparkrig per rank with --nranks, --rank and
--rendezvous HOST:PORT: rank 0 listens there and hands NCCL's unique id to the
others; no MPI is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCollective(cmd.Context(), env, g, o)
		},
	}
	f := cmd.Flags()
	choicesVar(f, &o.ops, "op", []string{"all_reduce"}, gpu.Collectives, results.CanonicalCollective, "collectives, comma-separated: "+strings.Join(gpu.Collectives, ", "))
	f.StringVarP(&o.minB, "minbytes", "b", "1M", "smallest message size")
	f.StringVarP(&o.maxB, "maxbytes", "e", "1G", "largest message size")
	f.Int64VarP(&o.factor, "stepfactor", "f", 2, "size multiplier between steps")
	f.IntVarP(&o.iters, "iters", "n", 20, "timed iterations per size")
	f.IntVarP(&o.warmup, "warmup", "w", 5, "untimed iterations before each size")
	f.StringVarP(&o.dtype, "dtype", "d", "float", "element type: float (fp32), half (fp16) or bfloat16 (bf16)")
	f.StringVar(&o.dtype, "datatype", "float", "the earlier name of --dtype")
	f.MarkHidden("datatype")
	f.StringVar(&o.checkB, "check-max", "64M", "verify results (the #wrong column) for sizes up to this; 0 turns it off")
	f.StringVar(&o.devices, "devices", "all", "GPUs for a single-process run, e.g. 0,1")
	f.IntVar(&o.nranks, "nranks", 0, "ranks in a multi-process run (one GPU per process)")
	f.IntVar(&o.rank, "rank", 0, "this process's rank in a multi-process run")
	f.IntVar(&o.device, "device", -1, "GPU of this rank in a multi-process run; -1 takes the rank modulo the GPU count")
	f.StringVar(&o.rendezvous, "rendezvous", "", "rank 0's HOST:PORT for a multi-process run")
	f.StringVar(&o.jsonFile, "json-file", "", "also write the tables to this file, as a JSON array (analyze and plan --from read it)")
	return cmd
}

func (o *collectiveOptions) options() (gpu.CollectiveOptions, error) {
	co := gpu.CollectiveOptions{Factor: o.factor, Iters: o.iters, Warmup: o.warmup}
	var err error
	co.Ops = o.ops
	if co.MinBytes, err = results.ParseSize(o.minB); err != nil {
		return co, err
	}
	if co.MaxBytes, err = results.ParseSize(o.maxB); err != nil {
		return co, err
	}
	if co.CheckBytes, err = results.ParseSize(o.checkB); err != nil {
		return co, err
	}
	if co.DType, err = gpu.ParseDType(o.dtype); err != nil {
		return co, err
	}
	if o.nranks != 0 && (o.nranks < 2 || o.rank < 0 || o.rank >= o.nranks || o.rendezvous == "") {
		return co, fmt.Errorf("multi-process run: need --nranks >= 2, 0 <= --rank < --nranks and --rendezvous HOST:PORT")
	}
	return co, co.Validate()
}

func runCollective(ctx context.Context, env *Env, g *gpuOptions, o *collectiveOptions) error {
	const name = "bench gpu collective"
	co, err := o.options()
	if err != nil {
		return exitf(ExitUnknown, "%s: %v", name, err)
	}
	if err := g.validate(name); err != nil {
		return err
	}
	bo := bench.CollectiveOptions{GPUOptions: g.bench(env), Sweep: co, Devices: o.devices, NRanks: o.nranks, Rank: o.rank,
		Device: o.device, Rendezvous: o.rendezvous, JSONFile: o.jsonFile}
	r, err := bench.RunCollective(ctx, bo)
	if r == nil {
		return exitf(ExitUnknown, "%s: %v", name, err)
	}
	if g.format == "json" && !bo.Quiet() {
		if err != nil {
			r.Status, r.Error = report.VerdictUnknown, name+": "+err.Error()
		}
		if werr := writeDocument(env, r, "json"); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return exitf(ExitUnknown, "%s: %v", name, err)
	}
	for _, t := range r.GPU.Collectives {
		if t.WrongResults > 0 {
			return exitf(ExitCritical, "%s: %d wrong values in the result check", t.Collective, t.WrongResults)
		}
	}
	if g.format == "text" && !bo.Quiet() { // the tables went out as they ran; then the state
		state := newDocument(env, name)
		state.GPU = &report.GPU{Validity: r.GPU.Validity}
		if err := writeDocument(env, state, "text"); err != nil {
			return err
		}
	}
	return gateExit(name, r)
}

func newGPUMemoryCmd(env *Env, g *gpuOptions) *cobra.Command {
	var size, tests, devices string
	var iters int
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "device-to-device, pinned host-to-device and device-to-host copy bandwidth (GB/s, like nvbandwidth)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := results.ParseSize(size)
			if err != nil || n <= 0 || iters < 1 {
				return exitf(ExitUnknown, "bench gpu memory: --size %q, --iters %d: need a positive size and iteration count", size, iters)
			}
			if err := g.validate("bench gpu memory"); err != nil {
				return err
			}
			r, err := bench.RunMemory(cmd.Context(), bench.MemoryOptions{GPUOptions: g.bench(env), Devices: devices,
				Copies: gpu.MemoryOptions{Bytes: n, Iters: iters, Tests: strings.Split(tests, ",")}})
			if r != nil {
				if werr := writeDocument(env, r, g.format); werr != nil && err == nil {
					err = werr
				}
			}
			if err != nil {
				return exitf(ExitUnknown, "bench gpu memory: %v", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "size", "1G", "bytes per copy")
	f.IntVar(&iters, "iters", 20, "timed copies per test")
	f.StringVar(&tests, "tests", "d2d,h2d,d2h,peer", "tests: d2d, h2d, d2h, peer")
	f.StringVar(&devices, "devices", "all", "GPUs, e.g. 0,1")
	return cmd
}

func newGPUGEMMCmd(env *Env, g *gpuOptions) *cobra.Command {
	var dtype string
	o := gpu.GEMMOptions{}
	cmd := &cobra.Command{
		Use:   "gemm",
		Short: "FP16/BF16 GEMM throughput for a fixed time with a rolling TFLOP/s figure; --python runs torch.matmul alongside",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.DType, err = gpu.ParseDType(dtype); err != nil {
				return exitf(ExitUnknown, "bench gpu gemm: %v", err)
			}
			if err := o.Validate(); err != nil {
				return exitf(ExitUnknown, "bench gpu gemm: %v", err)
			}
			return runGEMM(cmd.Context(), env, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&dtype, "dtype", "d", "bf16", "element type: bfloat16 (bf16) or half (fp16)")
	f.IntVar(&o.M, "m", 8192, "rows of A and C")
	f.IntVar(&o.N, "n", 8192, "columns of B and C")
	f.IntVar(&o.K, "k", 8192, "columns of A, rows of B")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to run")
	f.IntVar(&o.Device, "device", 0, "GPU")
	return cmd
}

func runGEMM(ctx context.Context, env *Env, g *gpuOptions, o gpu.GEMMOptions) error {
	if err := g.validate("bench gpu gemm"); err != nil {
		return err
	}
	r, err := bench.RunGEMM(ctx, bench.GEMMOptions{GPUOptions: g.bench(env), GEMM: o})
	if err != nil {
		return exitf(ExitUnknown, "bench gpu gemm: %v", err)
	}
	if err := writeDocument(env, r, g.format); err != nil {
		return err
	}
	return gateExit("bench gpu gemm", r)
}

// gateExit is the status of a result measured in a bad state: unknown,
// with the reasons, as it says nothing about the hardware.
func gateExit(cmd string, r *report.Report) error {
	if why := bench.BadState(r.GPU.Validity); why != "" {
		return exitf(ExitUnknown, "%s: %s", cmd, why)
	}
	return nil
}
