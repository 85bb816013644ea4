package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Node is a node's state as `scontrol show node NAME --oneliner` gives it.
type Node struct {
	Name string
	// State is the base state and its flags: "IDLE+DRAIN", "MIXED+DRAIN".
	State string
	// Reason is the reason without the "[user@time]" scontrol appends.
	Reason string
}

// Drained reports whether the node is drained or draining.
func (n Node) Drained() bool {
	for _, f := range strings.Split(n.State, "+") {
		if f == "DRAIN" || f == "DRAINED" || f == "DRAINING" {
			return true
		}
	}
	return false
}

// Down reports whether the node is down (its base state).
func (n Node) Down() bool {
	base, _, _ := strings.Cut(n.State, "+")
	return base == "DOWN"
}

// Ours reports whether the reason is sparkrig's.
func (n Node) Ours() bool { return strings.HasPrefix(n.Reason, Prefix) }

// ErrUnknownNode is a node name slurmctld does not know.
var ErrUnknownNode = errors.New("node not known to slurmctld")

var (
	stateField = regexp.MustCompile(`(?:^| )State=(\S+)`)
	nameField  = regexp.MustCompile(`^NodeName=(\S+)`)
	// scontrol appends " [user@time]" to the reason it shows.
	reasonStamp = regexp.MustCompile(` \[[^\[\]]*@[^\[\]]*\]$`)
)

// ParseNode reads `scontrol show node NAME --oneliner`. Reason is the last
// field and may hold spaces and "=": it runs to the end of the line.
func ParseNode(b []byte) (Node, error) {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	s := string(line)
	if strings.HasPrefix(s, "Node ") && strings.HasSuffix(s, " not found") {
		return Node{}, ErrUnknownNode
	}
	m := nameField.FindStringSubmatch(s)
	st := stateField.FindStringSubmatch(s)
	if m == nil || st == nil {
		return Node{}, fmt.Errorf("not scontrol show node output: %.80q", s)
	}
	n := Node{Name: m[1], State: st[1]}
	if i := strings.Index(s, " Reason="); i >= 0 {
		n.Reason = reasonStamp.ReplaceAllString(s[i+len(" Reason="):], "")
	}
	return n, nil
}
