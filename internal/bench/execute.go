package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// Step statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusTimeout     = "timeout"
	StatusInterrupted = "interrupted"
	StatusSkipped     = "skipped"
)

// CmdResult is one command as it ran: what, where, and everything it printed.
type CmdResult struct {
	Host      string            `json:"host"`
	Role      string            `json:"role"`
	Command   string            `json:"command"`
	Argv      []string          `json:"argv"`
	Env       []Var             `json:"env,omitempty"`
	Group     string            `json:"group,omitempty"`
	ExitCode  int               `json:"exit_code"`
	Error     string            `json:"error,omitempty"`
	ElapsedMS int64             `json:"elapsed_ms"` // until it ended (until it was recorded, if it had not)
	Stdout    string            `json:"stdout"`
	Stderr    string            `json:"stderr,omitempty"`
	Files     map[string]string `json:"files,omitempty"`
}

// StepResult is one step as it ran.
type StepResult struct {
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	Tool       string      `json:"tool"`
	Rails      []string    `json:"rails,omitempty"`
	Collective string      `json:"collective,omitempty"`
	Status     string      `json:"status"`
	Error      string      `json:"error,omitempty"`
	Commands   []CmdResult `json:"commands"`
	// Counters are the interface and RDMA port counters of the step's
	// rails on both ends, before and after it.
	Counters []Counter `json:"counters,omitempty"`
	// State is the GPU clocks, power and RoCE active MTU read on the
	// step's hosts while it ran (NCCL and RDMA steps).
	State []StateSample `json:"state,omitempty"`
}

// Executor runs a plan's steps through a transport and cleans up after each.
type Executor struct {
	T      runner.Runner
	RunDir string // scratch directory on every node (pid files, -J outputs)
	// ReadyTimeout bounds the wait for a server to listen (default 20 s).
	ReadyTimeout time.Duration
	// Grace is how long a stopped process gets before KILL (default 3 s).
	Grace time.Duration
	// Helper is a local sparkrig binary Prepare copies to HelperPath on
	// every host (the native TCP probe); "" copies nothing.
	Helper, HelperPath string

	seq     int
	keepers []keeper
	mu      sync.Mutex // keepers, as Prepare works on the hosts at once
}

// keeper is a session held open on a host for the whole run. When its
// stdin ends, because Cleanup closed it or because sparkrig died and its
// SSH session (or pipe) went with it, it stops what the pid files name
// and removes the scratch directory, helper copy included.
type keeper struct {
	stdin  *io.PipeWriter
	cancel context.CancelFunc
	done   chan struct{}
}

func (x *Executor) defaults() {
	if x.ReadyTimeout <= 0 {
		x.ReadyTimeout = 20 * time.Second
	}
	if x.Grace <= 0 {
		x.Grace = 3 * time.Second
	}
	if x.RunDir == "" {
		x.RunDir = "/tmp/sparkrig-bench"
	}
}

// Prepare creates the scratch directory on every host and leaves a keeper
// there that removes it if sparkrig is gone before Cleanup.
func (x *Executor) Prepare(ctx context.Context, hosts []string) map[string]error {
	x.defaults()
	errs := map[string]error{}
	var mu sync.Mutex
	remote.FanOut{}.Each(ctx, hosts, func(ctx context.Context, _ int, h string) error {
		err := x.prepare(ctx, h)
		if err != nil {
			mu.Lock()
			errs[h] = err
			mu.Unlock()
		}
		return err
	})
	return errs
}

