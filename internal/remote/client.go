package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/sanitize"
	"github.com/sparkrig/sparkrig/internal/shell"

	"golang.org/x/crypto/ssh"
)

// DefaultConnectTimeout bounds TCP connect plus SSH handshake when neither
// the options nor ssh_config's ConnectTimeout say otherwise.
const DefaultConnectTimeout = 10 * time.Second

// DefaultServerAlive is the keepalive interval and count when ssh_config
// sets none: a node that stops answering (power or network lost, no reset
// sent) is dropped after about 45 s instead of the kernel's many minutes,
// so every command on it ends with an error. OpenSSH's own default is no
// keepalive; its count default is 3.
const (
	DefaultServerAliveInterval = 15 * time.Second
	DefaultServerAliveCountMax = 3
)

// Options say how to reach hosts. The zero value behaves like plain `ssh`:
// ~/.ssh/config, $SSH_AUTH_SOCK, ~/.ssh/known_hosts, unknown keys refused.
type Options struct {
	// ConfigFile replaces ~/.ssh/config (like ssh -F).
	ConfigFile string
	// Home is the local home directory ("" = the current user's).
	Home string
	// AgentSock is the ssh-agent socket; "" means no agent. Callers pass
	// $SSH_AUTH_SOCK.
	AgentSock string
	// User, Port and IdentityFiles override ssh_config when set; User and
	// Port apply to the hosts named, not to their jump hosts (as ssh -l and
	// -p do not reach the hosts of -J).
	User          string
	Port          int
	IdentityFiles []string
	// KnownHosts replaces UserKnownHostsFile when set.
	KnownHosts []string
	// AcceptNewHostKeys records unknown host keys in known_hosts instead of
	// refusing them (StrictHostKeyChecking=accept-new). Changed keys are
	// always refused.
	AcceptNewHostKeys bool
	ConnectTimeout    time.Duration
	// Notify, when set, is told what the user should know although nothing
	// failed: a host key recorded in known_hosts, an ssh_config block that
	// is not evaluated. It may be called from many goroutines.
	Notify func(string)
}

// Dialer opens connections with resolved options; it is safe for concurrent use.
type Dialer struct {
	opt  Options
	conf *SSHConfig
}

// NewDialer reads the OpenSSH configuration once for many dials.
func NewDialer(o Options) (*Dialer, error) {
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	local := ""
	if u, err := user.Current(); err == nil {
		local = u.Username
	}
	conf, err := LoadSSHConfig(o.ConfigFile, o.Home, local)
	if err != nil {
		return nil, err
	}
	if o.Notify != nil {
		for _, w := range conf.Warnings {
			o.Notify(w)
		}
	}
	return &Dialer{opt: o, conf: conf}, nil
}

// Dial connects to one host ("[user@]host[:port]" or an ssh_config alias).
func Dial(ctx context.Context, host string, o Options) (*Client, error) {
	d, err := NewDialer(o)
	if err != nil {
		return nil, err
	}
	return d.Dial(ctx, host)
}

// Resolve returns how host would be reached, after ssh_config and overrides.
func (d *Dialer) Resolve(host string) (Endpoint, error) {
	e, err := d.resolveJump(host)
	if err != nil {
		return e, err
	}
	if d.opt.User != "" {
		e.User = d.opt.User
	}
	if d.opt.Port != 0 {
		e.Port = d.opt.Port
	}
	return e, nil
}

// resolveJump is Resolve without the User and Port overrides.
func (d *Dialer) resolveJump(host string) (Endpoint, error) {
	e, err := d.conf.Resolve(host)
	if err != nil {
		return e, err
	}
	if len(d.opt.IdentityFiles) > 0 {
		e.IdentityFiles = d.opt.IdentityFiles
	}
	if len(d.opt.KnownHosts) > 0 {
		e.KnownHosts = d.opt.KnownHosts
	}
	if d.opt.ConnectTimeout > 0 {
		e.ConnectTimeout = d.opt.ConnectTimeout
	}
	if e.ConnectTimeout == 0 {
		e.ConnectTimeout = DefaultConnectTimeout
	}
	if e.ServerAliveInterval == 0 {
		e.ServerAliveInterval = DefaultServerAliveInterval
	}
	if e.ServerAliveCountMax <= 0 {
		e.ServerAliveCountMax = DefaultServerAliveCountMax
	}
	return e, nil
}

