// Package acquire gets a node's evidence the one way every command uses:
// over SSH through one bounded fan-out with per-host and global deadlines
// (and, where the nodes face each other, the don't-fragment ping mesh, kept
// in the snapshot as active evidence), from snapshot files, or from this
// machine. Each node's facts are read once, here.
package acquire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Node is one node's evidence, or why it could not be had.
type Node struct {
	Host   string
	Source string // "live", a snapshot path, or "ssh"
	Snap   *snapshot.Snapshot
	// Facts are read from Snap once, where it is captured.
	Facts *facts.Node
	Err   error
	// Status is a report.Host* status when Err is set.
	Status string
	// Pings are the DF-ping mesh probes sent from this host; Meshed says
	// the mesh ran (over SSH only).
	Pings  []facts.PingResult
	Meshed bool
}

// Options bound and describe a remote acquisition.
type Options struct {
	// Runner reaches the nodes (SSH, srun, kubectl); the caller closes it.
	// Without one, an SSH runner over Dialer serves this acquisition alone.
	Runner runner.Runner
	Dialer *remote.Dialer
	// Parallel bounds the hosts captured at once; HostTimeout each host,
	// Timeout the whole run.
	Parallel    int
	HostTimeout time.Duration
	Timeout     time.Duration
	// NoPing skips the ping mesh.
	NoPing bool
	// PingPlan, given the captured nodes' facts, lists whom each host pings
	// (cluster.PlanPings); without one the mesh does not run.
	PingPlan func(nodes []*facts.Node) map[string][]facts.PingTarget
	// Keep says which of a node's evidence (snapshot storage keys) is held
	// once its facts are read (fix.Evidence: what the fix plan reads); the
	// rest is dropped as each node arrives, so a run holds facts, not
	// captures. nil holds everything (a command that writes snapshots).
	Keep func(key string) bool
	// KeepPaths are the files whose presence or absence the reader of the
	// kept evidence must still tell (fix.Paths()): the manifest's items of
	// their directories are kept with them.
	KeepPaths []string
	// Arrived, when set, hears each node as its capture is read (facts
	// read, evidence whole), from the worker that read it, before Keep
	// drops any of it; it may take the node's evidence away (set Snap to
	// nil: a command that writes each node's snapshot as it comes). A node
	// the run gave up on is not heard.
	Arrived func(n *Node)
	// Sudo captures as root (directly, or through sudo -n: never a password
	// prompt), for commands that must read root-only files (fix).
	Sudo        bool
	ToolVersion string
	// Progress, a terminal, shows "capturing N hosts: ..." while it runs.
	Progress io.Writer
	// Script replaces the whole capture script (capture.ScriptOnly): a
	// command that needs a few facts.
	Script string
}

