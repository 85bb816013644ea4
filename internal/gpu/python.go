package gpu

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

//go:embed torch_probe.py
var torchScript string

// PythonEnv is what a Python environment's PyTorch reports about itself.
type PythonEnv struct {
	Python        string      `json:"python"`
	SitePackages  []string    `json:"site_packages"`
	Torch         string      `json:"torch,omitempty"`
	TorchCUDA     string      `json:"torch_cuda,omitempty"`
	ArchList      []string    `json:"arch_list,omitempty"`
	CUDAAvailable bool        `json:"cuda_available"`
	NCCL          string      `json:"nccl,omitempty"`
	Error         string      `json:"error,omitempty"`
	GEMM          *GEMMResult `json:"gemm,omitempty"`
}

// Coverage is how a PyTorch build's arch list (torch.cuda.get_arch_list())
// serves a device of compute capability major.minor.
type Coverage int

// Coverage levels, best first.
const (
	CoverExact     Coverage = iota // sm_XY built in
	CoverSameMajor                 // an older sm_XZ of the same major: binary compatible, not tuned
	CoverPTX                       // only PTX (compute_XY): JIT-compiled at first use
	CoverNone                      // nothing runs
)

// ArchCoverage classifies list for the device and returns what it found.
// CUDA runs a cubin built for sm_XY on sm_XZ with Z >= Y of the same major,
// and PTX for any compute_XY not newer than the device.
func ArchCoverage(list []string, major, minor int) (Coverage, string) {
	best, what := CoverNone, ""
	for _, a := range list {
		var kind string
		var maj, min int
		n, _ := fmt.Sscanf(strings.Replace(a, "_", " ", 1), "%s %d", &kind, &maj)
		if n != 2 {
			continue
		}
		maj, min = maj/10, maj%10
		if a[len(a)-1] == 'a' || a[len(a)-1] == 'f' { // sm_90a, sm_100f: arch-specific, not portable
			continue
		}
		c := CoverNone
		switch {
		case kind == "sm" && maj == major && min == minor:
			c = CoverExact
		case kind == "sm" && maj == major && min < minor:
			c = CoverSameMajor
		case kind == "compute" && (maj < major || maj == major && min <= minor):
			c = CoverPTX
		}
		if c < best {
			best, what = c, a
		}
	}
	return best, what
}

// RunPython runs the embedded torch script with python and parses its JSON.
func RunPython(ctx context.Context, python string, args ...string) (PythonEnv, error) {
	var env PythonEnv
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", torchScript}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return env, fmt.Errorf("%s: %v: %s", python, err, lastLine(stderr.String()))
	}
	return ParsePythonEnv(out)
}

// ParsePythonEnv parses the script's output (its last line is the JSON).
func ParsePythonEnv(out []byte) (PythonEnv, error) {
	var env PythonEnv
	line := lastLine(string(out))
	if err := json.Unmarshal([]byte(line), &env); err != nil {
		return env, fmt.Errorf("python output: %v", err)
	}
	return env, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
