package cli

import (
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Exit statuses follow the monitoring-plugin convention (Nagios, Icinga, gcm),
// so sparkrig drops into existing monitoring as is.
const (
	ExitOK          = 0   // nothing worse than info
	ExitWarning     = 1   // a warn finding, no fail
	ExitCritical    = 2   // a fail finding (or a result below its threshold)
	ExitUnknown     = 3   // could not evaluate: usage error, capture failed, bad input, host unreachable
	ExitInterrupted = 130 // interrupted by a signal
)

const exitHelp = `Exit status (monitoring-plugin convention):
  0    OK        nothing worse than info
  1    WARNING   a warn finding, no fail
  2    CRITICAL  a fail finding, or a result below its threshold
  3    UNKNOWN   could not evaluate: usage error, capture failed, bad snapshot or input, host unreachable
  130  interrupted`

// reportStatus is the one verdict over a report, in the doctor's order: a
// fail finding or a result below its threshold is critical; else a warn
// finding or a result near its threshold is a warning; else an input that
// could not be read (bad), a host not audited or an unreadable file makes it
// unknown; else ok.
func reportStatus(r *report.Report, bad bool) string {
	worst := report.VerdictOK
	if r.Cluster != nil {
		for _, f := range r.Cluster.Findings {
			worst = worse(worst, findingStatus(f.Severity))
		}
	}
	switch r.Worst() {
	case check.Fail:
		worst = report.VerdictCritical
	case check.Warn:
		worst = worse(worst, report.VerdictWarning)
	}
	unknown := bad || r.Status == report.VerdictUnknown
	for _, a := range r.Analyses {
		if a.Status == report.VerdictUnknown {
			unknown = true
			continue
		}
		worst = worse(worst, a.Status)
	}
	for _, h := range r.Hosts {
		if h.Status != "" && h.Status != report.HostAudited {
			unknown = true
		}
	}
	if worst == report.VerdictOK && unknown {
		return report.VerdictUnknown
	}
	return worst
}

func findingStatus(s check.Severity) string {
	switch s {
	case check.Fail:
		return report.VerdictCritical
	case check.Warn:
		return report.VerdictWarning
	}
	return report.VerdictOK
}

// worse is the worse of two verdicts: critical, then warning, then the rest.
func worse(a, b string) string {
	rank := func(s string) int {
		switch s {
		case report.VerdictCritical:
			return 2
		case report.VerdictWarning:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// exitFor maps a verdict or report status to the exit status: the one
// mapping every command uses. "no expectation" is no problem.
func exitFor(status string) int {
	switch status {
	case report.VerdictOK, report.VerdictNone, "":
		return ExitOK
	case report.VerdictWarning:
		return ExitWarning
	case report.VerdictCritical:
		return ExitCritical
	}
	return ExitUnknown
}

// checkFormat is the one --format check: value must be one of allowed ("md"
// is accepted for "markdown"); it returns the canonical name.
func checkFormat(cmd, value string, allowed []string) (string, error) {
	if value == "md" && slices.Contains(allowed, "markdown") {
		value = "markdown"
	}
	if !slices.Contains(allowed, value) {
		return "", exitf(ExitUnknown, "%s: unknown --format %q (want one of %s)", cmd, value, strings.Join(allowed, ", "))
	}
	return value, nil
}
