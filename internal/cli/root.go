// Package cli wires sparkrig's commands. Main returns an exit status instead of
// calling os.Exit, so tests run the whole program in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
	"github.com/sparkrig/sparkrig/internal/version"
)

// Version is the running build's version (internal/version): the module
// version, or the checkout's commit and a dirty mark. Tests may pin it.
var Version = version.String()

// Env is what a command may touch of the outside world: its streams, whether
// stdout is a terminal, the clock and the environment.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdoutTTY is true when stdout is a terminal (colour, progress).
	StdoutTTY bool
	Now       func() time.Time
	Getenv    func(string) string

	// cleansUp is set by a command that must finish after an interrupt
	// (bench stops what it started on the nodes, within its own bounds).
	cleansUp atomic.Bool
	// daemon is set by a command that runs until stopped (the exporter):
	// SIGTERM is how it is stopped, so it ends with 0 when it shut down.
	daemon atomic.Bool
}

// interruptGrace is how long an interrupted command has to return on its
// own before Main ends it, whatever it is blocked on (a FIFO, a pipe that
// never closes, a file on a hung mount).
const interruptGrace = 800 * time.Millisecond

// exitError carries an exit status and a one-line message up to Main.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitf returns an error that makes Main print msg and exit with code.
func exitf(code int, format string, a ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, a...)}
}

// statusError ends a command with a status and no message: the report said it all.
func statusError(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}

// width is the terminal's width for text output: $COLUMNS, else the
// terminal's own size, else 100.
func width(env *Env) int {
	if n, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	w := env.Stdout
	if c, ok := w.(*countingWriter); ok {
		w = c.w
	}
	if f, ok := w.(*os.File); ok && env.StdoutTTY {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w >= 40 {
			return w
		}
	}
	return 100
}

// textOptions are the text renderers' settings for env's terminal: colour
// only on a terminal that has it (never with NO_COLOR, https://no-color.org,
// nor TERM=dumb), and its width.
func textOptions(env *Env) render.Options {
	return render.Options{Color: env.StdoutTTY && ansiTerminal(env), Width: width(env)}
}

// ansiTerminal reports whether the environment allows colour and cursor
// sequences: not with NO_COLOR set to anything, nor on a dumb terminal
// (Emacs shell buffers, some CI logs).
func ansiTerminal(env *Env) bool {
	return env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
}

// terminated is the cause signal.NotifyContext ends its context with on
// SIGTERM (os/signal: the signal's name, then " signal received").
var terminated = syscall.SIGTERM.String() + " signal received"

// Main runs sparkrig with args and returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Messages name hosts, files and what nodes said: every one is cleaned.
	stderr = sanitize.NewWriter(stderr)
	out := &countingWriter{w: stdout}
	env := &Env{Stdin: &interruptible{ctx: ctx, r: stdin}, Stdout: out, Stderr: stderr, Now: time.Now, Getenv: os.Getenv}
	if f, ok := stdout.(*os.File); ok {
		env.StdoutTTY = term.IsTerminal(int(f.Fd()))
	}
	root := newRootCmd(env)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, ended, err := execute(ctx, env, root)
	// SIGTERM is how a daemon is stopped: it ends well.
	if c := context.Cause(ctx); !ended && env.daemon.Load() && err == nil && c != nil && c.Error() == terminated {
		return ExitOK
	}
	if ended || ctx.Err() != nil {
		fmt.Fprintln(stderr, "sparkrig: interrupted")
		return ExitInterrupted
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			msg := sanitize.Plain(ee.msg)
			fmt.Fprintln(stderr, "sparkrig: "+msg)
			errorDocument(env, cmd, out, msg)
		}
		return ee.code
	}
	// Anything else is a usage error from flag or argument parsing (Cobra's
	// own words), named by the command it concerns.
	name := "sparkrig: "
	if cmd != nil && cmd.HasParent() {
		name += strings.TrimPrefix(cmd.CommandPath(), "sparkrig ") + ": "
	}
	msg := sanitize.Plain(err.Error())
	fmt.Fprintln(stderr, name+sanitize.Line(msg)+" (see --help)")
	errorDocument(env, cmd, out, strings.TrimPrefix(name, "sparkrig: ")+msg)
	return ExitUnknown
}

