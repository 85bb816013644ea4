package cli

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process end when the test binary does: a test
// killed at its timeout (or by hand) runs no Cleanup, and a daemon it
// started would otherwise outlive it, holding ports and any file
// descriptor it inherited. (Linux sends the signal when the thread that
// started it ends; no test locks that goroutine to its thread, so the
// runtime keeps the thread while the binary runs.)
func dieWithTest(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
