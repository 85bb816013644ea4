package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/platform"
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

// gpuSession is a loaded stack plus what the commands print about it.
type gpuSession struct {
	stack *gpu.Stack
	info  gpu.Info
	py    *gpu.PythonEnv
}

// openGPU finds and loads the libraries for the command name ("bench gpu
// info"), which its errors name; without a driver it exits 3 with "no CUDA
// driver found".
func openGPU(ctx context.Context, env *Env, o *gpuOptions, name string) (*gpuSession, error) {
	if err := o.validate(name); err != nil {
		return nil, err
	}
	s := &gpuSession{}
	in := gpu.SearchInput{Explicit: o.libDirs, LDLibraryPath: env.Getenv("LD_LIBRARY_PATH"),
		CUDAHome: cmp.Or(env.Getenv("CUDA_HOME"), env.Getenv("CUDA_PATH")), StandardDirs: gpu.StandardDirs()}
	if out, err := exec.CommandContext(ctx, "ldconfig", "-p").Output(); err == nil {
		in.LDCache = gpu.ParseLDConfig(out, runtime.GOARCH)
	} else if out, err := exec.CommandContext(ctx, "/sbin/ldconfig", "-p").Output(); err == nil {
		in.LDCache = gpu.ParseLDConfig(out, runtime.GOARCH)
	}
	if o.python != "" {
		py, err := gpu.RunPython(ctx, o.python, "info")
		if err != nil {
			return nil, exitf(ExitUnknown, "%s: --python: %v", name, err)
		}
		s.py = &py
		in.SitePackages = py.SitePackages
	}
	st, err := gpu.Open(in) // "no CUDA driver found (...)" leads the message when libcuda is missing
	if err != nil {
		return nil, exitf(ExitUnknown, "%s: %v", name, err)
	}
	s.stack = st
	drv, _ := os.ReadFile("/proc/driver/nvidia/version")
	if s.info, err = st.Info(facts.DriverVersionFromProc(drv)); err != nil {
		return nil, exitf(ExitUnknown, "%s: %v", name, err)
	}
	if len(s.info.Devices) == 0 {
		return nil, exitf(ExitUnknown, "%s: no CUDA device visible (CUDA_VISIBLE_DEVICES=%q)", name, env.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	return s, nil
}

// memCap is the cap for device dev.
func (s *gpuSession) memCap(dev int, frac float64) gpu.MemCap {
	var avail uint64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		avail = facts.ParseMeminfo(b)["MemAvailable"]
	}
	return gpu.NewMemCap(s.info.Devices[dev], avail, frac, len(s.info.Devices))
}

func (s *gpuSession) pickDevices(list string) ([]int, error) {
	n := len(s.info.Devices)
	if list == "" || list == "all" {
		d := make([]int, n)
		for i := range d {
			d[i] = i
		}
		return d, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n {
			return nil, exitf(ExitUnknown, "--devices %q: %q is not a device (have 0..%d)", list, f, n-1)
		}
		out = append(out, i)
	}
	return out, nil
}

func newGPUInfoCmd(env *Env, o *gpuOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "driver, CUDA runtime, NCCL and cuBLAS versions, devices; with --python the PyTorch stack",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openGPU(cmd.Context(), env, o, "bench gpu info")
			if err != nil {
				return err
			}
			r := newDocument(env, "bench gpu info")
			r.GPU = &report.GPU{Info: infoReport(s.info, s.py)}
			return writeDocument(env, r, o.format)
		},
	}
}

// infoReport is bench gpu info's content, with what torch's kernels mean
// for GPU 0.
func infoReport(in gpu.Info, py *gpu.PythonEnv) *report.GPUInfo {
	verdict := ""
	if py != nil && len(in.Devices) > 0 {
		verdict = archVerdict(py.ArchList, in.Devices[0])
	}
	return in.Report(py, verdict)
}