// Remote captures every host through o.Runner (over SSH by default). A
// host that cannot be reached or captured is a Node with Err set; the
// others are kept.
func Remote(ctx context.Context, hosts []string, o Options) []Node {
	r := o.Runner
	if r == nil {
		s := &runner.SSH{Dialer: o.Dialer}
		defer s.Close()
		r = s
	}
	source := transportName(r)
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, fmt.Errorf("the whole run's deadline (--timeout %s) passed", o.Timeout))
	defer cancel()
	caps := make([]Node, len(hosts))
	var mu sync.Mutex
	closed := false // set once the fan-out is over: late finishers must not write caps
	prog := newProgress(o.Progress, "capturing", len(hosts))
	script := o.Script
	if script == "" {
		script = capture.Script()
	}
	keep := memoKeep(o.Keep)
	fan := remote.FanOut{Parallel: o.Parallel, PerHost: o.HostTimeout, Progress: prog.update}
	results := fan.Each(ctx, hosts, func(ctx context.Context, i int, host string) error {
		s, err := captureOne(ctx, r, host, script, o.ToolVersion, o.Sudo)
		if len(hosts) > HoldConnections {
			release(r, host)
		}
		n := Node{Host: host, Source: source, Err: err, Status: Status(err)}
		if err == nil {
			// read here, by the worker, as the node arrives: the run holds
			// its facts and what keep names, never every raw capture
			n.Snap, n.Facts = s, facts.FromSnapshot(s)
		}
		if o.Arrived != nil {
			o.Arrived(&n)
		}
		if keep != nil && n.Snap != nil {
			n.Snap = Reduce(n.Snap, keep, o.KeepPaths)
		}
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			caps[i] = n
		}
		return err
	})
	prog.finish()
	mu.Lock()
	closed = true // a host the fan-out gave up on must not write caps while the mesh reads it
	for i, res := range results {
		if caps[i].Host == "" { // the fan-out gave up on it before it answered
			caps[i] = Node{Host: hosts[i], Source: source, Err: res.Err, Status: Status(res.Err)}
		}
	}
	mu.Unlock()
	if !o.NoPing && o.PingPlan != nil {
		pingMesh(ctx, o, r, caps)
	}
	for i := range caps {
		if caps[i].Snap != nil && caps[i].Meshed && (o.Keep == nil || o.Keep(snapshot.CmdKey(facts.PingEvidence, "stdout"))) {
			caps[i].Snap.AddCmd(snapshot.Item{Name: facts.PingEvidence, Argv: []string{"sparkrig", "ping-mesh"}}, facts.EncodePings(caps[i].Pings), nil)
		}
	}
	return caps
}

// Reduce is what a run keeps of a snapshot once its facts are read: the
// data keep accepts, and of the manifest the items keep names, the items
// in the directories of paths and of the kept files (what a listing of
// them returns) and the glob items (what says a file was looked for), so a
// reader of the kept files can still tell a file that is absent from one
// not captured. The rest, and the lookup index the facts were read
// through, are dropped: held for ten thousand nodes, they were most of a
// run's memory.
func Reduce(s *snapshot.Snapshot, keep func(key string) bool, paths []string) *snapshot.Snapshot {
	itemKey := func(it snapshot.Item) string {
		if it.Kind == snapshot.KindCmd {
			return snapshot.CmdKey(it.Name, "stdout")
		}
		return snapshot.FileKey(it.Name)
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		dirs[dirOf(p)] = true
	}
	kept := make([]bool, len(s.Manifest.Items)) // keep asked once an item
	for i, it := range s.Manifest.Items {
		kept[i] = keep(itemKey(it))
		if it.Kind != snapshot.KindCmd && kept[i] {
			dirs[dirOf(it.Name)] = true
		}
	}
	out := &snapshot.Snapshot{Manifest: s.Manifest, Data: map[string][]byte{}, Source: s.Source}
	out.Manifest.Items = nil
	for i, it := range s.Manifest.Items {
		if kept[i] || it.Kind != snapshot.KindCmd && (dirs[dirOf(it.Name)] || strings.ContainsAny(it.Name, "*?[")) {
			out.Manifest.Items = append(out.Manifest.Items, it)
		}
	}
	out.Manifest.Items = slices.Clip(out.Manifest.Items)
	for k, v := range s.Data {
		if keep(k) {
			out.Data[k] = v
		}
	}
	return out
}

