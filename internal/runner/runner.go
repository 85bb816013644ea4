// Package runner is the one way sparkrig runs a POSIX sh script on a node:
// over SSH, as a Slurm job step (srun inside an allocation) or with kubectl
// exec into a DaemonSet's pod, or on this machine. acquire, bench and fix
// all run their scripts through a Runner, so every check, the ping mesh,
// the benchmarks and the changes work the same over each transport.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/remote"
)

// Runner runs a POSIX sh command line on a node and returns when it has
// exited. stdin reaches the command and its end reaches it as EOF; stdout
// and stderr stream as they come. A command that exits non-zero returns an
// *ExitError; when ctx ends first the command is stopped on the node and
// the error wraps ErrTimeout (a deadline) or ErrInterrupted. Implementations are safe for concurrent use.
type Runner interface {
	Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error
}

// Sentinel errors for errors.Is, the same for every transport.
var (
	ErrUnreachable   = remote.ErrUnreachable
	ErrTimeout       = remote.ErrTimeout
	ErrInterrupted   = remote.ErrInterrupted
	ErrDropped       = remote.ErrDropped
	ErrTooMuchOutput = remote.ErrTooMuchOutput
)

// ExitError is a command that ran and exited non-zero: the node answered.
type ExitError struct {
	Host string
	Exit int
	// Stderr is the start of what the command wrote to stderr, where the
	// caller kept it.
	Stderr string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("exit status %d", e.Exit)
	}
	return fmt.Sprintf("exit %d: %s", e.Exit, msg)
}

// ExitCode returns the status.
func (e *ExitError) ExitCode() int { return e.Exit }

// Shell runs the script given on stdin as the login user.
const Shell = "sh -s"

// RootShell runs the script given on stdin as root: directly when already
// root, else through `sudo -n`, which fails at once rather than ask for a
// password. sudo drops the environment, so SSH_CONNECTION is passed along,
// and SPARKRIG_SSH_FROM carries its client address: scripts work out from it
// which interface an SSH session arrives on (both are empty over srun and
// kubectl).
const RootShell = `f=${SSH_CONNECTION%% *}; if [ "$(id -u)" = 0 ]; then SPARKRIG_SSH_FROM="$f" exec sh -s; else exec sudo -n env SSH_CONNECTION="$SSH_CONNECTION" SPARKRIG_SSH_FROM="$f" sh -s; fi`

// Answered reports whether err still means the node was reached: no error,
// or a command that ran and exited non-zero.
func Answered(err error) bool {
	var ee *ExitError
	return err == nil || errors.As(err, &ee)
}

// SudoRefused rewrites the message of a root shell that sudo refused to
// start into what the user must do.
func SudoRefused(host, stderr string) string {
	if strings.Contains(stderr, "sudo:") && strings.Contains(stderr, "password") {
		return "sudo needs a password on " + host + "; allow passwordless sudo for this user or log in as root"
	}
	return stderr
}

// maxStderr bounds what is kept of a command's stderr (its start).
const maxStderr = 64 << 10

// MaxRunOutput bounds what Run keeps of a command's stdout.
const MaxRunOutput = remote.MaxRunOutput

// Run runs cmdline to completion and returns its stdout (up to
// MaxRunOutput: more fails with ErrTooMuchOutput) and the start of its
// stderr. A non-zero exit is an *ExitError carrying that stderr.
func Run(ctx context.Context, r Runner, host, cmdline string, stdin io.Reader) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	o := &capped.Buffer{Max: MaxRunOutput, Err: ErrTooMuchOutput, OnFull: func() { cancel(ErrTooMuchOutput) }}
	e := &capped.Buffer{Max: maxStderr}
	err = r.Exec(ctx, host, cmdline, stdin, o, e)
	if o.Overflowed() {
		err = fmt.Errorf("%s: %w: stdout passed %d MiB", host, ErrTooMuchOutput, MaxRunOutput>>20)
	}
	return o.Bytes(), e.Bytes(), withStderr(err, e.Bytes())
}

// Stream runs cmdline and hands its stdout to consume as it arrives, so a
// command's output is never held whole: consume bounds what it keeps. When
// consume returns an error, or ctx ends, the command is stopped. Stream
// returns consume's error first, then the command's (an *ExitError carries
// the start of stderr); stderr's start and the exit status (-1 when there
// is none) come back as well.
func Stream(ctx context.Context, r Runner, host, cmdline string, stdin io.Reader, consume func(io.Reader) error) (stderr []byte, exit int, err error) {
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	pr, pw := io.Pipe()
	e := &capped.Buffer{Max: maxStderr}
	var xerr error
	var finished atomic.Bool // set before the stream's end is written
	done := make(chan struct{})
	go func() {
		defer close(done)
		xerr = r.Exec(sctx, host, cmdline, stdin, pw, e)
		finished.Store(true)
		pw.CloseWithError(xerr) // nil: the reader sees EOF
	}()
	cerr := consume(pr)
	stopped := false // stopped here, while it still ran
	stopIfRunning := func() {
		if !finished.Load() {
			stopped = true
			stop(errors.New("output no longer read"))
		}
	}
	if cerr == nil {
		// What follows the stream's end is not evidence; read a little of it
		// so a clean exit is not mistaken for a cut connection, then stop.
		_, cerr = io.Copy(io.Discard, io.LimitReader(pr, 64<<10))
		if n, _ := pr.Read(make([]byte, 1)); n > 0 {
			stopIfRunning()
		}
	} else {
		stopIfRunning()
	}
	pr.CloseWithError(errors.New("output no longer read"))
	<-done
	exit = -1
	var ee *ExitError
	if xerr == nil {
		exit = 0
	} else if errors.As(xerr, &ee) {
		exit = ee.Exit
	}
	if cerr != nil && xerr != nil && !Answered(xerr) && !stopped {
		// The transport failed (no connection, dropped) before the stream
		// ended: that, not the cut stream, is what went wrong.
		return e.Bytes(), exit, xerr
	}
	if cerr != nil && ctx.Err() == nil {
		return e.Bytes(), exit, cerr
	}
	if stopped && ctx.Err() == nil {
		// Stopped here after the stream ended: what was read stands.
		xerr = nil
	}
	return e.Bytes(), exit, withStderr(xerr, e.Bytes())
}

// withStderr adds stderr to an *ExitError that has none.
func withStderr(err error, stderr []byte) error {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Stderr == "" && len(stderr) > 0 {
		c := *ee
		c.Stderr = string(stderr)
		return &c
	}
	return err
}
