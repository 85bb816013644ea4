package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Scontrol runs scontrol: the edge where the health check reads and changes
// the node's state.
type Scontrol struct {
	// Bin is the scontrol program ("scontrol" when empty).
	Bin string
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
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()+"\n"+out.String()), "\n")
		return out.Bytes(), fmt.Errorf("scontrol %s: %v: %s", args[0], err, strings.TrimSpace(msg))
	}
	return out.Bytes(), nil
}
