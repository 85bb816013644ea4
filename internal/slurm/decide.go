package slurm

import "github.com/sparkrig/sparkrig/internal/report"

// Action is what the health check does to the node.
type Action struct {
	Kind   ActionKind
	Reason string // for Drain
	// Why says in words why this action (for the log line).
	Why string
}

// ActionKind names an action.
type ActionKind string

const (
	// Nothing leaves the node as it is.
	Nothing ActionKind = "none"
	// Drain drains the node with Reason (or replaces sparkrig's own reason).
	Drain ActionKind = "drain"
	// Resume resumes a node sparkrig drained.
	Resume ActionKind = "resume"
)

// Decide is what to do with a node in state n given the findings that drain
// it under the policy. A node drained or downed by anyone else is never
// touched: its reason is kept and it is never resumed.
func Decide(n Node, draining []report.Finding) Action {
	reason := Reason(draining)
	switch {
	case len(draining) > 0 && (n.Drained() || n.Down()) && !n.Ours():
		return Action{Kind: Nothing, Why: "already drained or down by someone else (" + n.Reason + "); their reason is kept"}
	case len(draining) > 0 && n.Drained() && n.Reason == reason:
		return Action{Kind: Nothing, Why: "already drained: " + reason}
	case len(draining) > 0:
		return Action{Kind: Drain, Reason: reason, Why: reason}
	case n.Drained() && n.Ours():
		return Action{Kind: Resume, Why: "healthy again; resuming sparkrig's drain (" + n.Reason + ")"}
	case n.Drained() || n.Down():
		return Action{Kind: Nothing, Why: "healthy; drained or down by someone else (" + n.Reason + "), left so"}
	}
	return Action{Kind: Nothing, Why: "healthy"}
}
