package fix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// LauncherEnvID is the finding of a launcher environment file (EnvPath)
// that no longer holds the settings the cluster's rails need.
const LauncherEnvID = "nccl.launcher-env"

// LauncherEnvKey is the key of host's LauncherEnvID finding.
func LauncherEnvKey(host string) report.Key {
	return report.Key{ID: LauncherEnvID, Host: host, Subject: EnvPath}
}

// envDiffers lists how the launcher environment file old differs from
// env, setting by setting ("NCCL_IB_HCA=a (wants a,b)", "UCX_NET_DEVICES
// missing"); comments and the order of lines do not count.
func envDiffers(old []byte, env []fabric.Var) []string {
	have := facts.ParseKeyValues(old)
	var out []string
	for _, e := range env {
		switch v, ok := have[e.Name]; {
		case !ok:
			out = append(out, e.Name+" missing (wants "+e.Value+")")
		case v != e.Value:
			out = append(out, fmt.Sprintf("%s=%s (wants %s)", e.Name, v, e.Value))
		}
	}
	return out
}

// LauncherEnvFindings are the warn findings of every host whose launcher
// environment file exists but no longer holds the cluster's settings: the
// plan's change to that file resolves each.
func LauncherEnvFindings(p *Plan) []report.Finding {
	if p == nil {
		return nil
	}
	var out []report.Finding
	for _, h := range p.Hosts {
		i := slices.IndexFunc(h.Files, func(c Change) bool { return c.Path == EnvPath && c.OldExists && c.Changed() })
		if i < 0 {
			continue
		}
		k := LauncherEnvKey(h.Host)
		out = append(out, report.Finding{ID: k.ID, Host: k.Host, Subject: k.Subject, Severity: report.Warn,
			Title:    "launcher environment written by sparkrig fix",
			Observed: strings.Join(envDiffers(h.Files[i].Old, p.Env), "; "),
			Expected: "the settings the cluster's rails need now (those sparkrig bench exports)",
			Why:      "jobs started with this file (docker --env-file, set -a; . FILE, systemd EnvironmentFile=) run NCCL, UCX, MPI and Gloo on devices and interfaces the rails no longer are",
			Source:   "seed 001 (NCCL_SOCKET_IFNAME, NCCL_IB_HCA per node); internal/fabric"})
	}
	return out
}