// prepare creates the scratch directory on one host, starts its keeper
// and copies the helper there after checking it can run there.
func (x *Executor) prepare(ctx context.Context, host string) error {
	arch, err := run(ctx, x.T, host, "mkdir -p "+shell.QuoteIfNeeded(x.RunDir)+" && uname -m")
	if err != nil {
		return fmt.Errorf("create %s on %s: %w", x.RunDir, host, err)
	}
	x.keep(host)
	if x.Helper == "" {
		return nil
	}
	if want := goarch(strings.TrimSpace(arch)); want != runtime.GOARCH {
		return fmt.Errorf("%s is %s but this sparkrig is built for %s: install sparkrig for %s there and pass --probe-path", host, strings.TrimSpace(arch), runtime.GOARCH, want)
	}
	f, err := os.Open(x.Helper)
	if err != nil {
		return err
	}
	defer f.Close()
	dst := shell.QuoteIfNeeded(x.HelperPath)
	script := "cat >" + dst + ".tmp && chmod 755 " + dst + ".tmp && mv " + dst + ".tmp " + dst
	errb := &capped.Buffer{Max: 64 << 10}
	if err := execOn(ctx, x.T, host, script, f, io.Discard, errb); err != nil {
		return fmt.Errorf("copy the probe helper to %s:%s: %w %s", host, x.HelperPath, err, strings.TrimSpace(string(errb.Bytes())))
	}
	return nil
}

func goarch(uname string) string {
	switch uname {
	case "x86_64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	}
	return uname
}

func (x *Executor) skipTool(tool string) bool { return x.HelperPath != "" && tool == x.HelperPath }

// keep starts the keeper on host: it reads stdin to its end (ignoring the
// hangup of a dropped session), then cleans up.
func (x *Executor) keep(host string) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	k := keeper{stdin: pw, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		execOn(ctx, x.T, host, "trap '' HUP PIPE; while read -r _; do :; done; "+x.cleanupScript(), pr, io.Discard, io.Discard)
		pr.Close()
	}()
	x.mu.Lock()
	x.keepers = append(x.keepers, k)
	x.mu.Unlock()
}

// cleanupScript kills what the pid files in the scratch directory name and
// removes the directory.
func (x *Executor) cleanupScript() string {
	dir := shell.QuoteIfNeeded(x.RunDir)
	return `for p in ` + dir + `/*.pid; do [ -f "$p" ] || continue; c=$(cat "$p"); [ -n "$c" ] && { kill -KILL "-$c" 2>/dev/null || kill -KILL "$c" 2>/dev/null; }; done; rm -rf ` + dir
}

// Cleanup stops anything a run left on the hosts (by the pid files in the
// scratch directory), removes the directory and ends the keepers.
func (x *Executor) Cleanup(hosts []string) {
	x.defaults()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	remote.FanOut{}.Each(ctx, hosts, func(ctx context.Context, _ int, h string) error {
		_, err := run(ctx, x.T, h, x.cleanupScript())
		return err
	})
	for _, k := range x.keepers {
		k.stdin.Close()
	}
	for _, k := range x.keepers {
		select {
		case <-k.done:
		case <-ctx.Done():
		}
		k.cancel()
		<-k.done
	}
	x.keepers = nil
}

type started struct {
	cmd            Cmd
	p              *proc
	stdout, stderr *syncBuffer
	ready          chan string // the wrapper's readiness line
	begin          time.Time
}

// Run runs one step: servers, readiness, clients, then stops every process
// it started whatever happened. ctx ending (Ctrl-C) interrupts the step.
func (x *Executor) Run(ctx context.Context, s Step) StepResult {
	x.defaults()
	res := StepResult{ID: s.ID, Kind: s.Kind, Tool: s.Tool, Rails: s.Rails, Collective: s.Collective, Status: StatusOK}
	var all []*started
	defer func() { x.stopAll(all) }()

	tctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	for _, c := range s.Servers {
		st := x.start(tctx, c)
		all = append(all, st)
	}
	var err error
	for _, st := range all {
		if err = x.waitReady(tctx, st); err != nil {
			break
		}
	}
	if err == nil {
		var clients []*started
		for _, c := range s.Clients {
			st := x.start(tctx, c)
			all = append(all, st)
			clients = append(clients, st)
		}
		if grouped(s.Clients) {
			err = x.waitGroups(tctx, clients)
		} else {
			err = waitAll(tctx, clients)
		}
	}
	x.stopAll(all)
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = StatusInterrupted, "interrupted"
	case tctx.Err() != nil:
		res.Status, res.Error = StatusTimeout, fmt.Sprintf("did not finish within %s", s.Timeout)
	case err != nil:
		res.Status, res.Error = StatusFailed, err.Error()
	}
	for _, st := range all {
		res.Commands = append(res.Commands, x.record(st))
	}
	return res
}

