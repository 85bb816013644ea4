package capture

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Options tune a local capture.
type Options struct {
	// ToolVersion is written to the manifest.
	ToolVersion string
	// Parallel bounds how many commands run at once (8 when zero).
	Parallel int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Local captures this machine's evidence into memory. It never fails as a
// whole: every item that could not be read is recorded with its status.
func Local(ctx context.Context, opt Options) *snapshot.Snapshot {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	start := time.Now()
	host, _ := os.Hostname()
	s := snapshot.New(host)
	s.Manifest.CapturedAt = now().UTC()
	s.Manifest.ToolVersion = opt.ToolVersion
	s.Manifest.Capturer = "sparkrig"
	s.Manifest.OS = runtime.GOOS
	s.Manifest.Arch = runtime.GOARCH
	if u, err := user.Current(); err == nil {
		s.Manifest.User = u.Username
	}

	// Commands run in the background while files are read: the slowest
	// command (nvidia-smi) bounds the capture, not the sum.
	runs := expandCommands(Commands, physicalNetdevs())
	results := make([]cmdResult, len(runs))
	var wg sync.WaitGroup
	par := opt.Parallel
	if par <= 0 {
		par = 8
	}
	sem := make(chan struct{}, par)
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runCommand(ctx, r)
		}()
	}
	for _, p := range Files {
		capturePath(s, p)
	}
	wg.Wait()
	for _, res := range results {
		s.AddCmd(res.item, res.stdout, res.stderr)
	}
	s.Manifest.DurationMS = time.Since(start).Milliseconds()
	return s
}

// physicalNetdevs lists interfaces backed by a device (not lo, bridges, veths).
func physicalNetdevs() []string {
	names, _ := filepath.Glob("/sys/class/net/*/device")
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, filepath.Base(filepath.Dir(n)))
	}
	return out
}

// run is one concrete command: a Command with its Each member substituted.
type run struct {
	Command
	id   string
	argv []string
}

// expandCommands substitutes Each members; the result keeps Commands' order.
func expandCommands(cmds []Command, netdevs []string) []run {
	var out []run
	for _, c := range cmds {
		if c.Each != EachNetdev {
			out = append(out, run{Command: c, id: c.ID, argv: c.Argv})
			continue
		}
		for _, nd := range netdevs {
			out = append(out, run{Command: c, id: c.ID + "." + nd, argv: c.argvFor(nd)})
		}
	}
	return out
}

// argvFor is an EachNetdev command's argv for one interface.
func (c Command) argvFor(netdev string) []string {
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		argv[i] = strings.ReplaceAll(a, "{netdev}", netdev)
	}
	return argv
}

// capturePath reads one Files entry into s.
func capturePath(s *snapshot.Snapshot, p Path) {
	matches := []string{p.Glob}
	if strings.ContainsAny(p.Glob, "*?[") {
		matches, _ = filepath.Glob(p.Glob)
		if len(matches) == 0 {
			// A directory we may not list (NetworkManager's is root-only)
			// is denied, not empty.
			status, why := snapshot.StatusMissing, "no match"
			if _, err := os.ReadDir(globDir(p.Glob)); errors.Is(err, fs.ErrPermission) {
				status, why = snapshot.StatusDenied, "cannot list "+globDir(p.Glob)+": permission denied"
			}
			s.AddMissing(kindOf(p), p.Glob, status, why)
			return
		}
	}
	for _, m := range matches {
		switch {
		case p.Link:
			captureLink(s, m)
		case p.NameOnly:
			captureName(s, m)
		default:
			captureFile(s, m)
		}
	}
}

// globDir is the longest leading directory of a pattern without metacharacters.
func globDir(glob string) string {
	d := filepath.Dir(glob)
	for strings.ContainsAny(d, "*?[") {
		d = filepath.Dir(d)
	}
	return d
}

// kindOf is the manifest kind of a Files entry's items (local and script capture).
func kindOf(p Path) string {
	if p.Link {
		return snapshot.KindLink
	}
	return snapshot.KindFile
}