// Client is an SSH connection to one host.
type Client struct {
	Host     string
	Endpoint Endpoint
	// Notes are non-fatal remarks (a key recorded in known_hosts, an
	// identity that could not be used).
	Notes []string

	c     *ssh.Client
	chain []*ssh.Client // jump hosts, closed after c

	closed  chan struct{} // ends the keepalive
	once    sync.Once
	deadMu  sync.Mutex
	deadWhy string // why the keepalive dropped the connection
}

// Dial connects to host, through its ProxyJump chain if any.
func (d *Dialer) Dial(ctx context.Context, host string) (*Client, error) {
	e, err := d.Resolve(host)
	if err != nil {
		return nil, err
	}
	hops, err := d.Route(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", host, err)
	}
	cl := &Client{Host: host, Endpoint: e}
	var via *ssh.Client
	for _, je := range hops {
		jc, err := d.connect(ctx, je, via, cl)
		if err != nil {
			cl.Close()
			return nil, fmt.Errorf("%s via jump host %s: %w", host, je.Name, err)
		}
		cl.chain = append(cl.chain, jc)
		via = jc
	}
	c, err := d.connect(ctx, e, via, cl)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("%s: %w", host, err)
	}
	cl.c = c
	cl.closed = make(chan struct{})
	if e.ServerAliveInterval > 0 {
		go cl.keepalive(e.ServerAliveInterval, e.ServerAliveCountMax)
	}
	return cl, nil
}

// keepalive asks the server for a sign of life every interval while the
// connection is open, and drops the connection after count asks in a row
// go unanswered: every session on it then ends with an error.
func (c *Client) keepalive(interval time.Duration, count int) {
	t := time.NewTicker(interval)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		answered := make(chan struct{})
		go func() {
			if _, _, err := c.c.SendRequest("keepalive@openssh.com", true, nil); err == nil {
				close(answered)
			}
		}()
		select {
		case <-answered:
			missed = 0
			continue
		case <-c.closed:
			return
		case <-time.After(interval):
		}
		if missed++; missed >= count {
			c.deadMu.Lock()
			c.deadWhy = fmt.Sprintf("the host stopped answering (%d keepalives unanswered in %s)", count, time.Duration(count)*interval)
			c.deadMu.Unlock()
			c.Close()
			return
		}
	}
}

// dropped says why the connection is gone when the keepalive dropped it.
func (c *Client) dropped(err error) string {
	c.deadMu.Lock()
	defer c.deadMu.Unlock()
	if c.deadWhy != "" || err == nil {
		return c.deadWhy
	}
	return err.Error()
}

// maxJumps bounds the jump hosts of one connection, so a ProxyJump loop in
// ssh_config fails instead of recursing.
const maxJumps = 16

// Route returns the jump hosts to pass through, in order, to reach e, the
// way OpenSSH does: the first jump host is reached through its own
// ProxyJump (recursively), and every later one through the hop before it.
func (d *Dialer) Route(e Endpoint) ([]Endpoint, error) {
	return d.route(e, nil)
}

func (d *Dialer) route(e Endpoint, seen []string) ([]Endpoint, error) {
	var hops []Endpoint
	for i, j := range e.ProxyJump {
		if len(seen) >= maxJumps {
			return nil, fmt.Errorf("ProxyJump loop or chain over %d hops: %s", maxJumps, strings.Join(append(seen, j), " → "))
		}
		seen = append(seen, j)
		je, err := d.resolveJump(j)
		if err != nil {
			return nil, fmt.Errorf("jump host %s: %w", j, err)
		}
		if i == 0 {
			before, err := d.route(je, seen)
			if err != nil {
				return nil, err
			}
			hops = append(hops, before...)
		}
		je.ProxyJump = nil
		hops = append(hops, je)
	}
	return hops, nil
}

