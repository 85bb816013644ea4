package cli

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// transportOptions choose how nodes are reached: SSH (the default), srun
// inside a Slurm allocation, or kubectl exec into the sparkrig DaemonSet's
// pods. The runner is made once and shared by everything a command runs,
// so a host is dialled once whatever the command does with it.
type transportOptions struct {
	slurm        bool
	kubectl      bool
	k8sNamespace string
	k8sSelector  string
	k8sContainer string
	k8sHostRoot  string

	mu sync.Mutex
	rn runner.Runner
}

// addTransportFlags registers the transport flags.
func addTransportFlags(fs *pflag.FlagSet, o *transportOptions) {
	fs.BoolVar(&o.slurm, "slurm", false, "reach the nodes with srun inside the current Slurm allocation (salloc, sbatch): nothing installed on them; without --hosts, every allocated node")
	fs.BoolVar(&o.kubectl, "kubectl", false, "reach the nodes with kubectl exec into the sparkrig DaemonSet's pods (deploy/kubernetes); without --hosts, every node with a pod")
	fs.StringVar(&o.k8sNamespace, "k8s-namespace", "sparkrig", "with --kubectl: the DaemonSet's namespace")
	fs.StringVar(&o.k8sSelector, "k8s-selector", "app.kubernetes.io/name=sparkrig", "with --kubectl: the DaemonSet's pod label selector")
	fs.StringVar(&o.k8sContainer, "k8s-container", "node-problem-detector", "with --kubectl: the container to exec into")
	fs.StringVar(&o.k8sHostRoot, "k8s-host-root", "", "with --kubectl: run the capture chrooted into this directory (a pod that mounts the node's / there); by default it runs in the container as it is, which deploy/kubernetes gives the node files the checks read")
}

// selected reports whether a scheduler transport was asked for.
func (o *transportOptions) selected() bool { return o.slurm || o.kubectl }

// runner returns the command's one runner, made on first use.
func (o *remoteOptions) runner(env *Env) (runner.Runner, error) {
	t := o.transport
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rn != nil {
		return t.rn, nil
	}
	switch {
	case t.slurm && t.kubectl:
		return nil, errors.New("--slurm and --kubectl do not mix")
	case t.slurm:
		if env.Getenv("SLURM_JOB_ID") == "" {
			return nil, errors.New("--slurm runs inside a Slurm allocation (salloc or sbatch), and SLURM_JOB_ID is not set")
		}
		t.rn = runner.Srun{}
	case t.kubectl:
		t.rn = &runner.Kubectl{Namespace: t.k8sNamespace, Selector: t.k8sSelector, Container: t.k8sContainer, HostRoot: t.k8sHostRoot}
	default:
		d, err := o.dialer(env)
		if err != nil {
			return nil, err
		}
		t.rn = &runner.SSH{Dialer: d}
	}
	return t.rn, nil
}

// closeRunner closes the runner's connections, if it holds any.
func (o *remoteOptions) closeRunner() {
	t := o.transport
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.rn.(*runner.SSH); ok {
		s.Close()
	}
	t.rn = nil
}

// nodes is hostList, or, where none is named and a scheduler transport is
// chosen, the scheduler's nodes: the allocation's, or those running a pod.
func (o *remoteOptions) nodes(ctx context.Context, env *Env) ([]string, error) {
	hosts, err := o.hostList()
	if err != nil || len(hosts) > 0 {
		return hosts, err
	}
	switch t := o.transport; {
	case t.slurm:
		list := env.Getenv("SLURM_JOB_NODELIST")
		if list == "" {
			return nil, errors.New("--slurm: SLURM_JOB_NODELIST is not set: run inside an allocation (salloc or sbatch)")
		}
		out, err := command(ctx, "scontrol", "show", "hostnames", list)
		if err != nil {
			return nil, fmt.Errorf("--slurm: %v", err)
		}
		return strings.Fields(out), nil
	case t.kubectl:
		r, err := o.runner(env)
		if err != nil {
			return nil, err
		}
		hs, err := r.(*runner.Kubectl).Nodes(ctx)
		if err != nil {
			return nil, fmt.Errorf("--kubectl: %s", sanitize.Line(err.Error()))
		}
		return hs, nil
	}
	return nil, nil
}

// command runs a scheduler's client and returns its stdout, or an error
// with the first line of its stderr.
func command(ctx context.Context, name string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		if msg != "" {
			return "", fmt.Errorf("%s: %v: %s", name, err, sanitize.Line(msg))
		}
		return "", fmt.Errorf("%s: %v", name, err)
	}
	return out.String(), nil
}

// freshRunner is a runner of the chosen transport that reaches the node
// anew for every script (fix proves a host still answers after a change
// that way); srun and kubectl always do.
func (o *remoteOptions) freshRunner(env *Env) (runner.Runner, error) {
	if o.transport.selected() {
		return o.runner(env)
	}
	d, err := o.dialer(env)
	if err != nil {
		return nil, err
	}
	return &runner.SSH{Dialer: d, Fresh: true}, nil
}