// execute runs root until it returns or, after an interrupt, until
// interruptGrace has passed (a read blocked in the kernel does not see the
// context): then ended is true and the process is to exit, unless the
// command cleans up the nodes first, which it is waited for.
func execute(ctx context.Context, env *Env, root *cobra.Command) (cmd *cobra.Command, ended bool, err error) {
	type result struct {
		cmd *cobra.Command
		err error
	}
	done := make(chan result, 1)
	go func() {
		cmd, err := root.ExecuteContextC(ctx)
		done <- result{cmd, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		select {
		case res = <-done:
		case <-time.After(interruptGrace):
			if !env.cleansUp.Load() {
				return nil, true, nil
			}
			res = <-done
		}
	}
	return res.cmd, false, res.err
}

// errorDocument answers a command that failed under --format json with the
// common envelope, its status unknown and the error line, unless the
// command already wrote its document.
func errorDocument(env *Env, cmd *cobra.Command, out *countingWriter, msg string) {
	if cmd == nil || out.n > 0 {
		return
	}
	if f := cmd.Flags().Lookup("format"); f == nil || f.Value.String() != "json" {
		return
	}
	r := newDocument(env, strings.TrimPrefix(cmd.CommandPath(), "sparkrig "))
	r.Status, r.Error = report.VerdictUnknown, msg
	render.JSON(out, r)
}

// countingWriter counts what a command wrote to stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "sparkrig",
		Short: "Audit, benchmark and configure multi-node NVIDIA GPU clusters (DGX Spark first)",
		Long: `sparkrig makes a multi-node GPU cluster run at the speed its hardware allows.

  doctor    audit this node, captured snapshots, or many nodes over SSH
  snapshot  capture a node's evidence to a directory or .tar.gz
  analyze   read nccl-tests, perftest, iperf3, nvbandwidth outputs and NCCL logs
  bench     run network and NCCL benchmarks correctly and judge the results
  qualify   measure every pair of nodes and name the bad node or cable
  triage    say why a running NCCL job is stuck or slow, and which rank and node
  report    render an HTML report from doctor, analyze and bench outputs
  fix       write the network and NCCL configuration a topology needs
  plan      say what a model will do on the cluster: fit, TTFT, TPOT, the TP that pays
  slurm     Slurm health check and prolog/epilog check of this node
  exporter  serve the audit as Prometheus metrics

` + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetHelpFunc(helpFunc(env))
	// --version has no -v: -v is --verbose where a command has it.
	root.Flags().Bool("version", false, "print sparkrig's version")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if !c.HasParent() {
			return exitf(ExitUnknown, "%v (see --help)", err)
		}
		return exitf(ExitUnknown, "%s: %v (see --help)", strings.TrimPrefix(c.CommandPath(), "sparkrig "), err)
	})
	root.AddCommand(
		newDoctorCmd(env),
		newSnapshotCmd(env),
		newAnalyzeCmd(env),
		newBenchCmd(env),
		newReportCmd(env),
		newFixCmd(env),
		newPlanCmd(env),
		newQualifyCmd(env),
		newTriageCmd(env),
		newSlurmCmd(env),
		newExporterCmd(env),
	)
	// Cobra's own help and completion commands, in the same voice as ours.
	// Its completion command takes its output stream as it is made.
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Short != "" && (c.Name() == "help" || c.Name() == "completion") {
			c.Short = strings.ToLower(c.Short[:1]) + c.Short[1:]
		}
	}
	refuseUnknownSubcommands(root)
	return root
}

// newHelpCmd is `sparkrig help [command]`: Cobra's own prints "Unknown
// help topic" and exits 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "help about any command",
		Long:  "Help provides help for any command in the application.",
		ValidArgsFunction: func(c *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() && strings.HasPrefix(s.Name(), prefix) {
					names = append(names, cobra.CompletionWithDesc(s.Name(), s.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return exitf(ExitUnknown, "help: unknown command %q (see sparkrig --help)", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// groupOnly marks a command that only groups others (bench gpu,
// completion): its usage has no line of its own.
const groupOnly = "sparkrig-group"

// refuseUnknownSubcommands makes every command that only groups others
// refuse a name it does not have: Cobra would print its help and exit 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, s := range c.Commands() {
		if !s.Runnable() && s.HasSubCommands() {
			s.Args = cobra.ArbitraryArgs
			s.Annotations = map[string]string{groupOnly: "true"}
			s.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return c.Help()
				}
				var names []string
				for _, sub := range c.Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				return exitf(ExitUnknown, "%s: unknown command %q (want %s)", strings.TrimPrefix(c.CommandPath(), "sparkrig "), args[0], strings.Join(names, ", "))
			}
		}
		refuseUnknownSubcommands(s)
	}
}

// interruptible reads r until ctx ends: a read blocked on a pipe or a FIFO
// that never closes (sleep 30 | sparkrig analyze -) returns when SIGINT or
// SIGTERM arrives, so the command ends with 130 at once. The reading starts
// on the first Read, one chunk ahead at most.
type interruptible struct {
	ctx  context.Context
	r    io.Reader
	once sync.Once
	pr   *io.PipeReader
}

func (i *interruptible) Read(p []byte) (int, error) {
	i.once.Do(func() {
		pr, pw := io.Pipe()
		i.pr = pr
		go func() {
			buf := make([]byte, 256<<10)
			for {
				n, err := i.r.Read(buf)
				if n > 0 {
					if _, werr := pw.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}()
		go func() {
			<-i.ctx.Done()
			pw.CloseWithError(i.ctx.Err())
		}()
	})
	return i.pr.Read(p)
}