// dirOf is path.Dir(p), without cleaning p again where it is clean.
func dirOf(p string) string {
	if snapshot.Abs(p) != p {
		return path.Dir(p)
	}
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// memoKeep answers keep once per storage key: every node's capture has
// the same keys, so a run asks keep a few hundred times, not a few hundred
// times per node. The memo is bounded (a hostile node may invent keys).
func memoKeep(keep func(string) bool) func(string) bool {
	if keep == nil {
		return nil
	}
	const most = 4096
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(k string) bool {
		mu.Lock()
		v, ok := seen[k]
		mu.Unlock()
		if ok {
			return v
		}
		v = keep(k)
		mu.Lock()
		if len(seen) < most {
			seen[k] = v
		}
		mu.Unlock()
		return v
	}
}

// HoldConnections is the most hosts whose connections an acquisition
// leaves open in the runner for the commands that follow (a benchmark,
// qualify, fix's changes reuse them). Over more, each host's connection is
// handed back once it is captured, so the fan-out holds connections for the
// hosts it is working on, not for every host it has reached: at thousands
// of hosts, their buffers were most of the run's memory.
const HoldConnections = 128

// release hands back host's connection where the runner keeps one (SSH);
// a later command on the host dials again.
func release(r runner.Runner, host string) {
	if rel, ok := r.(interface{ Release(host string) }); ok {
		rel.Release(host)
	}
}

// transportName is how a runner is named as a node's source: "ssh",
// "srun", "kubectl".
func transportName(r runner.Runner) string {
	if s, ok := r.(fmt.Stringer); ok {
		return s.String()
	}
	return "ssh"
}

// captureOne runs the capture script on host.
func captureOne(ctx context.Context, r runner.Runner, host, script, toolVersion string, sudo bool) (*snapshot.Snapshot, error) {
	start := time.Now()
	shell := runner.Shell
	if sudo {
		shell = runner.RootShell
	}
	meta := capture.ScriptMeta{Host: host, ToolVersion: toolVersion, CapturedAt: start}
	var s *snapshot.Snapshot
	stderr, code, err := runner.Stream(ctx, r, host, shell, strings.NewReader(script), func(rd io.Reader) error {
		var err error
		s, err = capture.ReadScriptOutput(rd, meta)
		return err
	})
	if s != nil {
		s.Manifest.DurationMS = time.Since(start).Milliseconds()
	}
	if s != nil && runner.Answered(err) {
		return s, nil // the capture was read whole; a check that failed on the node is in it
	}
	if err != nil && (errors.Is(err, remote.ErrTimeout) || errors.Is(err, remote.ErrInterrupted) || errors.Is(err, remote.ErrDropped) ||
		errors.Is(err, remote.ErrUnreachable) || errors.Is(err, remote.ErrHostKey) || errors.Is(err, remote.ErrAuth)) {
		return nil, err
	}
	if err == nil {
		err = errors.New("no capture came back")
	}
	var ee *runner.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("exit %d", ee.Exit)
	}
	if msg := strings.TrimSpace(string(stderr)); msg != "" {
		err = fmt.Errorf("%w (exit %d: %s)", err, code, firstLineOf(msg))
	}
	return nil, fmt.Errorf("%s: capture: %w", host, err)
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Status maps a capture error to the report's host status.
func Status(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, remote.ErrUnreachable), errors.Is(err, remote.ErrHostKey), errors.Is(err, remote.ErrAuth):
		return report.HostUnreachable
	}
	return report.HostFailed
}