// connect opens TCP (directly or through via) and does the SSH handshake,
// all bounded by the endpoint's connect timeout and ctx.
func (d *Dialer) connect(ctx context.Context, e Endpoint, via *ssh.Client, cl *Client) (*ssh.Client, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, e.ConnectTimeout, fmt.Errorf("the connect timeout (%s, ConnectTimeout) passed", e.ConnectTimeout))
	defer cancel()
	conn, err := dialTCP(ctx, e.Addr(), via)
	if err != nil {
		return nil, err
	}
	acceptNew := d.opt.AcceptNewHostKeys || e.StrictHostKeyChecking == "accept-new" || e.StrictHostKeyChecking == "no" || e.StrictHostKeyChecking == "off"
	hk, err := newHostKeyChecker(e.KnownHosts, e.GlobalKnownHosts, acceptNew, e.HashKnownHosts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	keyAddr := e.Addr()
	if e.HostKeyAlias != "" {
		keyAddr = joinHostPort(e.HostKeyAlias, e.Port)
	}
	var keyErr error
	sg, closeAgent, notes := signers(e, d.opt.AgentSock, d.opt.Home)
	defer closeAgent()
	if len(sg) == 0 {
		conn.Close()
		return nil, fmt.Errorf("%w: no usable key for %s@%s (%s)", ErrAuth, e.User, e.HostName, strings.Join(append(notes, "no agent keys and no readable identity file"), "; "))
	}
	cfg := &ssh.ClientConfig{
		User: e.User,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(sg...)},
		HostKeyCallback: func(_ string, r net.Addr, k ssh.PublicKey) error {
			keyErr = hk.check(keyAddr, r, k)
			return keyErr
		},
		HostKeyAlgorithms: hk.knownAlgorithms(keyAddr),
		Timeout:           e.ConnectTimeout,
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(conn, e.Addr(), cfg)
	if !stop() || err != nil {
		conn.Close()
		if keyErr != nil {
			return nil, keyErr
		}
		return nil, classifyHandshake(ctx, e, err, notes)
	}
	conn.SetDeadline(time.Time{})
	if hk.accepted != "" {
		cl.Notes = append(cl.Notes, hk.accepted)
		if d.opt.Notify != nil {
			d.opt.Notify(hk.accepted)
		}
	}
	cl.Notes = append(cl.Notes, notes...)
	return ssh.NewClient(sc, chans, reqs), nil
}

func dialTCP(ctx context.Context, addr string, via *ssh.Client) (net.Conn, error) {
	var conn net.Conn
	var err error
	if via != nil {
		conn, err = via.DialContext(ctx, "tcp", addr)
	} else {
		var nd net.Dialer
		conn, err = nd.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		if interrupted(ctx) {
			return nil, fmt.Errorf("%w: connect to %s did not finish", ErrInterrupted, addr)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: connect to %s did not finish: %v", ErrUnreachable, addr, deadlineWhy(ctx))
		}
		// in a user's words: "connection refused", not Go's "dial tcp …: connect: …"
		return nil, fmt.Errorf("%w: %s", ErrUnreachable, sanitize.Plain(err.Error()))
	}
	return conn, nil
}

// deadlineWhy says which deadline ended ctx: the connect timeout, the
// per-host or the whole run's, or an interrupt.
func deadlineWhy(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.DeadlineExceeded) {
		if errors.Is(c, context.Canceled) {
			return errors.New("interrupted")
		}
		return c
	}
	return ctx.Err()
}

// interrupted reports whether ctx ended by an interrupt rather than a
// deadline.
func interrupted(ctx context.Context) bool {
	c := context.Cause(ctx)
	return c != nil && errors.Is(c, context.Canceled)
}

