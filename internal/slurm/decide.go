package slurm

import "github.com/sparkrig/sparkrig/internal/health"

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

// Decide is what to do with a node in state n given its health under the
// policy. A node drained or downed by anyone else is never touched: its
// reason is kept and it is never resumed. A node whose health is unknown
// (evidence that could not be read, nothing found wrong) is left as it is:
// never resumed, never drained.
func Decide(n Node, v health.Verdict) Action {
	reason := Reason(v.Bad)
	switch {
	case v.State == health.Unhealthy && (n.Drained() || n.Down()) && !n.Ours():
		return Action{Kind: Nothing, Why: "already drained or down by someone else (" + n.Reason + "); their reason is kept"}
	case v.State == health.Unhealthy && n.Drained() && n.Reason == reason:
		return Action{Kind: Nothing, Why: "already drained: " + reason}
	case v.State == health.Unhealthy:
		return Action{Kind: Drain, Reason: reason, Why: reason}
	case v.State != health.Healthy:
		return Action{Kind: Nothing, Why: "could not check (" + v.Detail(MaxReason) + "); the node is left as it is"}
	case n.Drained() && n.Ours():
		return Action{Kind: Resume, Why: "healthy again; resuming sparkrig's drain (" + n.Reason + ")"}
	case n.Drained() || n.Down():
		return Action{Kind: Nothing, Why: "healthy; drained or down by someone else (" + n.Reason + "), left so"}
	}
	return Action{Kind: Nothing, Why: "healthy"}
}