// pingMesh runs the DF-ping mesh from every captured host whose rails face
// another captured host, through the runner that captured them.
func pingMesh(ctx context.Context, o Options, r runner.Runner, caps []Node) {
	var nodes []*facts.Node
	idx := map[string]int{}
	for i, c := range caps {
		if c.Facts != nil {
			nodes = append(nodes, c.Facts)
			idx[c.Host] = i
		}
	}
	if len(nodes) < 2 {
		return
	}
	plan := o.PingPlan(nodes)
	var from []string
	for _, n := range nodes {
		caps[idx[n.Host]].Meshed = true
		if len(plan[n.Host]) > 0 {
			from = append(from, n.Host)
		}
	}
	prog := newProgress(o.Progress, "ping mesh", len(from))
	fan := remote.FanOut{Parallel: o.Parallel, PerHost: 30 * time.Second, Progress: prog.update}
	var mu sync.Mutex
	done := false
	fan.Each(ctx, from, func(ctx context.Context, _ int, host string) error {
		i := idx[host]
		ts := plan[host]
		out, _, err := runner.Run(ctx, r, host, runner.Shell, strings.NewReader(capture.PingScript(ts)))
		if len(caps) > HoldConnections {
			release(r, host)
		}
		res := facts.ParsePingScript(ts, out)
		if runner.Answered(err) {
			err = nil // a probe that failed is in its own line
		}
		if err != nil {
			for j := range res {
				res[j].ErrText = "mesh did not finish: " + err.Error()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if !done {
			caps[i].Pings = res
		}
		return err
	})
	mu.Lock()
	done = true
	mu.Unlock()
	prog.finish()
}

// hostProgress draws "capturing 32 hosts: 12 done, 1 failed, 19 pending" on a
// terminal's stderr, from the start (all pending) until finish clears it,
// and nothing elsewhere.
type hostProgress struct {
	w     io.Writer
	what  string
	total int
	mu    sync.Mutex
	drawn bool
}

func newProgress(w io.Writer, what string, total int) *hostProgress {
	p := &hostProgress{what: what, total: total}
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // the line holds counts only: drawn on the terminal itself
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && total > 0 {
		p.w = f
		p.update(0, 0, total)
	}
	return p
}

func (p *hostProgress) update(done, failed, pending int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K%s %d hosts: %d done, %d failed, %d pending", p.what, p.total, done, failed, pending)
	p.drawn = true
}

func (p *hostProgress) finish() {
	if p.w != nil && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// Snapshots reads each path; a bad one is a Node with Err set (status
// bad-snapshot). The ping mesh a snapshot carries comes back with it. Once
// a snapshot's facts are read, only the data keep accepts is held (keep nil
// holds everything), so memory does not grow with the snapshots given.
func Snapshots(paths []string, keep func(key string) bool) []Node {
	out := make([]Node, 0, len(paths))
	for _, p := range paths {
		s, err := readWithDeadline(p)
		if err != nil {
			out = append(out, Node{Host: p, Source: p, Err: err, Status: report.HostBadSnapshot})
			continue
		}
		n := FromSnapshot(s, p)
		if keep != nil {
			size := s.Size()
			s.Release(keep)
			if size > 64<<20 {
				// Hand a large snapshot back before the next is read, or
				// the heap would hold two of them at the cap.
				runtime.GC()
			}
		}
		out = append(out, n)
	}
	return out
}

// snapshotDeadline bounds the reading of one snapshot: a file on a hung
// mount never returns from read(2), and must not hold up the others.
var snapshotDeadline = 2 * time.Minute

// readSnapshot reads one snapshot (a variable for tests that stall it).
var readSnapshot = snapshot.Read

// readWithDeadline is readSnapshot, given up on after snapshotDeadline (the
// read goes on in the background and its result is dropped).
func readWithDeadline(p string) (*snapshot.Snapshot, error) {
	type result struct {
		s   *snapshot.Snapshot
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := readSnapshot(p)
		done <- result{s, err}
	}()
	t := time.NewTimer(snapshotDeadline)
	defer t.Stop()
	select {
	case r := <-done:
		return r.s, r.err
	case <-t.C:
		return nil, fmt.Errorf("%s: still reading after %v (a stalled file system?); given up", p, snapshotDeadline)
	}
}

// FromSnapshot is the node a snapshot holds, its facts read once.
func FromSnapshot(s *snapshot.Snapshot, source string) Node {
	n := Node{Host: s.Manifest.Host, Source: source, Snap: s, Facts: facts.FromSnapshot(s)}
	if b, _, ok := s.Cmd(facts.PingEvidence); ok {
		if pings, err := facts.DecodePings(b); err == nil {
			n.Pings, n.Meshed = pings, true
		}
	}
	return n
}

// Local captures this machine.
func Local(ctx context.Context, toolVersion string, now func() time.Time) Node {
	s := capture.Local(ctx, capture.Options{ToolVersion: toolVersion, Now: now})
	return FromSnapshot(s, "live")
}