func classifyHandshake(ctx context.Context, e Endpoint, err error, notes []string) error {
	switch {
	case errors.Is(err, ErrHostKey):
		return err
	case interrupted(ctx):
		return fmt.Errorf("%w: SSH handshake with %s did not finish", ErrInterrupted, e.Addr())
	case ctx.Err() != nil:
		return fmt.Errorf("%w: SSH handshake with %s did not finish: %v", ErrTimeout, e.Addr(), deadlineWhy(ctx))
	case isTimeout(err):
		// The connection's deadline is ctx's, which may be the per-host or
		// the whole run's rather than the connect timeout: ctx's own timer,
		// due the same instant, says which.
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: SSH handshake with %s did not finish: %v", ErrTimeout, e.Addr(), deadlineWhy(ctx))
		case <-time.After(time.Second):
		}
		return fmt.Errorf("%w: SSH handshake with %s did not finish within %s", ErrTimeout, e.Addr(), e.ConnectTimeout)
	case err != nil && strings.Contains(err.Error(), "unable to authenticate"):
		msg := fmt.Sprintf("%s@%s refused every key offered", e.User, e.HostName)
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, "; ") + ")"
		}
		return fmt.Errorf("%w: %s", ErrAuth, msg)
	case err == nil:
		return fmt.Errorf("%w: SSH handshake with %s cancelled", ErrTimeout, e.Addr())
	}
	return fmt.Errorf("%w: SSH handshake with %s: %v", ErrUnreachable, e.Addr(), err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Close closes the connection and any jump-host connections.
func (c *Client) Close() error {
	if c.closed != nil {
		c.once.Do(func() { close(c.closed) })
	}
	var err error
	if c.c != nil {
		err = c.c.Close()
	}
	for i := len(c.chain) - 1; i >= 0; i-- {
		c.chain[i].Close()
	}
	return err
}

// MaxRunOutput bounds what Run keeps of a command's stdout; a command that
// prints more is killed and Run returns an error wrapping ErrTooMuchOutput.
const MaxRunOutput = 64 << 20

// maxStderr bounds what is kept of a command's stderr (the start of it).
const maxStderr = 64 << 10

// Run runs cmd (a shell command line) and returns its output and exit
// status. A non-zero exit is not an error. When ctx ends first, the remote
// command's process group is killed and the error wraps ErrTimeout.
// Stdout is kept up to MaxRunOutput, stderr's first 64 KiB.
func (c *Client) Run(ctx context.Context, cmd string, stdin io.Reader) (stdout, stderr []byte, exit int, err error) {
	over := make(chan struct{})
	o := &capped.Buffer{Max: MaxRunOutput, Err: ErrTooMuchOutput, OnFull: func() { close(over) }}
	e := &capped.Buffer{Max: maxStderr}
	p, err := c.Start(cmd, stdin, o, e)
	if err != nil {
		return nil, nil, -1, err
	}
	exit, err = p.wait(ctx, over)
	if o.Overflowed() {
		err = fmt.Errorf("%s: %w: stdout passed %d MiB", c.Host, ErrTooMuchOutput, MaxRunOutput>>20)
	}
	return o.Bytes(), e.Bytes(), exit, err
}

// Stream runs cmd and hands its stdout to consume as it arrives, so a
// command's output is never held whole: consume bounds what it keeps. When
// consume returns an error, or ctx ends, the command is killed. Stream
// returns consume's error first, then the command's; stderr's first 64 KiB
// come back as well.
func (c *Client) Stream(ctx context.Context, cmd string, stdin io.Reader, consume func(io.Reader) error) (stderr []byte, exit int, err error) {
	pr, pw := io.Pipe()
	e := &capped.Buffer{Max: maxStderr}
	p, err := c.Start(cmd, stdin, pw, e)
	if err != nil {
		return nil, -1, err
	}
	abort := make(chan struct{})
	waited := make(chan struct{})
	go func() {
		exit, err = p.wait(ctx, abort)
		pw.CloseWithError(err) // nil: the reader sees EOF
		close(waited)
	}()
	cerr := consume(pr)
	if cerr == nil {
		// What follows the stream's end is not evidence; read a little of it
		// so a clean exit is not mistaken for a cut connection, then stop.
		_, cerr = io.Copy(io.Discard, io.LimitReader(pr, 64<<10))
		if n, _ := pr.Read(make([]byte, 1)); n > 0 {
			close(abort)
		}
	} else {
		close(abort)
	}
	pr.CloseWithError(errors.New("output no longer read"))
	<-waited
	if cerr != nil && ctx.Err() == nil {
		return e.Bytes(), exit, cerr
	}
	return e.Bytes(), exit, err
}

// Process is a command started on a remote host.
type Process struct {
	client *Client
	sess   *ssh.Session
	done   chan struct{}
	exit   int
	err    error

	mu  sync.Mutex
	pid int // the remote process group, known once the command started
}

// pidMarker is the first line the wrapper prints, carrying the remote
// process group id so Kill can end the whole group.
const pidMarker = "sparkrig-pgid "

// Start runs cmd without waiting for it. The remote shell (a session leader,
// sshd calls setsid) execs /bin/sh, so the command and its children share a
// process group that Kill can end even when they ignore a closed channel.
func (c *Client) Start(cmd string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	sess, err := c.c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: open session: %v", c.Host, ErrDropped, c.dropped(err))
	}
	p := &Process{client: c, sess: sess, done: make(chan struct{})}
	if stdout == nil {
		stdout = io.Discard
	}
	sess.Stdin = stdin
	sess.Stdout = &pidFilter{w: stdout, p: p}
	sess.Stderr = stderr
	wrapped := "exec /bin/sh -c 'echo \"" + pidMarker + "$$\"; exec /bin/sh -c \"$0\"' " + shell.Quote(cmd)
	if err := sess.Start(wrapped); err != nil {
		sess.Close()
		return nil, fmt.Errorf("%s: %w: start: %v", c.Host, ErrDropped, err)
	}
	go func() {
		p.exit, p.err = exitStatus(c.Host, sess.Wait())
		if p.err != nil && errors.Is(p.err, ErrDropped) {
			if why := c.dropped(nil); why != "" {
				p.err = fmt.Errorf("%s: %w: %s", c.Host, ErrDropped, why)
			}
		}
		close(p.done)
	}()
	return p, nil
}

