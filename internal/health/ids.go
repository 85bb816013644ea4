package health

import "github.com/sparkrig/sparkrig/internal/check"

// KnownIDs are the check IDs a node's findings can carry: every pattern a
// policy or a plugin's scope names must match one of them.
func KnownIDs() []string { return check.IDs() }
