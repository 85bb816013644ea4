package analyze

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// archFloor is the first NCCL release that runs a GPU architecture right,
// told by the GPU's marketing name as nccl-tests prints it on its device
// lines ("… device 0 [0000:16:00] NVIDIA GeForce RTX 5090").
type archFloor struct {
	// name matches the GPUs of the architecture
	name *regexp.Regexp
	arch string
	// first is the release that first supports it; what it changed
	first, change, source string
}

// archFloors: Blackwell's two compute capabilities NCCL supports from a
// given release. GB10 (compute capability 12.1, DGX Spark class) is judged
// by the platform's own minimum (expectations.yaml nccl_min) and is not
// listed; B300 and GB300 (10.3) neither, no release note names them.
var archFloors = []archFloor{
	{
		// GeForce RTX 5050 to 5090 (not the Ada "RTX 5000"), RTX PRO
		// 4000 to 6000 Blackwell
		name:   regexp.MustCompile(`\bRTX 50[5-9]0\b|\bRTX PRO \d{4}\b.*\bBlackwell\b`),
		arch:   "compute capability 12.0 (GeForce RTX 50xx, RTX PRO Blackwell)",
		first:  "2.26.2",
		change: "2.26.2 fixed NCCL's shared memory use on these GPUs: earlier releases size their kernels beyond the shared memory a block of compute capability 12.0 may use, so collectives can fail to launch, hang or give wrong results",
		source: "https://github.com/NVIDIA/nccl/releases/tag/v2.26.2-1 (\"Fix shared memory usage on recent Blackwell GPUs\": NVIDIA/nccl-tests#287, NVIDIA/nccl-tests#291, NVIDIA/nccl#1637); NVIDIA/nccl src/include/device.h v2.26.2-1 (ncclCollUnroll 6 instead of 8 for cudaArch 1200)",
	},
	{
		// B100, B200, GB200 (not H200, B300, GB300)
		name:   regexp.MustCompile(`\bG?B[12]00\b`),
		arch:   "compute capability 10.0 (B100, B200, GB200)",
		first:  "2.25.1",
		change: "2.25.1 added Blackwell (sm100) support: code compiled for sm100, graph search speeds and limits for large NVLink domains; earlier releases run it only through PTX compiled for older GPUs and were never supported on it",
		source: "https://github.com/NVIDIA/nccl/releases/tag/v2.25.1-1 (\"Add Blackwell/SM100 support\"); NVIDIA/nccl makefiles/common.mk v2.25.1-1 (compute_100 gencode); https://github.com/NVIDIA/nccl/issues/1611 (GB200 with 2.21.5 aborts at 10 nodes; the maintainer: Blackwell is supported from 2.25.1, which worked)",
	},
}

// archVersion is the release NCCL's banner names, else the nccl-library
// of the first nccl-tests header ("# nccl-tests version 2.13.9
// nccl-headers=22501 nccl-library=22501").
func archVersion(logVersion string, o *results.NCCLOutput) string {
	if logVersion != "" || o == nil {
		return logVersion
	}
	for _, t := range o.Tables {
		if t.NCCLVersion != "" {
			return t.NCCLVersion
		}
	}
	return ""
}

// weightArchFloor ranks the release below a GPU's floor just above the
// error signatures it explains (1.0 to 1.1): a message that names a cause
// of its own and the fix for this very bug (nccl.too-old, 1.1) tie it.
const weightArchFloor = 1.1

// archKernelSignatures are the errors a release older than the GPU's
// architecture's first one explains whatever they quote: no kernel for
// the GPU, kernels beyond its shared memory, 2.25.1's launch failure.
var archKernelSignatures = map[string]bool{"nccl-not-built-for-gpu-arch": true, "nccl-kernel-shmem-exceeds": true, "nccl-2251-kernel-launch": true}

// archCUDASignatures are the CUDA or NCCL failures it explains when the
// line quotes an error of NCCL's code on the GPU (archKernelErrors) or
// NCCL's generic "unhandled cuda error".
var archCUDASignatures = map[string]bool{"cuda-failure": true, "nccl-tests-cuda-failure": true, "nccl-tests-nccl-call-failed": true, "xla-nccl-failure": true}

