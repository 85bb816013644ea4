package cli

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/slurm"
)

// npdOptions are doctor's node-problem-detector plugin flags.
type npdOptions struct {
	enabled bool
	checks  []string
	maxOut  int
	policy  policyOptions
}

// The node-problem-detector custom plugin protocol
// (kubernetes/node-problem-detector pkg/custompluginmonitor/plugin/plugin.go):
// exit 0 is OK, 1 a problem (NonOK), anything else unknown; stdout, trimmed,
// is cut to max_output_length bytes (80 by default) for the condition's
// message.
const (
	npdOK      = 0
	npdProblem = 1
	npdUnknown = ExitUnknown
)

func addNPDFlags(fs *pflag.FlagSet, o *npdOptions) {
	fs.BoolVar(&o.enabled, "npd", false, "run as a node-problem-detector custom plugin: exit 0 OK, 1 problem, 3 unknown; one line on stdout within --npd-max-output")
	fs.StringArrayVar(&o.checks, "npd-checks", nil, "with --npd: the check IDs (shell patterns, e.g. 'gpu.*') this plugin's condition covers (repeatable; default all)")
	fs.IntVar(&o.maxOut, "npd-max-output", 80, "with --npd: the plugin config's max_output_length, in bytes")
	fs.StringVar(&o.policy.on, "npd-unhealthy-on", "fail", "with --npd: least severe finding that sets the condition: fail, warn or none")
	fs.StringArrayVar(&o.policy.never, "npd-never", nil, "with --npd: check IDs (shell patterns) that never set the condition (repeatable)")
	fs.StringArrayVar(&o.policy.always, "npd-always", nil, "with --npd: check IDs (shell patterns) whose warn findings set it too (repeatable)")
}

// runNPD audits this node (or one --snapshot) and answers as a custom
// plugin does. Everything it prints goes to stdout, one line; the exit
// status is the verdict.
func runNPD(ctx context.Context, env *Env, opts *doctorOptions) error {
	o := &opts.npd
	o.policy.profile = opts.profile
	if o.maxOut < 16 {
		return npdAnswer(env, npdUnknown, "sparkrig: --npd-max-output must be 16 bytes or more", 80)
	}
	policy, profile, err := o.policy.policy("doctor")
	if err != nil {
		return npdAnswer(env, npdUnknown, "sparkrig: "+err.Error(), o.maxOut)
	}
	var r *report.Report
	switch {
	case opts.remote.enabled():
		return npdAnswer(env, npdUnknown, "sparkrig: --npd audits this node (or one --snapshot), not --hosts", o.maxOut)
	case len(opts.snapshots) > 1:
		return npdAnswer(env, npdUnknown, "sparkrig: --npd audits one node: give one --snapshot", o.maxOut)
	case len(opts.snapshots) == 1:
		r = auditReport(readSnapshots(opts.snapshots), profile, env)
	default:
		r = localAudit(ctx, env, profile)
	}
	var fs []report.Finding
	for _, h := range r.Hosts {
		if h.Status != report.HostAudited {
			return npdAnswer(env, npdUnknown, "sparkrig: "+h.Error, o.maxOut)
		}
		for _, f := range h.Findings {
			if len(o.checks) == 0 || slices.ContainsFunc(o.checks, func(p string) bool { ok, _ := path.Match(p, f.ID); return ok }) {
				fs = append(fs, f)
			}
		}
	}
	if bad := policy.Unhealthy(fs); len(bad) > 0 {
		return npdAnswer(env, npdProblem, slurm.Reason(bad), o.maxOut)
	}
	return npdAnswer(env, npdOK, "sparkrig: ok: no problem in these checks", o.maxOut)
}

// npdAnswer prints msg as one line cut to max bytes (on a rune boundary:
// node-problem-detector would cut it mid-character) and exits with code.
func npdAnswer(env *Env, code int, msg string, max int) error {
	fmt.Fprintln(env.Stdout, cutBytes(sanitize.Line(strings.TrimSpace(msg)), max))
	return statusError(code)
}

func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
