package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// GPUOptions are what every GPU benchmark of this machine shares: where
// its libraries are found, how much memory it may take, and where its text
// goes as it runs.
type GPUOptions struct {
	// Python is an interpreter whose nvidia-* wheels are searched and
	// whose PyTorch is compared; LibDirs are searched first.
	Python  string
	LibDirs []string
	// MemFraction is the most of the free GPU memory (MemAvailable on
	// unified memory) a benchmark may use.
	MemFraction float64
	// Getenv reads LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH and
	// CUDA_VISIBLE_DEVICES (nil: os.Getenv).
	Getenv func(string) string
	// Text is where the tables and rates are written as they are measured
	// (nil: nowhere, the report alone); TTY rewrites a rate in place.
	Text io.Writer
	TTY  bool
	// ToolVersion and Now stamp the report and the tables.
	ToolVersion string
	Now         func() time.Time
}

// GPUSession is this machine's loaded CUDA stack: its versions and devices,
// and with GPUOptions.Python the PyTorch environment.
type GPUSession struct {
	stack  *gpu.Stack
	Info   gpu.Info
	Python *gpu.PythonEnv
}

// OpenGPU finds and loads the libraries; without a driver its error starts
// with "no CUDA driver found".
func OpenGPU(ctx context.Context, o GPUOptions) (*GPUSession, error) {
	getenv := o.getenv()
	s := &GPUSession{}
	in := gpu.SearchInput{Explicit: o.LibDirs, LDLibraryPath: getenv("LD_LIBRARY_PATH"),
		CUDAHome: cmp.Or(getenv("CUDA_HOME"), getenv("CUDA_PATH")), StandardDirs: gpu.StandardDirs()}
	if out, err := exec.CommandContext(ctx, "ldconfig", "-p").Output(); err == nil {
		in.LDCache = gpu.ParseLDConfig(out, runtime.GOARCH)
	} else if out, err := exec.CommandContext(ctx, "/sbin/ldconfig", "-p").Output(); err == nil {
		in.LDCache = gpu.ParseLDConfig(out, runtime.GOARCH)
	}
	if o.Python != "" {
		py, err := gpu.RunPython(ctx, o.Python, "info")
		if err != nil {
			return nil, fmt.Errorf("--python: %v", err)
		}
		s.Python = &py
		in.SitePackages = py.SitePackages
	}
	st, err := gpu.Open(in) // "no CUDA driver found (...)" leads the message when libcuda is missing
	if err != nil {
		return nil, err
	}
	s.stack = st
	drv, _ := os.ReadFile("/proc/driver/nvidia/version")
	if s.Info, err = st.Info(facts.DriverVersionFromProc(drv)); err != nil {
		return nil, err
	}
	if len(s.Info.Devices) == 0 {
		return nil, fmt.Errorf("no CUDA device visible (CUDA_VISIBLE_DEVICES=%q)", getenv("CUDA_VISIBLE_DEVICES"))
	}
	return s, nil
}

func (o GPUOptions) getenv() func(string) string {
	if o.Getenv == nil {
		return os.Getenv
	}
	return o.Getenv
}

// document is a GPU benchmark's report, stamped.
func (o GPUOptions) document(command string) *report.Report {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.ToolVersion, Command: command,
		GeneratedAt: now().UTC(), Hosts: []report.Host{}}
}

// MemCap is the memory cap for device dev: frac of its free memory.
func (s *GPUSession) MemCap(dev int, frac float64) gpu.MemCap {
	var avail uint64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		avail = facts.ParseMeminfo(b)["MemAvailable"]
	}
	return gpu.NewMemCap(s.Info.Devices[dev], avail, frac, len(s.Info.Devices))
}

// PickDevices reads a --devices list ("all", or indices such as 0,1).
func (s *GPUSession) PickDevices(list string) ([]int, error) {
	n := len(s.Info.Devices)
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
			return nil, fmt.Errorf("--devices %q: %q is not a device (have 0..%d)", list, f, n-1)
		}
		out = append(out, i)
	}
	return out, nil
}

// GPUInfo is bench gpu info's pipeline: the stack's versions and devices,
// and with Python what its PyTorch has kernels for.
func GPUInfo(ctx context.Context, o GPUOptions) (*report.Report, error) {
	s, err := OpenGPU(ctx, o)
	if err != nil {
		return nil, err
	}
	r := o.document("bench gpu info")
	r.GPU = &report.GPU{Info: InfoReport(s.Info, s.Python)}
	return r, nil
}

// InfoReport is bench gpu info's content, with what torch's kernels mean
// for GPU 0.
func InfoReport(in gpu.Info, py *gpu.PythonEnv) *report.GPUInfo {
	verdict := ""
	if py != nil && len(in.Devices) > 0 {
		verdict = ArchVerdict(py.ArchList, in.Devices[0])
	}
	return in.Report(py, verdict)
}

