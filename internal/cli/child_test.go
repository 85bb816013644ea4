package cli

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process end when the test binary does: a test
// killed at its timeout (or by hand) runs no Cleanup, and a daemon it
// started would otherwise outlive it, holding ports and any file
// descriptor it inherited.
func dieWithTest(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
