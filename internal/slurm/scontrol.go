package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DefaultScontrolTimeout bounds one scontrol call when Scontrol.Timeout is
// zero: slurmctld answers in milliseconds, and slurmd kills the whole health
// check at HealthCheckTimeout (60 s by default, slurm.conf(5)).
const DefaultScontrolTimeout = 10 * time.Second

// maxScontrolOutput bounds what is kept of one call's output: one node's
// line is a few hundred bytes.
const maxScontrolOutput = 1 << 20

// Scontrol runs scontrol: the edge where the health check reads and changes
// the node's state. Every call has a deadline.
type Scontrol struct {
	// Bin is the scontrol program ("scontrol" when empty).
	Bin string
	// Timeout bounds each call (DefaultScontrolTimeout when zero).
	Timeout time.Duration
}

// Show reads node's state.
func (s Scontrol) Show(ctx context.Context, node string) (Node, error) {
	out, err := s.run(ctx, "show", "node", node, "--oneliner")
	if n, perr := ParseNode(out); perr == nil || errors.Is(perr, ErrUnknownNode) {
		return n, perr
	}
	if err != nil {
		return Node{}, err
	}
	return ParseNode(out)
}

// Drain drains node with reason.
func (s Scontrol) Drain(ctx context.Context, node, reason string) error {
	_, err := s.run(ctx, "update", "NodeName="+node, "State=DRAIN", "Reason="+reason)
	return err
}

// Resume resumes node.
func (s Scontrol) Resume(ctx context.Context, node string) error {
	_, err := s.run(ctx, "update", "NodeName="+node, "State=RESUME")
	return err
}

func (s Scontrol) run(ctx context.Context, args ...string) ([]byte, error) {
	bin := s.Bin
	if bin == "" {
		bin = "scontrol"
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultScontrolTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out, errb capped
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	// a child that keeps the pipes open cannot hold the call past the deadline
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("scontrol %s: no answer within %s", args[0], timeout)
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.b.String()+"\n"+out.b.String()), "\n")
		return out.b.Bytes(), fmt.Errorf("scontrol %s: %v: %s", args[0], err, strings.TrimSpace(msg))
	}
	return out.b.Bytes(), nil
}

// capped keeps the first maxScontrolOutput bytes written to it.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxScontrolOutput - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
