package doctor

import (
	"context"
	"errors"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
)

// RunOptions are the inputs of the doctor command's pipeline (Run): where
// the nodes' evidence comes from and how the audit is made.
type RunOptions struct {
	// Audit are the audit's options; its Now is taken from Now when zero.
	Audit Options
	// Remote captures Hosts through Acquire's runner (SSH, srun, kubectl);
	// else Snapshots are read; else this machine is captured.
	Remote    bool
	Hosts     []string
	Acquire   acquire.Options
	Snapshots []string
	// Now is the clock of a capture of this machine and of the report.
	Now func() time.Time
	// Qualify, when set, tests the links of the captured nodes and adds
	// what it found to the report (doctor --qualify); it needs Remote.
	Qualify func(ctx context.Context, nodes []acquire.Node, r *report.Report) error
}

// ErrMixed and ErrQualifyNeedsHosts are the inputs Run refuses.
var (
	ErrMixed             = errors.New("--snapshot and SSH hosts do not mix; audit one or the other")
	ErrQualifyNeedsHosts = errors.New("--qualify tests links over SSH: give --hosts")
)

// Run is the doctor command's pipeline: every node's evidence acquired
// (over the runner, from snapshots keeping what fix reads, or this machine),
// audited (Audit), the links qualified when asked, and the report's one
// verdict set. A node that could not be acquired is a host not audited, with
// its reason; only inputs that cannot be audited at all are an error.
func Run(ctx context.Context, o RunOptions) (*report.Report, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	var nodes []acquire.Node
	switch {
	case o.Remote && len(o.Snapshots) > 0:
		return nil, ErrMixed
	case o.Remote:
		ao := o.Acquire
		if ao.ToolVersion == "" {
			ao.ToolVersion = o.Audit.Version
		}
		nodes = acquire.Remote(ctx, o.Hosts, ao)
	case len(o.Snapshots) > 0:
		nodes = acquire.Snapshots(o.Snapshots, fix.Evidence)
	default:
		nodes = []acquire.Node{acquire.Local(ctx, o.Audit.Version, now)}
	}
	ao := o.Audit
	if ao.Now.IsZero() {
		ao.Now = now()
	}
	r := Audit(nodes, ao).Report
	if o.Qualify != nil {
		if !o.Remote {
			return nil, ErrQualifyNeedsHosts
		}
		if err := o.Qualify(ctx, nodes, r); err != nil {
			return nil, err
		}
	}
	r.Status = r.Overall()
	return r, nil
}

// ForFix is the audit fix plans with (fix.RunOptions.Audit): Audit with the
// plan's options, stamped with version and the time of the audit.
func ForFix(version string, now func() time.Time) func([]acquire.Node, fix.Options) fix.Audited {
	return func(nodes []acquire.Node, plan fix.Options) fix.Audited {
		res := Audit(nodes, Options{Version: version, Now: now(), Fix: plan})
		return fix.Audited{Report: res.Report, Plan: res.Plan, PlanErr: res.PlanErr, Detected: res.Detected,
			Unresolved: Unresolved(res.Report)}
	}
}
