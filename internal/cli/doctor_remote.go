package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// hostCapture is one node's evidence, or why it could not be had.
type hostCapture struct {
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
	Pings  []cluster.PingResult
	Meshed bool
}

// remoteOptions selects nodes to capture over SSH (--hosts, --hostfile, ...).
type remoteOptions struct {
	hosts       []string
	hostfile    string
	sshConfig   string
	user        string
	identities  []string
	knownHosts  []string
	acceptNew   bool
	parallel    int
	hostTimeout time.Duration
	timeout     time.Duration
	noPing      bool
}

// addRemoteFlags registers the SSH host-selection flags.
func addRemoteFlags(fs *pflag.FlagSet, o *remoteOptions) {
	fs.StringArrayVar(&o.hosts, "hosts", nil, "nodes to capture over SSH: names, ssh_config aliases, [user@]host[:port], pdsh ranges (spark-[01-04]); comma-separated, repeatable")
	fs.StringVar(&o.hostfile, "hostfile", "", "file of nodes: an MPI hostfile (host slots=N) or one host per line, # comments")
	fs.StringVar(&o.sshConfig, "ssh-config", "", "OpenSSH client config instead of ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F)")
	fs.StringVar(&o.user, "ssh-user", "", "remote user, overriding ssh_config (jump hosts keep theirs)")
	fs.StringArrayVar(&o.identities, "identity", nil, "private key file to offer, overriding ssh_config IdentityFile (repeatable; ssh-agent keys are used too)")
	fs.StringArrayVar(&o.knownHosts, "known-hosts", nil, "known_hosts file instead of ssh_config's UserKnownHostsFile (repeatable)")
	fs.BoolVar(&o.acceptNew, "accept-new-host-keys", false, "record unknown host keys in known_hosts (OpenSSH StrictHostKeyChecking=accept-new); changed keys are still refused")
	fs.IntVar(&o.parallel, "parallel", remote.DefaultParallel, "nodes worked on at once")
	fs.DurationVar(&o.hostTimeout, "host-timeout", 60*time.Second, "deadline for each node's capture")
	fs.DurationVar(&o.timeout, "timeout", 180*time.Second, "deadline for the whole SSH run")
	fs.BoolVar(&o.noPing, "no-ping", false, "skip the active don't-fragment ping mesh between the nodes' data rails")
}

// enabled reports whether any remote host was asked for.
func (o *remoteOptions) enabled() bool { return len(o.hosts) > 0 || o.hostfile != "" }

// hostList expands --hosts and --hostfile, in that order, without duplicates.
func (o *remoteOptions) hostList() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(h string) {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, s := range o.hosts {
		hs, err := remote.ParseHostList(s)
		if err != nil {
			return nil, fmt.Errorf("--hosts: %w", err)
		}
		for _, h := range hs {
			add(h)
		}
	}
	if o.hostfile != "" {
		b, err := os.ReadFile(o.hostfile)
		if err != nil {
			return nil, fmt.Errorf("--hostfile: %w", err)
		}
		es, err := remote.ParseHostfile(b)
		if err != nil {
			return nil, fmt.Errorf("--hostfile %s: %w", o.hostfile, err)
		}
		for _, e := range es {
			add(e.Host)
		}
	}
	if o.parallel < 1 {
		return nil, fmt.Errorf("--parallel must be at least 1")
	}
	return out, nil
}

func (o *remoteOptions) dialer(env *Env) (*remote.Dialer, error) {
	return remote.NewDialer(remote.Options{
		ConfigFile: o.sshConfig, AgentSock: env.Getenv("SSH_AUTH_SOCK"), User: o.user,
		IdentityFiles: o.identities, KnownHosts: o.knownHosts, AcceptNewHostKeys: o.acceptNew,
	})
}