// archKernelErrors are cudaGetErrorString's words for a kernel that does
// not run on the GPU or faults there (cudaErrorInvalidDeviceFunction,
// NoKernelImageForDevice, SymbolNotFound, LaunchOutOfResources,
// IllegalAddress, LaunchFailure, MisalignedAddress, IllegalInstruction,
// InvalidValue of a launch), and NCCL's result for a CUDA call it does not
// name ("unhandled cuda error").
var archKernelErrors = []string{"invalid device function", "no kernel image", "named symbol not found", "too many resources requested for launch",
	"illegal memory access", "unspecified launch failure", "misaligned address", "illegal instruction", "invalid argument", "unhandled cuda error"}

// archFailureExplained: an error line of the run is one an NCCL release
// too old for the GPU explains (see archKernelSignatures,
// archCUDASignatures), in a hit's first line or nccl-tests' own failure.
// Network, bootstrap, environment, memory and peer-access errors name
// causes of their own and are not read as the release's.
func archFailureExplained(hits []diagnose.ErrorHit, c cudaFacts) bool {
	// NCCL answers every CUDA failure with "unhandled cuda error", so that
	// phrase counts only when no hit names a CUDA error of another cause.
	generic := !ownCUDACause(hits)
	for _, h := range hits {
		if archKernelSignatures[h.Signature.ID] || archCUDASignatures[h.Signature.ID] && quotesKernelError(h.First, generic) {
			return true
		}
	}
	return quotesKernelError(c.testFailure, generic)
}

// archOwnCauseSignatures are CUDA failures with a cause of their own that
// NCCL also reports as "unhandled cuda error".
var archOwnCauseSignatures = map[string]bool{"cuda-oom": true, "nccl-peer-access-unsupported": true,
	"p2p-peer-access-unsupported": true, "custom-allreduce-no-peer-access": true}

func ownCUDACause(hits []diagnose.ErrorHit) bool {
	for _, h := range hits {
		if archOwnCauseSignatures[h.Signature.ID] {
			return true
		}
	}
	return false
}

// quotesKernelError: the line quotes one of archKernelErrors; NCCL's
// generic "unhandled cuda error" only when generic is set.
func quotesKernelError(line string, generic bool) bool {
	l := strings.ToLower(line)
	for _, e := range archKernelErrors {
		if strings.Contains(l, e) && (generic || e != "unhandled cuda error") {
			return true
		}
	}
	return false
}

// archTooOld: the lines name a GPU and an NCCL release older than the first
// release that supports the GPU's architecture. For: the GPU's name on an
// nccl-tests device line and the release (NCCL's banner, the header's
// nccl-library, a framework's "NCCL version"). Against: no GPU named, no
// release, the floor's release or a later one. A fail when the lines show
// an error the release explains (archFailureExplained), else a warning:
// the run may not have reached a collective, or failed for a cause of its
// own.
func (a *analysis) archTooOld(c cudaFacts, logVersion string, failed bool) {
	v := logVersion
	if v == "" {
		v = c.version
	}
	v = leadingVersion([]byte(v))
	if v == "" || c.gpu == "" {
		return
	}
	for _, f := range archFloors {
		if !f.name.MatchString(c.gpu) || facts.CompareVersions(v, f.first) >= 0 {
			continue
		}
		sev, seen := report.Warn, " (these lines show no failure it explains)"
		if failed {
			sev, seen = report.Fail, ""
		}
		a.cause(weightArchFloor, sev, "nccl.too-old",
			fmt.Sprintf("NCCL %s is older than %s, the first release that supports this GPU's architecture, %s: %s%s", v, f.first, f.arch, f.change, seen),
			fmt.Sprintf("NCCL version %s; GPU %s", v, c.gpu),
			"install NCCL "+f.first+" or later (a framework build or container that bundles one, built with CUDA 12.8 or later for Blackwell), rebuild what links it, and check the version NCCL_DEBUG=INFO prints on every rank",
			f.source)
		return
	}
}
