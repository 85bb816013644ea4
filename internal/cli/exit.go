package cli

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
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
                 (also beside warnings: only a fail outranks an input not read)
  130  interrupted`

// reportStatus is the report's one verdict (report.Overall, in the one
// ranking); bad says an input could not be read, which makes anything short
// of critical unknown (report.Unread).
func reportStatus(r *report.Report, bad bool) report.Verdict {
	return report.Unread(r.Overall(), bad)
}

// exitFor maps a verdict to the exit status: the one mapping every command
// uses. "no expectation" is no problem.
func exitFor(v report.Verdict) int {
	switch v {
	case report.VerdictOK, report.VerdictNone, "":
		return ExitOK
	case report.VerdictWarning:
		return ExitWarning
	case report.VerdictCritical:
		return ExitCritical
	}
	return ExitUnknown
}

// checkFormat is the one --format check (render.CheckFormat): value must be
// one of allowed, a list from render ("md" is accepted for "markdown"); it
// returns the canonical name.
func checkFormat(cmd, value string, allowed []string) (string, error) {
	v, err := render.CheckFormat(value, allowed)
	if err != nil {
		return "", exitf(ExitUnknown, "%s: %v", cmd, err)
	}
	return v, nil
}

// sameNodeLines says of each node given twice (two captures of one node)
// what became of it, and, where that leaves fewer than two distinct nodes,
// why there is no cluster section.
func sameNodeLines(cmd string, r *report.Report, what string) []string {
	var out []string
	distinct := 0
	for _, h := range r.Hosts {
		if h.Status == report.HostAudited && h.SameAs == "" {
			distinct++
		}
	}
	for _, h := range r.Hosts {
		if h.SameAs == "" {
			continue
		}
		line := fmt.Sprintf("sparkrig: %s: %s is given twice (%s and %s, the same host name and machine id): %s", cmd, h.Host, h.SameAs, h.Source, what)
		if distinct < 2 && cmd == "doctor" {
			line += "; one distinct node makes no cluster, so there is no cluster section"
		}
		out = append(out, sanitize.Line(line))
	}
	return out
}
