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
	"github.com/sparkrig/sparkrig/internal/health"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Prefix starts every reason sparkrig writes; only drains whose reason
// starts with it are ever resumed.
const Prefix = health.Prefix

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
	return health.Summary(Prefix, fs, MaxReason)
}
