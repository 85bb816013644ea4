// Package health decides, from a node's findings, whether the node is
// unhealthy: the one policy the Slurm health check (drain), the
// node-problem-detector plugin (condition) and the exporter share.
package health

import (
	"fmt"
	"path"
	"slices"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Policy decides which findings make a node unhealthy: drain it in Slurm,
// set its node-problem-detector condition. By default a fail finding does
// and nothing else does: a warn, info or not-evaluated finding never does. Never and Always name check IDs (shell patterns such as "gpu.*");
// Never wins over Always, and Always counts a warn finding too.
type Policy struct {
	// Severity is the least severe finding that drains: report.Fail (the
	// default), report.Warn, or "" for none but Always.
	Severity report.Severity
	Never    []string
	Always   []string
}

// DefaultPolicy counts fail findings only.
var DefaultPolicy = Policy{Severity: report.Fail}

// ParseSeverity reads an --unhealthy-on value: fail, warn or none.
func ParseSeverity(s string) (report.Severity, error) {
	switch s {
	case "fail":
		return report.Fail, nil
	case "warn":
		return report.Warn, nil
	case "none":
		return "", nil
	}
	return "", fmt.Errorf("%q: want fail, warn or none", s)
}

// Counts reports whether f makes the node unhealthy under p.
func (p Policy) Counts(f report.Finding) bool {
	if matchAny(p.Never, f.ID) {
		return false
	}
	if f.Severity != report.Fail && f.Severity != report.Warn {
		return false // info, ok and not-evaluated never count
	}
	if matchAny(p.Always, f.ID) {
		return true
	}
	switch p.Severity {
	case report.Fail:
		return f.Severity == report.Fail
	case report.Warn:
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
func (p Policy) Unhealthy(fs []report.Finding) []report.Finding {
	var out []report.Finding
	for _, f := range fs {
		if p.Counts(f) {
			out = append(out, f)
		}
	}
	return out
}
