package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// wrapper runs "$@" in its own session, records its pid in $1, says on
// stderr when TCP port $2 listens (0: no port to watch), and ends it
// (and what it started) on TERM or when stdin reaches EOF: the SSH session
// that started it is gone. It exits with the command's status. The watcher
// reads stdin through fd 3 because sh gives background jobs /dev/null, and
// holds no output stream, so the session ends when the command does. Once
// the command runs, the wrapper ignores SIGPIPE: if sparkrig dies at that
// moment, a write to its dead stderr (the pid file's directory already
// removed) must not end the wrapper before its watcher stops the command;
// and the pid file is written in a subshell, since sh exits on a failed
// redirection.
const wrapper = `p=$1; r=$2; shift 2
exec 3<&0
if command -v setsid >/dev/null 2>&1; then setsid "$@" </dev/null 3<&- & else "$@" </dev/null 3<&- & fi
c=$!
trap '' PIPE
(echo "$c" >"$p") 2>/dev/null
if [ "$r" != 0 ]; then ( if command -v ss >/dev/null 2>&1; then i=0; while [ $i -lt 600 ]; do
  if ss -Hltn "sport = :$r" 2>/dev/null | grep -q .; then echo ` + readyMarker + ` >&2; exit 0; fi
  kill -0 "$c" 2>/dev/null || exit 0; sleep 0.05; i=$((i+1)); done
else echo ` + readyUnknown + ` >&2; fi ) 3<&- >/dev/null & fi
stop() { kill -TERM "-$c" 2>/dev/null || kill -TERM "$c" 2>/dev/null; }
trap stop TERM INT HUP
( while read -r _ <&3; do :; done; stop; sleep 3; kill -KILL "-$c" || kill -KILL "$c" ) >/dev/null 2>&1 &
w=$!
wait "$c"; rc=$?
while kill -0 "$c" 2>/dev/null; do wait "$c"; rc=$?; done
kill "$w" 2>/dev/null
rm -f "$p"
exit "$rc"`

// Lines the wrapper writes to stderr once a server's port listens, or when
// it cannot tell (no ss); they are taken out of the recorded output.
const (
	readyMarker  = "sparkrig-bench-ready"
	readyUnknown = "sparkrig-bench-ready-unknown"
)

// killScript stops the process recorded in pidfile: TERM to its process
// group, KILL after a grace period if it is still there.
func killScript(pidfile string) string {
	q := shell.QuoteIfNeeded(pidfile)
	return `p=` + q + `; [ -f "$p" ] || exit 0; c=$(cat "$p"); [ -n "$c" ] || exit 0
kill -TERM "-$c" 2>/dev/null || kill -TERM "$c" 2>/dev/null
i=0; while kill -0 "$c" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL "-$c" 2>/dev/null || kill -KILL "$c" 2>/dev/null; rm -f "$p"; exit 0`
}

// Script is the sh command line that runs c under the wrapper, with its
// environment set by env(1) and its pid recorded in pidfile.
func Script(c Cmd, pidfile string) string {
	var b strings.Builder
	b.WriteString("sh -c ")
	b.WriteString(shell.QuoteIfNeeded(wrapper))
	b.WriteString(" sparkrig-bench ")
	b.WriteString(shell.QuoteIfNeeded(pidfile))
	b.WriteString(" " + strconv.Itoa(c.ListenPort))
	if len(c.Env) > 0 {
		b.WriteString(" env")
		for _, v := range c.Env {
			b.WriteString(" " + shell.QuoteIfNeeded(v.Name+"="+v.Value))
		}
	}
	for _, a := range c.Argv {
		b.WriteString(" " + shell.QuoteIfNeeded(a))
	}
	return b.String()
}

// CommandLine is c as a user would type it, for --dry-run and the record.
func CommandLine(c Cmd) string {
	var parts []string
	for _, v := range c.Env {
		parts = append(parts, shell.QuoteIfNeeded(v.Name+"="+v.Value))
	}
	for _, a := range c.Argv {
		parts = append(parts, shell.QuoteIfNeeded(a))
	}
	return strings.Join(parts, " ")
}

// proc is one started command.
type proc struct {
	host, pidfile string
	t             runner.Runner
	stdin         *io.PipeWriter
	cancel        context.CancelFunc
	done          chan struct{}
	err           error
	ended         time.Time // set before done is closed
	stopOnce      sync.Once
}

// start runs c under the wrapper in the background.
func start(ctx context.Context, t runner.Runner, c Cmd, pidfile string, stdout, stderr io.Writer) *proc {
	pr, pw := io.Pipe()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &proc{host: c.Host, pidfile: pidfile, t: t, stdin: pw, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = execOn(cctx, t, c.Host, Script(c, pidfile), pr, stdout, stderr)
		p.ended = time.Now()
		pr.Close()
	}()
	return p
}

// wait returns the command's error, or ctx's when ctx ends first.
func (p *proc) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exited reports whether the command has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the command on its host: by its pid over a fresh session, then
// by closing its stdin, and last by dropping the session. It waits at most
// grace for the command to be gone, and a host that stopped answering no
// longer than AbandonAfter more.
func (p *proc) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		if !p.exited() {
			kctx, cancel := context.WithTimeout(context.Background(), grace)
			execOn(kctx, p.t, p.host, killScript(p.pidfile), nil, io.Discard, io.Discard)
			cancel()
		}
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		p.cancel()
		<-p.done
	})
}

// AbandonAfter is how long a command whose context has ended may take to
// return before its host is taken as gone. A node that lost its power or
// its network sends no reset, and an SSH session on it would wait for the
// kernel to give up on the connection (many minutes) whatever its context.
const AbandonAfter = 10 * time.Second

// ErrNoAnswer is a command given up on: its host stopped answering.
var ErrNoAnswer = errors.New("no answer: the host stopped answering")

// execOn is t.Exec, returning at the latest AbandonAfter after ctx ends; the
// transport's call is then left to end on its own, writing to writers
// that are safe for it (bounded, locked) or discarded.
func execOn(ctx context.Context, t runner.Runner, host, script string, stdin io.Reader, stdout, stderr io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- t.Exec(ctx, host, script, stdin, stdout, stderr) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(AbandonAfter):
		return fmt.Errorf("%s: %w (%v)", host, ErrNoAnswer, context.Cause(ctx))
	}
}

// run runs a short command to completion on a host and returns its stdout
// (more than runner.MaxRunOutput stops it with runner.ErrTooMuchOutput).
func run(ctx context.Context, t runner.Runner, host, script string) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := &capped.Buffer{Max: runner.MaxRunOutput, Err: runner.ErrTooMuchOutput, OnFull: func() { cancel(runner.ErrTooMuchOutput) }}
	errb := &capped.Buffer{Max: 64 << 10}
	err := execOn(ctx, t, host, script, nil, out, errb)
	if out.Overflowed() {
		return string(out.Bytes()), fmt.Errorf("%s: %w: stdout passed %d MiB", host, runner.ErrTooMuchOutput, runner.MaxRunOutput>>20)
	}
	if err != nil {
		if msg := strings.TrimSpace(string(errb.Bytes())); msg != "" {
			return string(out.Bytes()), fmt.Errorf("%w: %s", err, firstLine(msg))
		}
	}
	return string(out.Bytes()), err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
