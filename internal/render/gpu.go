package render

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// textGPU writes `bench gpu info` and `bench gpu memory`.
func textGPU(w io.Writer, r *report.Report, opt Options) error {
	if r.GPU == nil {
		return nil
	}
	if r.GPU.Info != nil {
		if err := GPUInfo(w, r.GPU.Info, opt); err != nil {
			return err
		}
	}
	if len(r.GPU.Copies) > 0 {
		if err := GPUCopies(w, r.GPU.Copies, opt); err != nil {
			return err
		}
	}
	if len(r.GPU.GEMM) > 0 {
		if err := GPUGEMM(w, r.GPU.GEMM); err != nil {
			return err
		}
	}
	if v := r.GPU.Validity; v != nil {
		return gpuValidity(w, v)
	}
	return nil
}

// gpuValidity says whether the GPU's state during the run lets the result
// speak for the hardware.
func gpuValidity(w io.Writer, v *report.Validity) error {
	var b strings.Builder
	switch {
	case !v.Sampled:
		b.WriteString("state: clocks, power and RoCE MTU not sampled (no nvidia-smi): validity unchecked\n")
	case v.Valid:
		b.WriteString("state: valid (clocks, power and RoCE MTU sampled during the run)\n")
	default:
		b.WriteString("state: INVALID, measured in a bad state:\n")
		for _, r := range v.Reasons {
			b.WriteString("  " + r + "\n")
		}
	}
	_, err := io.WriteString(safe(w), b.String())
	return err
}

// GPUGEMM writes `bench gpu gemm`'s result table: each tool's whole-run
// and best-batch TFLOP/s, and sparkrig's rate over torch's when compared.
func GPUGEMM(w io.Writer, runs []report.GPUGEMM) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %10s %10s %8s\n", "tool", "TFLOP/s", "best", "iters")
	for _, r := range runs {
		fmt.Fprintf(&b, "%-28s %10.1f %10.1f %8d\n", r.Tool, r.TFLOPS, r.Best, r.Iters)
	}
	if len(runs) == 2 && runs[1].TFLOPS > 0 {
		fmt.Fprintf(&b, "sparkrig / torch = %.3f\n", runs[0].TFLOPS/runs[1].TFLOPS)
	}
	_, err := io.WriteString(safe(w), b.String())
	return err
}

// GPUInfo writes `bench gpu info`: the driver, the CUDA runtime and the
// libraries found, each GPU, and with a Python environment its torch build
// and what torch's kernels mean for GPU 0.
func GPUInfo(w io.Writer, in *report.GPUInfo, opt Options) error {
	opt = textDefaults(opt)
	var b strings.Builder
	field := func(label, value string) { labelColumn(&b, "", 15, label, value, opt.Width, false) }
	field("driver", fmt.Sprintf("%s (supports CUDA %s)", orDash(in.Driver), in.DriverCUDA))
	field("cuda runtime", in.Runtime+"  "+in.Libraries["cudart"])
	field("nccl", orDash(in.NCCL)+"  "+cmp.Or(in.Libraries["nccl"], in.Missing["nccl"]))
	field("cublas", orDash(in.CUBLAS)+"  "+cmp.Or(in.Libraries["cublas"], in.Missing["cublas"]))
	for _, d := range in.Devices {
		unified := ""
		if d.Integrated {
			unified = "  unified memory"
		}
		field(fmt.Sprintf("gpu %d", d.Index), fmt.Sprintf("%s  sm %s (%s)  %d SMs  %s  free %s of %s%s", d.Name, d.Capability, d.SMArch,
			d.SMs, d.PCIBus, d.MemFree, d.MemTotal, unified))
	}
	switch py := in.Python; {
	case py == nil:
	case py.Error != "":
		field("python", py.Python+": "+py.Error)
	default:
		field("torch", fmt.Sprintf("%s (CUDA %s, NCCL %s)", py.Torch, py.TorchCUDA, orDash(py.NCCL)))
		if len(in.Devices) > 0 {
			field("torch archs", strings.Join(py.ArchList, " ")+"  "+py.ArchVerdict)
		}
	}
	_, err := io.WriteString(safe(w), b.String())
	return err
}

// GPUCopies writes `bench gpu memory`: one row per copy; a device-to-device
// copy with a memory peak to compare says what share of it the copy's DRAM
// traffic is.
func GPUCopies(w io.Writer, res []report.GPUCopy, opt Options) error {
	opt = textDefaults(opt)
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %-10s %8s %6s %10s\n", "test", "src->dst", "size", "iters", "GB/s")
	for _, r := range res {
		row := fmt.Sprintf("%-9s %-10s %8s %6d %10.2f", r.Name, copyEnd(r.Src)+"->"+copyEnd(r.Dst), r.Size, r.Iters, r.GBs)
		note := ""
		if m := r.Peak; m != nil && m.Value > 0 {
			// A copy reads and writes: DRAM traffic is twice the copy rate.
			note = fmt.Sprintf("DRAM traffic %.0f GB/s = %.0f%% of the %g %s %s peak", 2*r.GBs, 2*r.GBs/m.Value*100, m.Value, m.Unit, m.Name)
		}
		switch {
		case note == "":
			b.WriteString(row + "\n")
		case vlen(row)+3+vlen(note) <= opt.Width:
			b.WriteString(row + "   " + note + "\n")
		default:
			b.WriteString(row + "\n")
			hang(&b, "    ", "      ", note, opt.Width)
		}
	}
	_, err := io.WriteString(safe(w), b.String())
	return err
}

func copyEnd(d int) string {
	if d < 0 {
		return "host"
	}
	return fmt.Sprintf("gpu%d", d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
