package triage

import (
	"encoding/json"
	"os/exec"
	"strings"
)

func json_valid(b []byte) error {
	var v any
	return json.Unmarshal(b, &v)
}

func goBuild(dir, out string, flags ...string) ([]byte, error) {
	args := append([]string{"build", "-o", out}, flags...)
	args = append(args, "main.go")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cgo := "0"
	for _, f := range flags {
		if strings.Contains(f, "-linkmode=external") {
			cgo = "1" // the system linker needs cgo
		}
	}
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED="+cgo, "GOOS=linux", "GO111MODULE=off")
	return cmd.CombinedOutput()
}