// archVerdict says in words whether torch has kernels for the device (seed:
// a stack rebuilt for sm_121 runs GEMMs ~1.5x faster on DGX Spark).
func archVerdict(list []string, d gpu.Device) string {
	var maj, min int
	fmt.Sscanf(d.Capability, "%d.%d", &maj, &min)
	c, what := gpu.ArchCoverage(list, maj, min)
	arch := d.SMArch()
	switch c {
	case gpu.CoverExact:
		return "covers " + arch
	case gpu.CoverSameMajor:
		return fmt.Sprintf("no %s kernels: runs its %s ones (binary compatible, not built for this GPU)", arch, what)
	case gpu.CoverPTX:
		return fmt.Sprintf("no %s kernels: only PTX %s, JIT-compiled at first use", arch, what)
	}
	return fmt.Sprintf("no kernels for %s: CUDA operations will fail", arch)
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
	co, err := o.options()
	if err != nil {
		return exitf(ExitUnknown, "bench gpu collective: %v", err)
	}
	s, err := openGPU(ctx, env, g, "bench gpu collective")
	if err != nil {
		return err
	}
	devs, err := s.pickDevices(o.devices)
	if err != nil {
		return err
	}
	if o.nranks != 0 {
		dev := o.device
		if dev < 0 {
			dev = o.rank % len(s.info.Devices)
		}
		devs = []int{dev}
	}
	for _, d := range devs {
		if err := s.memCap(d, g.memFrac).Allow(fmt.Sprintf("a sweep up to %s (send + receive buffers)", gpu.HumanBytes(co.MaxBytes)), co.BufferBytes()); err != nil {
			return exitf(ExitUnknown, "bench gpu collective: %v", err)
		}
	}
	host, _ := os.Hostname()
	quiet := o.nranks != 0 && o.rank != 0
	hooks := gpu.Hooks{}
	if g.format == "text" && !quiet {
		hooks = gpu.Hooks{
			Start: func(t results.NCCLTable) { gpu.WriteTableHeader(env.Stdout, stamp(t, host), co) },
			Row:   func(r results.NCCLRow) { gpu.WriteRow(env.Stdout, r) },
			End:   func(t results.NCCLTable) { gpu.WriteTableFooter(env.Stdout, t) },
		}
	}
	var tables []results.NCCLTable
	sampler := bench.SampleLocal(ctx, host, 2*time.Second)
	if o.nranks != 0 {
		tables, err = s.stack.RunRank(ctx, gpu.RankOptions{Rank: o.rank, NRanks: o.nranks, Device: devs[0], Addr: o.rendezvous}, co, hooks)
	} else {
		tables, err = s.stack.RunLocal(ctx, devs, co, hooks)
	}
	validity := sampler.Stop()
	for i := range tables {
		tables[i] = stamp(tables[i], host)
	}
	if tables == nil {
		tables = []results.NCCLTable{}
	}
	if g.format == "json" && !quiet {
		r := newDocument(env, "bench gpu collective")
		r.GPU = &report.GPU{Collectives: tables, Validity: validity.Report()}
		if validity.Sampled && !validity.Valid {
			r.Status = report.VerdictUnknown
		}
		for _, t := range tables {
			if t.WrongResults > 0 {
				r.Status = report.VerdictCritical
			}
		}
		if err != nil {
			r.Status, r.Error = report.VerdictUnknown, "bench gpu collective: "+err.Error()
		}
		if werr := writeDocument(env, r, "json"); werr != nil && err == nil {
			err = werr
		}
	}
	if o.jsonFile != "" && !quiet {
		if werr := writeJSONFile(o.jsonFile, tables); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return exitf(ExitUnknown, "bench gpu collective: %v", err)
	}
	for _, t := range tables {
		if t.WrongResults > 0 {
			return exitf(ExitCritical, "%s: %d wrong values in the result check", t.Collective, t.WrongResults)
		}
	}
	if g.format == "text" && !quiet { // the tables went out as they ran; then the state
		r := newDocument(env, "bench gpu collective")
		r.GPU = &report.GPU{Validity: validity.Report()}
		if err := writeDocument(env, r, "text"); err != nil {
			return err
		}
	}
	return gateExit("bench gpu collective", validity)
}

// stamp fills what only the command knows: the tool version, and host and
// pid on devices of this process (peers of a multi-process run bring their own).
func stamp(t results.NCCLTable, host string) results.NCCLTable {
	t.ToolVersion = Version
	ds := make([]results.NCCLDevice, len(t.Devices))
	for i, d := range t.Devices {
		if d.Host == "" {
			d.Host, d.PID = host, os.Getpid()
		}
		ds[i] = d
	}
	t.Devices = ds
	return t
}

