package cli

import (
	"bytes"
	"context"
	"errors"
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
	// flag prefixes the policy flags' names ("npd-" for doctor --npd).
	flag string
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
		return health.Policy{}, "", exitf(ExitUnknown, "%s: --%sunhealthy-on %v", cmd, o.flag, err)
	}
	var profile check.Profile
	if o.profile != "" {
		if profile, err = check.ParseProfile(o.profile); err != nil {
			return health.Policy{}, "", exitf(ExitUnknown, "%s: --profile: %v", cmd, err)
		}
	}
	p := health.Policy{Severity: sev, Never: o.never, Always: o.always}
	if err := p.Validate("--"+o.flag, health.KnownIDs()); err != nil {
		return health.Policy{}, "", exitf(ExitUnknown, "%s: %v", cmd, err)
	}
	return p, profile, nil
}

// localAudit audits this machine as doctor does, with the verdict set.
func localAudit(ctx context.Context, env *Env, profile check.Profile) *report.Report {
	r := auditReport([]hostCapture{acquire.Local(ctx, Version, env.Now)}, profile, env)
	r.Status = reportStatus(r, false)
	return r
}

// writeTextfile writes r for node_exporter's textfile collector, whole or
// not at all (writeAtomic), so the collector never reads half a file.
func writeTextfile(path string, r *report.Report) error {
	var b bytes.Buffer
	if err := render.Prometheus(&b, r); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// writeAtomic writes data to a temporary file beside path (mode 644) and
// renames it over path; an error names path, never the temporary file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
