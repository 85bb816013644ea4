package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/health"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

// policyOptions are the flags of the one health policy the Slurm health
// check, the node-problem-detector plugin and the exporter share.
type policyOptions struct {
	on      string
	never   []string
	always  []string
	profile string
}

func addPolicyFlags(fs *pflag.FlagSet, o *policyOptions, what string) {
	fs.StringVar(&o.on, "unhealthy-on", "fail", "least severe finding that "+what+": fail, warn or none (a warn never does by default)")
	fs.StringArrayVar(&o.never, "never", nil, "check IDs (shell patterns, e.g. 'os.*') that never "+what+" (repeatable; wins over --always)")
	fs.StringArrayVar(&o.always, "always", nil, "check IDs (shell patterns) whose warn findings "+what+" too (repeatable)")
	fs.StringVar(&o.profile, "profile", "", "platform profile: dgx-spark, gpu-server or no-gpu (default: detected)")
}

func (o *policyOptions) policy(cmd string) (health.Policy, check.Profile, error) {
	sev, err := health.ParseSeverity(o.on)
	if err != nil {
		return health.Policy{}, "", exitf(ExitUnknown, "%s: --unhealthy-on %v", cmd, err)
	}
	var profile check.Profile
	if o.profile != "" {
		if profile, err = check.ParseProfile(o.profile); err != nil {
			return health.Policy{}, "", exitf(ExitUnknown, "%s: --profile: %v", cmd, err)
		}
	}
	return health.Policy{Severity: sev, Never: o.never, Always: o.always}, profile, nil
}

// localAudit audits this machine as doctor does, with the verdict set.
func localAudit(ctx context.Context, env *Env, profile check.Profile) *report.Report {
	r := auditReport([]hostCapture{acquire.Local(ctx, Version, env.Now)}, profile, env)
	r.Status = reportStatus(r, false)
	return r
}

// hostFindings are the findings of the report's audited host.
func hostFindings(r *report.Report) []report.Finding {
	for _, h := range r.Hosts {
		if h.Status == report.HostAudited {
			return h.Findings
		}
	}
	return nil
}

// writeTextfile writes r for node_exporter's textfile collector: to a
// temporary file in the same directory, renamed over path, so the collector
// never reads half a file.
func writeTextfile(path string, r *report.Report) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".sparkrig-*.prom.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := render.Prometheus(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
