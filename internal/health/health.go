// Package health decides, from a node's findings, whether the node is
// unhealthy: the one policy the Slurm health check (drain), the
// node-problem-detector plugin (condition) and the exporter share.
package health

import (
	"fmt"
	"path"
	"slices"

	"github.com/sparkrig/sparkrig/internal/check"
)

// Policy decides which findings make a node unhealthy: drain it in Slurm,
// set its node-problem-detector condition. By default a fail finding does
// and nothing else does: a warn, info or not-evaluated finding never does. Never and Always name check IDs (shell patterns such as "gpu.*");
// Never wins over Always, and Always counts a warn finding too.
type Policy struct {
	// Severity is the least severe finding that drains: check.Fail (the
	// default), check.Warn, or "" for none but Always.
	Severity check.Severity
	Never    []string
	Always   []string
}

// DefaultPolicy counts fail findings only.
var DefaultPolicy = Policy{Severity: check.Fail}

// ParseSeverity reads an --unhealthy-on value: fail, warn or none.
func ParseSeverity(s string) (check.Severity, error) {
	switch s {
	case "fail":
		return check.Fail, nil
	case "warn":
		return check.Warn, nil
	case "none":
		return "", nil
	}
	return "", fmt.Errorf("%q: want fail, warn or none", s)
}

// Counts reports whether f makes the node unhealthy under p.
func (p Policy) Counts(f check.Finding) bool {
	if matchAny(p.Never, f.ID) {
		return false
	}
	if f.Severity != check.Fail && f.Severity != check.Warn {
		return false // info, ok and not-evaluated never count
	}
	if matchAny(p.Always, f.ID) {
		return true
	}
	switch p.Severity {
	case check.Fail:
		return f.Severity == check.Fail
	case check.Warn:
		return true
	}
	return false
}

func matchAny(patterns []string, id string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, err := path.Match(p, id)
		return ok && err == nil
	})
}

// Unhealthy returns the findings that make the node unhealthy under p, in
// order.
func (p Policy) Unhealthy(fs []check.Finding) []check.Finding {
	var out []check.Finding
	for _, f := range fs {
		if p.Counts(f) {
			out = append(out, f)
		}
	}
	return out
}