// Wait waits for the command and returns its exit status.
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.exit, p.err
}

// WaitContext waits like Wait, but kills the command when ctx ends first.
func (p *Process) WaitContext(ctx context.Context) (int, error) {
	return p.wait(ctx, nil)
}

// wait waits for the command; when ctx ends or abort closes first it kills
// the command.
func (p *Process) wait(ctx context.Context, abort <-chan struct{}) (int, error) {
	select {
	case <-p.done:
		return p.exit, p.err
	case <-ctx.Done():
	case <-abort:
	}
	kctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.Kill(kctx)
	if ctx.Err() == nil {
		return -1, fmt.Errorf("%s: %w: stopped by the reader", p.client.Host, ErrDropped)
	}
	return -1, fmt.Errorf("%s: %w: command still running at its deadline (%v)", p.client.Host, ErrTimeout, context.Cause(ctx))
}

// Kill ends the remote command: SIGTERM to its process group, SIGKILL if it
// is still there after 2 s, run over a second session; then the session is
// closed. It returns once the command is gone or ctx ends.
func (p *Process) Kill(ctx context.Context) error {
	p.mu.Lock()
	pid := p.pid
	p.mu.Unlock()
	var err error
	if pid > 1 {
		script := fmt.Sprintf("kill -TERM -%d 2>/dev/null; i=0; while kill -0 -%d 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -%d 2>/dev/null; true", pid, pid, pid)
		err = p.client.quick(ctx, script)
	}
	p.sess.Signal(ssh.SIGKILL)
	p.sess.Close()
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	return err
}

// PGID returns the remote process group id (0 until the command started).
func (p *Process) PGID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// quick runs a short helper command on its own session, bounded by ctx.
func (c *Client) quick(ctx context.Context, cmd string) error {
	s, err := c.c.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() { errc <- s.Run(cmd) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func exitStatus(host string, err error) (int, error) {
	var ee *ssh.ExitError
	var em *ssh.ExitMissingError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Signal() == "":
		return ee.ExitStatus(), nil
	case errors.As(err, &ee):
		return -1, fmt.Errorf("%s: command killed by SIG%s", host, ee.Signal())
	case errors.As(err, &em), errors.Is(err, io.EOF):
		return -1, fmt.Errorf("%s: %w: the connection closed before the command finished", host, ErrDropped)
	}
	return -1, fmt.Errorf("%s: %w: %v", host, ErrDropped, err)
}

// pidFilter strips the wrapper's first line from stdout and records the pid.
type pidFilter struct {
	w    io.Writer
	p    *Process
	head []byte
	seen bool
}

// copyBufs are the buffers ReadFrom copies a command's stdout through,
// shared by the commands that follow one another: x/crypto's session
// otherwise allocates 32 KiB a command.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom is io.Copy's loop over a pooled buffer.
func (f *pidFilter) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (f *pidFilter) Write(b []byte) (int, error) {
	if f.seen {
		return f.w.Write(b)
	}
	n := len(b)
	f.head = append(f.head, b...)
	i := bytes.IndexByte(f.head, '\n')
	if i < 0 {
		if len(f.head) > 64 { // not our marker: pass everything through
			f.seen = true
			_, err := f.w.Write(f.head)
			return n, err
		}
		return n, nil
	}
	f.seen = true
	line, rest := string(f.head[:i]), f.head[i+1:]
	if pid, ok := strings.CutPrefix(line, pidMarker); ok {
		var v int
		fmt.Sscan(pid, &v)
		f.p.mu.Lock()
		f.p.pid = v
		f.p.mu.Unlock()
	} else {
		rest = f.head
	}
	if len(rest) > 0 {
		if _, err := f.w.Write(rest); err != nil {
			return n, err
		}
	}
	return n, nil
}