// captureRemote captures every selected host in parallel, in input order,
// then runs the DF-ping mesh between the captured ones (unless --no-ping).
// Only a bad host list or SSH configuration is an error; a host that cannot
// be reached or captured is a hostCapture with Err set.
func captureRemote(ctx context.Context, env *Env, o *remoteOptions) ([]hostCapture, error) {
	hosts, err := o.hostList()
	if err != nil {
		return nil, err
	}
	d, err := o.dialer(env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	caps := make([]hostCapture, len(hosts))
	clients := make([]*remote.Client, len(hosts))
	var mu sync.Mutex
	closed := false // set once the fan-out is over: late finishers clean up after themselves
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	prog := newProgress(env, "capturing", len(hosts))
	script := capture.Script()
	fan := remote.FanOut{Parallel: o.parallel, PerHost: o.hostTimeout, Progress: prog.update}
	results := fan.Each(ctx, hosts, func(ctx context.Context, i int, host string) error {
		c, s, err := captureOne(ctx, d, host, script)
		mu.Lock()
		defer mu.Unlock()
		if closed {
			if c != nil {
				c.Close()
			}
			return err
		}
		clients[i] = c
		caps[i] = hostCapture{Host: host, Source: "ssh", Snap: s, Err: err, Status: hostStatus(err)}
		if err != nil {
			caps[i].Snap = nil
		} else {
			caps[i].Facts = facts.FromSnapshot(s)
		}
		return err
	})
	prog.finish()
	mu.Lock()
	for i, res := range results {
		if caps[i].Host == "" { // the fan-out gave up on it before it answered
			caps[i] = hostCapture{Host: hosts[i], Source: "ssh", Err: res.Err, Status: hostStatus(res.Err)}
		}
	}
	cl := append([]*remote.Client(nil), clients...)
	mu.Unlock()
	if !o.noPing {
		pingMesh(ctx, env, o, caps, cl)
	}
	for i := range caps {
		if caps[i].Snap != nil && caps[i].Meshed {
			caps[i].Snap.AddCmd(snapshot.Item{Name: cluster.PingEvidence, Argv: []string{"sparkrig", "ping-mesh"}}, cluster.EncodePings(caps[i].Pings), nil)
		}
	}
	return caps, nil
}

// captureOne dials host and runs the capture script on it; the returned
// client stays open for the ping mesh.
func captureOne(ctx context.Context, d *remote.Dialer, host, script string) (*remote.Client, *snapshot.Snapshot, error) {
	c, err := d.Dial(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	stdout, stderr, code, err := c.Run(ctx, "sh -s", strings.NewReader(script))
	if err != nil {
		return c, nil, err
	}
	s, err := capture.ReadScriptOutput(strings.NewReader(string(stdout)), capture.ScriptMeta{
		Host: host, ToolVersion: Version, CapturedAt: start, Duration: time.Since(start)})
	if err != nil {
		if msg := strings.TrimSpace(string(stderr)); msg != "" {
			err = fmt.Errorf("%w (exit %d: %s)", err, code, firstLineOf(msg))
		}
		return c, nil, fmt.Errorf("%s: capture: %w", host, err)
	}
	return c, s, nil
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// hostStatus maps a capture error to the report's host status.
func hostStatus(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, remote.ErrUnreachable), errors.Is(err, remote.ErrHostKey), errors.Is(err, remote.ErrAuth):
		return report.HostUnreachable
	}
	return report.HostFailed
}

// pingMesh runs the DF-ping mesh from every captured host whose rails face
// another captured host, over the connections the capture opened.
func pingMesh(ctx context.Context, env *Env, o *remoteOptions, caps []hostCapture, clients []*remote.Client) {
	var nodes []*facts.Node
	var rails []cluster.Rail
	idx := map[string]int{}
	for i, c := range caps {
		if c.Facts != nil && clients[i] != nil {
			nodes = append(nodes, c.Facts)
			rails = append(rails, cluster.Rails(c.Facts)...)
			idx[c.Host] = i
		}
	}
	if len(nodes) < 2 {
		return
	}
	plan := cluster.PingPlan(cluster.Segments(rails))
	var from []string
	for _, n := range nodes {
		caps[idx[n.Host]].Meshed = true
		if len(plan[n.Host]) > 0 {
			from = append(from, n.Host)
		}
	}
	prog := newProgress(env, "ping mesh", len(from))
	fan := remote.FanOut{Parallel: o.parallel, PerHost: 30 * time.Second, Progress: prog.update}
	var mu sync.Mutex
	done := false
	fan.Each(ctx, from, func(ctx context.Context, _ int, host string) error {
		i := idx[host]
		ts := plan[host]
		out, _, _, err := clients[i].Run(ctx, "sh -s", strings.NewReader(cluster.PingScript(ts)))
		res := cluster.ParsePingScript(ts, out)
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

func newProgress(env *Env, what string, total int) *hostProgress {
	p := &hostProgress{what: what, total: total}
	if f, ok := env.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && total > 0 {
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
