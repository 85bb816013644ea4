package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/health"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// npdOptions are doctor's node-problem-detector plugin flags.
type npdOptions struct {
	enabled bool
	checks  []string
	maxOut  int
	timeout time.Duration
	policy  policyOptions
}

func addNPDFlags(fs *pflag.FlagSet, o *npdOptions) {
	fs.BoolVar(&o.enabled, "npd", false, "run as a node-problem-detector custom plugin: exit 0 OK, 1 problem, 3 unknown; one line on stdout within --npd-max-output")
	fs.StringArrayVar(&o.checks, "npd-checks", nil, "with --npd: the check IDs (shell patterns, e.g. 'gpu.*') this plugin's condition covers (repeatable; default all)")
	fs.IntVar(&o.maxOut, "npd-max-output", 80, "with --npd: the plugin config's max_output_length, in bytes")
	fs.DurationVar(&o.timeout, "npd-timeout", 20*time.Second, "with --npd: answer unknown if the audit has not finished by then (keep it below the rule's timeout, 25s in the shipped configs)")
	fs.StringVar(&o.policy.on, "npd-unhealthy-on", "fail", "with --npd: least severe finding that sets the condition: fail, warn or none")
	fs.StringArrayVar(&o.policy.never, "npd-never", nil, "with --npd: check IDs (shell patterns) that never set the condition (repeatable)")
	fs.StringArrayVar(&o.policy.always, "npd-always", nil, "with --npd: check IDs (shell patterns) whose warn findings set it too (repeatable)")
}

// runNPD audits this node (or one --snapshot) and answers as a custom
// plugin does, within --npd-timeout whatever the audit does. Everything it
// prints goes to stdout, one line; the exit status is the verdict.
func runNPD(ctx context.Context, env *Env, opts *doctorOptions) error {
	o := &opts.npd
	if o.maxOut < health.NPDMinOutput {
		return npdAnswer(env, health.NPDCannot(fmt.Sprintf("--npd-max-output must be %d bytes or more", health.NPDMinOutput), 80))
	}
	if o.timeout <= 0 {
		return npdAnswer(env, health.NPDCannot("--npd-timeout must be positive", o.maxOut))
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	done := make(chan health.Answer, 1)
	go func() { done <- npdJudge(ctx, env, opts) }()
	select {
	case a := <-done:
		return npdAnswer(env, a)
	case <-time.After(o.timeout + time.Second):
		// the audit's commands are killed at ctx's end; one that still holds
		// on (a read in the kernel) does not hold the answer
		return npdAnswer(env, health.NPDCannot("not evaluated: the audit did not finish within --npd-timeout "+o.timeout.String(), o.maxOut))
	}
}

// npdJudge is the plugin's answer for this node or the one snapshot.
func npdJudge(ctx context.Context, env *Env, opts *doctorOptions) health.Answer {
	o := &opts.npd
	o.policy.profile, o.policy.flag = opts.profile, "npd-"
	policy, profile, err := o.policy.policy("doctor")
	if err == nil {
		err = health.ValidatePatterns("--npd-checks", o.checks, health.KnownIDs())
	}
	if err != nil {
		return health.NPDCannot(strings.TrimPrefix(err.Error(), "doctor: "), o.maxOut)
	}
	var r *report.Report
	switch {
	case opts.remote.enabled():
		return health.NPDCannot("--npd audits this node (or one --snapshot), not --hosts", o.maxOut)
	case len(opts.snapshots) > 1:
		return health.NPDCannot("--npd audits one node: give one --snapshot", o.maxOut)
	case len(opts.snapshots) == 1:
		r = auditReport(readSnapshots(opts.snapshots), profile, env)
	default:
		r = localAudit(ctx, env, profile)
	}
	if len(r.Hosts) != 1 {
		return health.NPDCannot("not evaluated: no node audited", o.maxOut)
	}
	return health.NPD(policy.JudgeHost(r.Hosts[0], o.checks), o.maxOut)
}

// npdAnswer prints the answer's line cut to the byte limit (on a rune
// boundary: node-problem-detector would cut it mid-character) and exits
// with its code.
func npdAnswer(env *Env, a health.Answer) error {
	fmt.Fprintln(env.Stdout, sanitize.Line(strings.TrimSpace(a.Line)))
	return statusError(a.Code)
}
