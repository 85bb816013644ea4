package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkrig/sparkrig/internal/capped"
)

// Kubectl runs commands with `kubectl exec` in the pod a DaemonSet runs on
// each node: a host is a Kubernetes node name, and its pod is the one the
// selector matches on that node. With HostRoot set (the pod mounts the
// host's / there, read-only) the command runs chrooted into it, so it sees
// the node's /etc and tools rather than the container's.
type Kubectl struct {
	// Bin is the kubectl program ("kubectl" when empty).
	Bin string
	// Args come first (e.g. --context, --kubeconfig).
	Args      []string
	Namespace string
	// Selector is the DaemonSet's pod label selector (app=sparkrig).
	Selector  string
	Container string
	HostRoot  string

	mu   sync.Mutex
	pods map[string]string // node → pod
}

// Exec runs cmdline in host's pod. Cancelling ctx ends kubectl, which ends
// the exec session.
func (k *Kubectl) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	pod, err := k.pod(ctx, host)
	if err != nil {
		return err
	}
	argv := append(k.base(), "exec")
	if stdin != nil {
		argv = append(argv, "-i")
	}
	argv = append(argv, pod)
	if k.Container != "" {
		argv = append(argv, "-c", k.Container)
	}
	argv = append(argv, "--")
	if k.HostRoot != "" {
		argv = append(argv, "chroot", k.HostRoot)
	}
	argv = append(argv, "sh", "-c", cmdline)
	return execProcess(ctx, host, argv, stdin, stdout, stderr, syscall.SIGTERM, 5*time.Second)
}

func (k *Kubectl) base() []string {
	bin := k.Bin
	if bin == "" {
		bin = "kubectl"
	}
	argv := append([]string{bin}, k.Args...)
	if k.Namespace != "" {
		argv = append(argv, "--namespace", k.Namespace)
	}
	return argv
}

// pod finds host's pod, listing the DaemonSet's pods once (and again when a
// node is not in the list).
func (k *Kubectl) pod(ctx context.Context, host string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.pods[host]; ok {
		return p, nil
	}
	pods, err := k.list(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %v", host, ErrUnreachable, err)
	}
	k.pods = pods
	if p, ok := k.pods[host]; ok {
		return p, nil
	}
	return "", fmt.Errorf("%s: %w: no running pod matching %s on this node", host, ErrUnreachable, k.Selector)
}

// Nodes lists the nodes that run one of the DaemonSet's pods, sorted.
func (k *Kubectl) Nodes(ctx context.Context) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	pods, err := k.list(ctx)
	if err != nil {
		return nil, err
	}
	k.pods = pods
	nodes := slices.Collect(maps.Keys(pods))
	slices.Sort(nodes)
	return nodes, nil
}

// list asks kubectl for the running pods the selector matches: node → pod.
func (k *Kubectl) list(ctx context.Context) (map[string]string, error) {
	argv := append(k.base(), "get", "pods", "--selector", k.Selector, "--field-selector", "status.phase=Running",
		"--output", `jsonpath={range .items[*]}{.spec.nodeName}{"\t"}{.metadata.name}{"\n"}{end}`)
	out, errb := &capped.Buffer{Max: 4 << 20}, &capped.Buffer{Max: maxStderr}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(string(errb.Bytes())), "\n")
		return nil, fmt.Errorf("list pods (%s): %v %s", k.Selector, err, msg)
	}
	return ParsePodNodes(out.Bytes()), nil
}

// ParsePodNodes reads "node<TAB>pod" lines into node → pod.
func ParsePodNodes(b []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		node, pod, ok := strings.Cut(sc.Text(), "\t")
		// Kubernetes names hold no white space: a line that gives one
		// is not kubectl's
		if ok && node != "" && pod != "" && !strings.ContainsAny(node+pod, " \t\r") {
			m[node] = pod
		}
	}
	return m
}

// String names the transport.
func (k *Kubectl) String() string { return "kubectl" }