// ArchVerdict says in words whether torch has kernels for the device (seed:
// a stack rebuilt for sm_121 runs GEMMs ~1.5x faster on DGX Spark).
func ArchVerdict(list []string, d gpu.Device) string {
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

// CollectiveOptions are bench gpu collective's: the sweep, and either the
// devices one process drives or this process's place in a multi-process run.
type CollectiveOptions struct {
	GPUOptions
	Sweep   gpu.CollectiveOptions
	Devices string // "all" or indices, for one process driving them all
	// NRanks > 0 is a multi-process run: this process is Rank, on Device
	// (-1: the rank modulo the GPU count), meeting at Rendezvous.
	NRanks, Rank, Device int
	Rendezvous           string
	// JSONFile also gets the tables, as a bare JSON array (what bench reads
	// back from a node).
	JSONFile string
}

// Quiet reports whether this process reports nothing: a rank other than 0
// of a multi-process run (rank 0 prints every rank's table).
func (o CollectiveOptions) Quiet() bool { return o.NRanks != 0 && o.Rank != 0 }

// RunCollective is bench gpu collective's pipeline: the sweep run through
// the node's NCCL (the tables written to Text as they are measured), with
// the node's state sampled beside it. The report holds the tables and the
// state; its status is critical where the result check found wrong values,
// unknown where the state was bad. An error after the sweep began comes
// with the report of what was measured.
func RunCollective(ctx context.Context, o CollectiveOptions) (*report.Report, error) {
	co := o.Sweep
	s, err := OpenGPU(ctx, o.GPUOptions)
	if err != nil {
		return nil, err
	}
	devs, err := s.PickDevices(o.Devices)
	if err != nil {
		return nil, err
	}
	if o.NRanks != 0 {
		dev := o.Device
		if dev < 0 {
			dev = o.Rank % len(s.Info.Devices)
		}
		devs = []int{dev}
	}
	for _, d := range devs {
		if err := s.MemCap(d, o.MemFraction).Allow(fmt.Sprintf("a sweep up to %s (send + receive buffers)", report.HumanBytes(co.MaxBytes)), co.BufferBytes()); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname()
	hooks := gpu.Hooks{}
	if w := o.Text; w != nil && !o.Quiet() {
		hooks = gpu.Hooks{
			Start: func(t results.NCCLTable) { gpu.WriteTableHeader(w, stamp(t, host, o.ToolVersion), co) },
			Row:   func(r results.NCCLRow) { gpu.WriteRow(w, r) },
			End:   func(t results.NCCLTable) { gpu.WriteTableFooter(w, t) },
		}
	}
	var tables []results.NCCLTable
	sampler := SampleLocal(ctx, host, 2*time.Second)
	if o.NRanks != 0 {
		tables, err = s.stack.RunRank(ctx, gpu.RankOptions{Rank: o.Rank, NRanks: o.NRanks, Device: devs[0], Addr: o.Rendezvous}, co, hooks)
	} else {
		tables, err = s.stack.RunLocal(ctx, devs, co, hooks)
	}
	validity := sampler.Stop()
	for i := range tables {
		tables[i] = stamp(tables[i], host, o.ToolVersion)
	}
	if tables == nil {
		tables = []results.NCCLTable{}
	}
	r := o.document("bench gpu collective")
	r.GPU = &report.GPU{Collectives: tables, Validity: validity.Report()}
	if validity.Sampled && !validity.Valid {
		r.Status = report.VerdictUnknown
	}
	for _, t := range tables {
		if t.WrongResults > 0 {
			r.Status = report.VerdictCritical
		}
	}
	if o.JSONFile != "" && !o.Quiet() {
		if werr := writeJSONFile(o.JSONFile, tables); werr != nil && err == nil {
			err = werr
		}
	}
	return r, err
}

// stamp fills what only this process knows: the tool version, and host and
// pid on devices of this process (peers of a multi-process run bring their own).
func stamp(t results.NCCLTable, host, version string) results.NCCLTable {
	t.ToolVersion = version
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

// MemoryOptions are bench gpu memory's: the copies and the devices.
type MemoryOptions struct {
	GPUOptions
	Copies  gpu.MemoryOptions // Devices is filled from DeviceList
	Devices string
}

// RunMemory is bench gpu memory's pipeline: each copy's bandwidth, a
// device-to-device copy on GB10 set against the unified memory peak. An
// error after the copies began comes with the report of what was measured.
func RunMemory(ctx context.Context, o MemoryOptions) (*report.Report, error) {
	s, err := OpenGPU(ctx, o.GPUOptions)
	if err != nil {
		return nil, err
	}
	devs, err := s.PickDevices(o.Devices)
	if err != nil {
		return nil, err
	}
	n := o.Copies.Bytes
	for _, d := range devs {
		if err := s.MemCap(d, o.MemFraction).Allow("two copy buffers of "+report.HumanBytes(n), 2*uint64(n)); err != nil {
			return nil, err
		}
	}
	mo := o.Copies
	mo.Devices = devs
	res, err := s.stack.RunMemory(ctx, mo)
	r := o.document("bench gpu memory")
	r.GPU = &report.GPU{Copies: gpu.CopyReport(res, func(src int) (report.Peak, bool) { return MemoryPeak(s.Info.Devices[src]) })}
	return r, err
}

// MemoryPeak is the unified memory bandwidth a GB10 device-to-device copy
// is set against, from the expectations file.
func MemoryPeak(d gpu.Device) (report.Peak, bool) {
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

// GEMMOptions are bench gpu gemm's.
type GEMMOptions struct {
	GPUOptions
	GEMM gpu.GEMMOptions
}

// RunGEMM is bench gpu gemm's pipeline: GEMMs for a fixed time, the rolling
// rate written to Text (once a second, or rewritten in place on a TTY),
// with --python torch.matmul alongside; the node's state sampled beside
// it, a bad state making the status unknown.
func RunGEMM(ctx context.Context, o GEMMOptions) (*report.Report, error) {
	g := o.GEMM
	s, err := OpenGPU(ctx, o.GPUOptions)
	if err != nil {
		return nil, err
	}
	if g.Device < 0 || g.Device >= len(s.Info.Devices) {
		return nil, fmt.Errorf("--device %d: have 0..%d", g.Device, len(s.Info.Devices)-1)
	}
	if err := s.MemCap(g.Device, o.MemFraction).Allow(fmt.Sprintf("a %dx%dx%d %s GEMM", g.M, g.N, g.K, g.DType.Name), g.Bytes()); err != nil {
		return nil, err
	}
	w := o.Text
	if w != nil {
		fmt.Fprintf(w, "gemm %s %dx%dx%d on gpu %d (%s) for %v\n", g.DType.Name, g.M, g.N, g.K, g.Device, s.Info.Devices[g.Device].Name, g.Duration)
	}
	last := time.Duration(0)
	host, _ := os.Hostname()
	sampler := SampleLocal(ctx, host, 2*time.Second)
	res, err := s.stack.RunGEMM(ctx, g, func(tf float64, el time.Duration) {
		switch {
		case w != nil && o.TTY: // one line, rewritten in place
			fmt.Fprintf(w, "\r  %5.1fs  %7.1f TFLOP/s", el.Seconds(), tf)
		case w != nil && el-last >= time.Second:
			last = el
			fmt.Fprintf(w, "  %5.1fs  %7.1f TFLOP/s\n", el.Seconds(), tf)
		}
	})
	validity := sampler.Stop()
	if w != nil && o.TTY {
		fmt.Fprintln(w)
	}
	if err != nil {
		return nil, err
	}
	torch, err := torchGEMM(ctx, o)
	if err != nil {
		return nil, err
	}
	r := o.document("bench gpu gemm")
	r.GPU = &report.GPU{GEMM: []report.GPUGEMM{res.Report()}, Validity: validity.Report()}
	if torch != nil {
		r.GPU.GEMM = append(r.GPU.GEMM, torch.Report())
	}
	if validity.Sampled && !validity.Valid {
		r.Status = report.VerdictUnknown
	}
	return r, nil
}

// torchGEMM runs the same GEMM through --python's torch.matmul (nil
// without --python).
func torchGEMM(ctx context.Context, o GEMMOptions) (*gpu.GEMMResult, error) {
	if o.Python == "" {
		return nil, nil
	}
	g := o.GEMM
	py, err := gpu.RunPython(ctx, o.Python, "gemm", g.DType.Name, strconv.Itoa(g.M), strconv.Itoa(g.N), strconv.Itoa(g.K),
		strconv.FormatFloat(g.Duration.Seconds(), 'f', -1, 64), strconv.Itoa(g.Device))
	if err != nil {
		return nil, fmt.Errorf("--python: %v", err)
	}
	if py.GEMM == nil {
		return nil, fmt.Errorf("--python: torch ran no GEMM (%s)", cmp.Or(py.Error, "CUDA not available to torch"))
	}
	return py.GEMM, nil
}

// BadState is why a result measured in a bad state says nothing about the
// hardware, or "" when the state was fine or not sampled.
func BadState(v *report.Validity) string {
	if v == nil || !v.Sampled || v.Valid {
		return ""
	}
	return "result measured in a bad state: " + strings.Join(v.Reasons, "; ")
}