func (x *Executor) start(ctx context.Context, c Cmd) *started {
	x.seq++
	pidfile := path.Join(x.RunDir, strconv.Itoa(x.seq)+"-"+c.Role+".pid")
	st := &started{cmd: c, stdout: &syncBuffer{}, stderr: &syncBuffer{}, ready: make(chan string, 1), begin: time.Now()}
	st.p = start(ctx, x.T, c, pidfile, st.stdout, &markerFilter{w: st.stderr, found: st.ready})
	return st
}

// waitReady waits until a server listens on its port (the wrapper watches
// it on the host), or a short fixed delay when listening cannot be seen
// (rdma_cm uses no TCP port; a host without ss).
func (x *Executor) waitReady(ctx context.Context, st *started) error {
	if st.cmd.ListenPort == 0 {
		return sleepOrDone(ctx, st, 1500*time.Millisecond)
	}
	timer := time.NewTimer(x.ReadyTimeout)
	defer timer.Stop()
	select {
	case m := <-st.ready:
		if m == readyUnknown {
			return sleepOrDone(ctx, st, 1500*time.Millisecond)
		}
		return nil
	case <-st.p.done:
		return fmt.Errorf("%s server on %s exited before listening: %s", st.cmd.Argv[0], st.cmd.Host, lastLine(st.stderr.String(), st.stdout.String()))
	case <-timer.C:
		return fmt.Errorf("%s server on %s did not listen on port %d within %s", st.cmd.Argv[0], st.cmd.Host, st.cmd.ListenPort, x.ReadyTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sleepOrDone(ctx context.Context, st *started, d time.Duration) error {
	select {
	case <-time.After(d):
		if st.p.exited() {
			return fmt.Errorf("%s server on %s exited early: %s", st.cmd.Argv[0], st.cmd.Host, lastLine(st.stderr.String(), st.stdout.String()))
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitAll waits for every client; the first failure is the step's error
// and ends the wait at once: the others (ranks of one collective waiting on
// a dead peer) would otherwise hang until the step's timeout.
func waitAll(ctx context.Context, cs []*started) error {
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func() {
			err := c.p.wait(ctx)
			if err != nil && ctx.Err() == nil {
				err = fmt.Errorf("%s on %s: %w: %s", c.cmd.Argv[0], c.cmd.Host, err, lastLine(c.stderr.String(), c.stdout.String()))
			}
			errs <- err
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
	return nil
}

// grouped reports whether a step's clients are independent tests.
func grouped(cs []Cmd) bool {
	for _, c := range cs {
		if c.Group != "" {
			return true
		}
	}
	return false
}

// waitGroups waits for every client; one that fails stops the others of
// its group at once (a rank whose peer died would wait for it), and the
// other groups run on. It returns the first failure, after all ended.
func (x *Executor) waitGroups(ctx context.Context, cs []*started) error {
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func() {
			err := c.p.wait(ctx)
			if err != nil && ctx.Err() == nil {
				err = fmt.Errorf("%s on %s: %w: %s", c.cmd.Argv[0], c.cmd.Host, err, lastLine(c.stderr.String(), c.stdout.String()))
				for _, o := range cs {
					if o != c && c.cmd.Group != "" && o.cmd.Group == c.cmd.Group {
						go o.p.stop(x.Grace)
					}
				}
			}
			errs <- err
		}()
	}
	var first error
	for range cs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// stopAll stops every process in parallel; it is idempotent.
func (x *Executor) stopAll(all []*started) {
	var wg sync.WaitGroup
	for _, st := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.p.stop(x.Grace)
		}()
	}
	wg.Wait()
}

func (x *Executor) record(st *started) CmdResult {
	r := CmdResult{Host: st.cmd.Host, Role: st.cmd.Role, Group: st.cmd.Group, Command: CommandLine(st.cmd), Argv: st.cmd.Argv, Env: st.cmd.Env,
		ElapsedMS: time.Since(st.begin).Milliseconds(), Stdout: st.stdout.String(), Stderr: st.stderr.String()}
	if st.p.exited() {
		r.ElapsedMS = st.p.ended.Sub(st.begin).Milliseconds()
	}
	if err := st.p.err; err != nil {
		r.ExitCode, r.Error = exitCode(err), err.Error()
	}
	if len(st.cmd.Fetch) > 0 {
		r.Files = x.fetch(st.cmd)
	}
	return r
}

// fetch reads back and removes the files a command wrote on its host.
func (x *Executor) fetch(c Cmd) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files := map[string]string{}
	for _, f := range c.Fetch {
		out, err := run(ctx, x.T, c.Host, "cat "+shell.QuoteIfNeeded(f)+" && rm -f "+shell.QuoteIfNeeded(f))
		if err == nil {
			files[f] = out
		}
	}
	return files
}

// exitCode extracts a process exit status from an error, -1 when there is none.
func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	var es interface{ ExitStatus() int }
	if errors.As(err, &es) {
		return es.ExitStatus()
	}
	return -1
}

func lastLine(texts ...string) string {
	for _, t := range texts {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if i := strings.LastIndexByte(t, '\n'); i >= 0 {
			return t[i+1:]
		}
		return t
	}
	return "no output"
}

// markerFilter passes stderr through, minus the wrapper's readiness line,
// which it reports on found.
type markerFilter struct {
	w     io.Writer
	found chan string
	line  []byte
	done  bool
}

func (f *markerFilter) Write(p []byte) (int, error) {
	if f.done {
		return f.w.Write(p)
	}
	n := len(p)
	f.line = append(f.line, p...)
	for {
		i := bytes.IndexByte(f.line, '\n')
		if i < 0 {
			if len(f.line) > 4096 { // a long line with no newline: the command's own output
				f.done = true
				_, err := f.w.Write(f.line)
				return n, err
			}
			return n, nil
		}
		l := string(f.line[:i])
		f.line = f.line[i+1:]
		if l == readyMarker || l == readyUnknown {
			f.found <- l
			f.done = true
			_, err := f.w.Write(f.line)
			return n, err
		}
		if _, err := f.w.Write([]byte(l + "\n")); err != nil {
			return n, err
		}
	}
}

// MaxCmdOutput bounds what is kept of each of a command's streams: its
// first and last halves, where a tool's banner and its results are.
const MaxCmdOutput = 16 << 20

// syncBuffer keeps a command's output, its middle left out past
// MaxCmdOutput, safe for one writer and concurrent readers.
type syncBuffer struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte // once head is full: the latest bytes, compacted to MaxCmdOutput/2 now and then
	dropped int64
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	const half = MaxCmdOutput / 2
	n := len(p)
	if room := half - len(s.head); room > 0 {
		k := min(room, len(p))
		s.head, p = append(s.head, p[:k]...), p[k:]
	}
	if len(p) >= half {
		s.dropped += int64(len(s.tail) + len(p) - half)
		s.tail, p = append(s.tail[:0], p[len(p)-half:]...), nil
	}
	s.tail = append(s.tail, p...)
	if len(s.tail) >= 2*half {
		cut := len(s.tail) - half
		s.dropped += int64(cut)
		s.tail = append(s.tail[:0], s.tail[cut:]...)
	}
	return n, nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tail := s.tail
	dropped := s.dropped
	if over := len(tail) - MaxCmdOutput/2; over > 0 {
		tail, dropped = tail[over:], dropped+int64(over)
	}
	if dropped == 0 {
		return string(s.head) + string(tail)
	}
	return string(s.head) + fmt.Sprintf("\n[sparkrig: %d bytes of output left out]\n", dropped) + string(tail)
}

var _ io.Writer = (*syncBuffer)(nil)
