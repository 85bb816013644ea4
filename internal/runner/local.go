package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Local runs commands on this machine with sh, whatever host they name. It
// serves `--hosts localhost` and the tests.
type Local struct{}

// Exec runs cmdline with sh -c. Cancelling ctx kills sh's process group.
func (Local) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	return execProcess(ctx, host, []string{"sh", "-c", cmdline}, stdin, stdout, stderr, syscall.SIGKILL, 2*time.Second)
}

// String names the transport.
func (Local) String() string { return "local" }

// execProcess runs argv in its own process group with stdin fed through a
// real pipe (so Wait never waits on a copy from stdin). When ctx ends it
// sends sig to the group, and after grace stops waiting for its output. A
// non-zero exit is an *ExitError; ctx's end is ErrTimeout.
func execProcess(ctx context.Context, host string, argv []string, stdin io.Reader, stdout, stderr io.Writer, sig syscall.Signal, grace time.Duration) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, sig) }
	cmd.WaitDelay = grace
	if stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		cmd.Stdin = pr
		defer pr.Close()
		go func() {
			io.Copy(pw, stdin)
			pw.Close()
		}()
	}
	err := cmd.Run()
	if c, ok := stdin.(io.Closer); ok && stdin != nil {
		c.Close()
	}
	if err != nil && ctx.Err() != nil {
		return timeoutError(ctx, host)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Host: host, Exit: ee.ExitCode()}
	}
	return err
}

// timeoutError says that ctx ended while host's command still ran: at a
// deadline, or by an interrupt.
func timeoutError(ctx context.Context, host string) error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return fmt.Errorf("%s: %w: the command was stopped", host, ErrInterrupted)
	}
	return fmt.Errorf("%s: %w: command still running at its deadline (%v)", host, ErrTimeout, context.Cause(ctx))
}