func captureLink(s *snapshot.Snapshot, p string) {
	t, err := os.Readlink(p)
	if err != nil {
		s.AddMissing(snapshot.KindLink, p, statusOf(err), errText(err))
		return
	}
	s.AddLink(p, t)
}

func captureName(s *snapshot.Snapshot, p string) {
	st, err := os.Lstat(p)
	switch {
	case err != nil:
		s.AddMissing(snapshot.KindFile, p, statusOf(err), errText(err))
	case st.Mode()&fs.ModeSymlink != 0:
		captureLink(s, p)
	default:
		s.AddFile(p, []byte{})
	}
}

func captureFile(s *snapshot.Snapshot, p string) {
	// O_NONBLOCK: a FIFO (say under /etc/netplan) opens at once and is
	// refused below, instead of blocking the capture until it is killed.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		s.AddMissing(snapshot.KindFile, p, statusOf(err), errText(err))
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		s.AddMissing(snapshot.KindFile, p, snapshot.StatusError, "not a regular file")
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		// sysfs answers EINVAL for attributes that have no value now
		// (speed of a link that is down, an empty GID entry).
		s.AddMissing(snapshot.KindFile, p, statusOf(err), errText(err))
		return
	}
	truncated := len(b) > MaxFileBytes
	if truncated {
		b = b[:MaxFileBytes]
	}
	addFile(s, p, b)
	if truncated {
		s.Manifest.Items[len(s.Manifest.Items)-1].Error = "truncated at 4 MiB"
	}
}

// statusOf maps an I/O error to a manifest status.
func statusOf(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.EINVAL):
		return snapshot.StatusMissing
	case errors.Is(err, fs.ErrPermission):
		return snapshot.StatusDenied
	}
	return snapshot.StatusError
}

// errText is the error without the path, which the manifest already names.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

type cmdResult struct {
	item           snapshot.Item
	stdout, stderr []byte
}

// runCommand runs one command under its timeout with a C locale.
func runCommand(ctx context.Context, r run) cmdResult {
	it := snapshot.Item{Name: r.id, Argv: r.argv, Status: snapshot.StatusOK}
	if r.Local != nil {
		start := time.Now()
		out := r.Local()
		it.DurationMS = time.Since(start).Milliseconds()
		return cmdResult{item: it, stdout: out}
	}
	path, err := exec.LookPath(r.argv[0])
	if err != nil {
		it.Status, it.Error = snapshot.StatusMissing, r.argv[0]+" not found"
		return cmdResult{item: it}
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, r.argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 500 * time.Millisecond
	var stdout, stderr boundedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	it.DurationMS = time.Since(start).Milliseconds()
	out := stdout.b.Bytes()
	if r.Filter != "" {
		out = filterLines(out, regexp.MustCompile(r.Filter))
	}
	if r.Tail > 0 {
		out = tailLines(out, r.Tail)
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		it.Status, it.Error = snapshot.StatusTimedOut, "timed out after "+timeout.String()
	case errors.As(err, &ee):
		it.ExitCode = ee.ExitCode()
	case err != nil:
		it.Status, it.Error = snapshot.StatusError, err.Error()
	}
	if stdout.over || stderr.over {
		it.Error = strings.TrimPrefix(it.Error+"; output truncated at 16 MiB", "; ")
	}
	return cmdResult{item: it, stdout: out, stderr: stderr.b.Bytes()}
}

// boundedBuffer keeps the first MaxOutputBytes written and drops the rest.
type boundedBuffer struct {
	b    bytes.Buffer
	over bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := MaxOutputBytes - w.b.Len(); len(p) > room {
		w.over = true
		w.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.b.Write(p)
}

// filterLines keeps the lines that match re.
func filterLines(b []byte, re *regexp.Regexp) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 && re.Match(line) {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// tailLines keeps the last n lines.
func tailLines(b []byte, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return b
	}
	return bytes.Join(lines[len(lines)-n:], nil)
}