func writeJSONFile(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	e := json.NewEncoder(f) // the bare tables bench reads back from a node, not a command's document
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
			s, err := openGPU(cmd.Context(), env, g, "bench gpu memory")
			if err != nil {
				return err
			}
			devs, err := s.pickDevices(devices)
			if err != nil {
				return err
			}
			for _, d := range devs {
				if err := s.memCap(d, g.memFrac).Allow("two copy buffers of "+gpu.HumanBytes(n), 2*uint64(n)); err != nil {
					return exitf(ExitUnknown, "bench gpu memory: %v", err)
				}
			}
			res, err := s.stack.RunMemory(cmd.Context(), gpu.MemoryOptions{Bytes: n, Iters: iters, Devices: devs, Tests: strings.Split(tests, ",")})
			r := newDocument(env, "bench gpu memory")
			r.GPU = &report.GPU{Copies: gpu.CopyReport(res, func(src int) (report.Peak, bool) { return memoryPeak(s.info.Devices[src]) })}
			if werr := writeDocument(env, r, g.format); werr != nil && err == nil {
				err = werr
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

// memoryPeak is the unified memory bandwidth a GB10 device-to-device copy is
// set against, from the expectations file.
func memoryPeak(d gpu.Device) (report.Peak, bool) {
	if !d.Integrated || platform.FromGPUName(d.Name) != platform.DGXSpark {
		return report.Peak{}, false
	}
	set, err := expect.Default()
	if err != nil {
		return report.Peak{}, false
	}
	w, ok := set.Wire("dgx-spark", "memory")
	return report.Peak{Name: w.Name, Value: w.Value, Unit: w.Unit, Source: w.Source}, ok
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
	s, err := openGPU(ctx, env, g, "bench gpu gemm")
	if err != nil {
		return err
	}
	if o.Device < 0 || o.Device >= len(s.info.Devices) {
		return exitf(ExitUnknown, "bench gpu gemm: --device %d: have 0..%d", o.Device, len(s.info.Devices)-1)
	}
	if err := s.memCap(o.Device, g.memFrac).Allow(fmt.Sprintf("a %dx%dx%d %s GEMM", o.M, o.N, o.K, o.DType.Name), o.Bytes()); err != nil {
		return exitf(ExitUnknown, "bench gpu gemm: %v", err)
	}
	text := g.format == "text"
	if text {
		fmt.Fprintf(env.Stdout, "gemm %s %dx%dx%d on gpu %d (%s) for %v\n", o.DType.Name, o.M, o.N, o.K, o.Device, s.info.Devices[o.Device].Name, o.Duration)
	}
	last := time.Duration(0)
	host, _ := os.Hostname()
	sampler := bench.SampleLocal(ctx, host, 2*time.Second)
	res, err := s.stack.RunGEMM(ctx, o, func(tf float64, el time.Duration) {
		switch {
		case text && env.StdoutTTY: // one line, rewritten in place
			fmt.Fprintf(env.Stdout, "\r  %5.1fs  %7.1f TFLOP/s", el.Seconds(), tf)
		case text && el-last >= time.Second:
			last = el
			fmt.Fprintf(env.Stdout, "  %5.1fs  %7.1f TFLOP/s\n", el.Seconds(), tf)
		}
	})
	validity := sampler.Stop()
	if text && env.StdoutTTY {
		fmt.Fprintln(env.Stdout)
	}
	if err != nil {
		return exitf(ExitUnknown, "bench gpu gemm: %v", err)
	}
	var torch *gpu.GEMMResult
	if g.python != "" {
		py, err := gpu.RunPython(ctx, g.python, "gemm", o.DType.Name, strconv.Itoa(o.M), strconv.Itoa(o.N), strconv.Itoa(o.K),
			strconv.FormatFloat(o.Duration.Seconds(), 'f', -1, 64), strconv.Itoa(o.Device))
		if err != nil {
			return exitf(ExitUnknown, "bench gpu gemm --python: %v", err)
		}
		if py.GEMM == nil {
			return exitf(ExitUnknown, "bench gpu gemm --python: torch ran no GEMM (%s)", cmp.Or(py.Error, "CUDA not available to torch"))
		}
		torch = py.GEMM
	}
	r := newDocument(env, "bench gpu gemm")
	r.GPU = &report.GPU{GEMM: []report.GPUGEMM{res.Report()}, Validity: validity.Report()}
	if torch != nil {
		r.GPU.GEMM = append(r.GPU.GEMM, torch.Report())
	}
	if validity.Sampled && !validity.Valid {
		r.Status = report.VerdictUnknown
	}
	if err := writeDocument(env, r, g.format); err != nil {
		return err
	}
	return gateExit("bench gpu gemm", validity)
}

// gateExit is the status of a result measured in a bad state: unknown,
// with the reasons, as it says nothing about the hardware.
func gateExit(cmd string, v bench.Validity) error {
	if v.Sampled && !v.Valid {
		return exitf(ExitUnknown, "%s: result measured in a bad state: %s", cmd, strings.Join(v.Reasons, "; "))
	}
	return nil
}
