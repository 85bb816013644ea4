// Package slurm is sparkrig's Slurm health check: the reason it writes for
// the findings that drain a node (which ones do is health.Policy), what to
// do given the node's state as scontrol shows it, and the scontrol calls
// that do it.
//
// The conventions are Slurm's and NHC's (slurm.conf(5) HealthCheckProgram;
// mej/nhc helpers/node-mark-offline and node-mark-online): the health check
// drains the node itself with `scontrol update NodeName=N State=DRAIN
// Reason=...` (its exit status drains nothing), writes its own prefix in the
// reason, resumes only nodes whose reason carries that prefix, and fails
// open: when the checker cannot run, nothing is drained.
package slurm

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Prefix starts every reason sparkrig writes; only drains whose reason
// starts with it are ever resumed.
const Prefix = "sparkrig:"

// MaxReason bounds a reason's length in bytes: it shows in sinfo -R and
// squeue, one line each.
const MaxReason = 160

// Reason is the drain reason for the draining findings: "sparkrig: <check
// id>: <subject>: <what was seen>" for the first, and how many more there
// are. Control characters become spaces; it is cut to MaxReason bytes.
func Reason(fs []report.Finding) string {
	if len(fs) == 0 {
		return ""
	}
	f := fs[0]
	text := f.Observed
	if text == "" {
		text = f.Title
	}
	if f.Subject != "" && f.Subject != "node" {
		text = f.Subject + ": " + text
	}
	more := ""
	if len(fs) > 1 {
		more = fmt.Sprintf(" (+%d more)", len(fs)-1)
	}
	head := Prefix + " " + clean(f.ID) + ": "
	return head + cut(clean(text), MaxReason-len(head)-len(more)) + more
}

// clean makes s one printable line.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to n bytes on a rune boundary, ending with "…" when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:max(n, 0)]) + "…"
}
