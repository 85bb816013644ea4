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

//go:embed torch.py
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

// CoversArch reports whether torch ships kernels for arch (e.g. sm_121); a
// build with PTX for an older compute_XY also runs there, through the JIT.
func (p PythonEnv) CoversArch(arch string) bool {
	for _, a := range p.ArchList {
		if a == arch {
			return true
		}
	}
	return false
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
