package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// hostCapture is one node's evidence, or why it could not be had.
type hostCapture = acquire.Node

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
	keepAll     bool                // every node's whole evidence is kept (snapshot writes it), not only what fix reads
	arrived     func(*acquire.Node) // hears each node as it is read (snapshot writes it then)
	// transport is shared by copies of these options: one runner per command.
	transport *transportOptions
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
	durationVarMin(fs, &o.hostTimeout, "host-timeout", 60*time.Second, time.Second, "deadline for each node's capture")
	durationVarMin(fs, &o.timeout, "timeout", 180*time.Second, time.Second, "deadline for the whole SSH run")
	fs.BoolVar(&o.noPing, "no-ping", false, "skip the active don't-fragment ping mesh between the nodes' data rails")
	o.transport = &transportOptions{}
	addTransportFlags(fs, o.transport)
}

// enabled reports whether any remote host was asked for.
func (o *remoteOptions) enabled() bool {
	return len(o.hosts) > 0 || o.hostfile != "" || (o.transport != nil && o.transport.selected())
}

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
		b, err := capped.ReadFile(o.hostfile, 16<<20)
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
	var mu sync.Mutex
	return remote.NewDialer(remote.Options{
		ConfigFile: o.sshConfig, AgentSock: env.Getenv("SSH_AUTH_SOCK"), User: o.user,
		IdentityFiles: o.identities, KnownHosts: o.knownHosts, AcceptNewHostKeys: o.acceptNew,
		Notify: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(env.Stderr, "sparkrig: "+sanitize.Line(s))
		},
	})
}

// captureRemote captures every selected host in parallel, in input order,
// then runs the DF-ping mesh between the captured ones (unless --no-ping).
// Only a bad host list or SSH configuration is an error; a host that cannot
// be reached or captured is a hostCapture with Err set.
func captureRemote(ctx context.Context, env *Env, o *remoteOptions) ([]hostCapture, error) {
	return acquireRemote(ctx, env, o, false)
}

// acquireRemote is captureRemote, as root when sudo is set (fix reads
// root-only files).
func acquireRemote(ctx context.Context, env *Env, o *remoteOptions, sudo bool) ([]hostCapture, error) {
	hosts, err := o.nodes(ctx, env)
	if err != nil {
		return nil, err
	}
	ao, err := o.acquireOptions(env, sudo)
	if err != nil {
		return nil, err
	}
	return acquire.Remote(ctx, hosts, ao), nil
}

// acquireOptions are acquire's bounds from the flags, over the command's
// one runner: the ping mesh planned by the cluster model, and of each node
// its facts and what the fix plan reads held (everything with keepAll).
func (o *remoteOptions) acquireOptions(env *Env, sudo bool) (acquire.Options, error) {
	r, err := o.runner(env)
	if err != nil {
		return acquire.Options{}, err
	}
	keep := fix.Evidence
	if o.keepAll {
		keep = nil
	}
	return acquire.Options{Runner: r, Parallel: o.parallel, HostTimeout: o.hostTimeout,
		Timeout: o.timeout, NoPing: o.noPing, Sudo: sudo, ToolVersion: Version, Progress: progressTo(env),
		PingPlan: cluster.PlanPings, Keep: keep, KeepPaths: fix.Paths(), Arrived: o.arrived}, nil
}

// progressTo is where the fan-out draws its progress line (a terminal
// rewritten in place with cursor sequences): stderr, unless the
// environment rules such sequences out.
func progressTo(env *Env) io.Writer {
	if !ansiTerminal(env) {
		return nil
	}
	return env.Stderr
}
