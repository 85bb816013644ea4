// Package health decides, from a node's findings, whether the node is
// unhealthy, healthy or unknown: the one policy the Slurm health check
// (drain), the node-problem-detector plugin (condition) and the exporter
// share. A check whose evidence could not be read is unknown, never ok.
package health

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Policy decides which findings make a node unhealthy: drain it in Slurm,
// set its node-problem-detector condition. By default a fail finding does
// and nothing else does: a warn, info or not-evaluated finding never does.
// Never and Always name check IDs (shell patterns such as "gpu.*"); Never
// wins over Always, and Always counts a warn finding too.
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

// ValidatePatterns checks shell patterns naming check IDs: each must be a
// well-formed path.Match pattern and match at least one of known (a typo
// such as "gpu.xdi" would otherwise leave its checks out silently).
func ValidatePatterns(flag string, patterns, known []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return fmt.Errorf("%s %q: not a valid pattern", flag, p)
		}
		if !slices.ContainsFunc(known, func(id string) bool { ok, _ := path.Match(p, id); return ok }) {
			return fmt.Errorf("%s %q: matches no check", flag, p)
		}
	}
	return nil
}

// Validate checks the policy's patterns against the known check IDs; flag
// prefixes the flags' names in errors ("--" or "--npd-").
func (p Policy) Validate(flag string, known []string) error {
	return errors.Join(ValidatePatterns(flag+"never", p.Never, known), ValidatePatterns(flag+"always", p.Always, known))
}

// Counts reports whether f makes the node unhealthy under p.
func (p Policy) Counts(f report.Finding) bool {
	if f.Severity != report.Fail && f.Severity != report.Warn {
		return false // info, ok and not-evaluated never count
	}
	return p.covers(f.ID, f.Severity)
}

// covers reports whether a finding of id at sev would count under p.
func (p Policy) covers(id string, sev report.Severity) bool {
	if MatchAny(p.Never, id) {
		return false
	}
	if MatchAny(p.Always, id) {
		return true
	}
	switch p.Severity {
	case report.Fail:
		return sev == report.Fail
	case report.Warn:
		return true
	}
	return false
}

// MatchAny reports whether id matches one of the shell patterns.
func MatchAny(patterns []string, id string) bool {
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

// State is a node's health under a policy.
type State string

// States.
const (
	Healthy   State = "healthy"
	Unhealthy State = "unhealthy"
	// Unknown: nothing found wrong, but a check that could have found
	// something could not read its evidence, or the node was not audited.
	Unknown State = "unknown"
)

// Verdict is a node's health and what it rests on.
type Verdict struct {
	State State
	// Bad are the findings that make the node unhealthy.
	Bad []report.Finding
	// Unread are the not-evaluated findings of checks that could have
	// made it unhealthy.
	Unread []report.Finding
	// Error says why the node could not be judged at all (not audited).
	Error string
}

// Judge is the node's health under p from its findings (already limited to
// the checks a caller covers). A problem found is unhealthy whatever else
// could not be read; else a check under the policy that was not evaluated
// makes it unknown; else it is healthy.
func (p Policy) Judge(fs []report.Finding) Verdict {
	v := Verdict{State: Healthy, Bad: p.Unhealthy(fs)}
	for _, f := range fs {
		if f.Severity == report.NotEvaluated && (p.covers(f.ID, report.Fail) || p.covers(f.ID, report.Warn)) {
			v.Unread = append(v.Unread, f)
		}
	}
	switch {
	case len(v.Bad) > 0:
		v.State = Unhealthy
	case len(v.Unread) > 0:
		v.State = Unknown
	}
	return v
}

// JudgeHost is Judge of one host's findings whose IDs match scope (every
// finding when scope is empty); a host that was not audited is unknown.
func (p Policy) JudgeHost(h report.Host, scope []string) Verdict {
	if h.Status != "" && h.Status != report.HostAudited {
		why := h.Error
		if why == "" {
			why = "the node was not audited (" + h.Status + ")"
		}
		return Verdict{State: Unknown, Error: why}
	}
	var fs []report.Finding
	for _, f := range h.Findings {
		if len(scope) == 0 || MatchAny(scope, f.ID) {
			fs = append(fs, f)
		}
	}
	return p.Judge(fs)
}

// Why is the verdict in one line of max bytes, starting with Prefix.
func (v Verdict) Why(max int) string {
	return Prefix + " " + v.Detail(max-len(Prefix)-1)
}

// Detail is the verdict in words within max bytes: the first bad finding
// (or the first one not evaluated, or why the node was not judged) and how
// many more there are.
func (v Verdict) Detail(max int) string {
	switch {
	case v.State == Unhealthy:
		return Summary("", v.Bad, max)
	case v.Error != "":
		return cut(clean("not evaluated: "+v.Error), max)
	case v.State == Unknown:
		return Summary("not evaluated:", v.Unread, max)
	}
	return cut("ok: no problem in these checks", max)
}
