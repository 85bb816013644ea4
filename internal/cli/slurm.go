package cli

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/health"
	"github.com/sparkrig/sparkrig/internal/slurm"
)

// slurmOptions are the slurm command's flags.
type slurmOptions struct {
	policy   policyOptions
	node     string
	textfile string
	scontrol string
	dryRun   bool
	lockFile string
	timeout  time.Duration
	// scontrolTimeout bounds each scontrol call.
	scontrolTimeout time.Duration
}

func newSlurmCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slurm health|prolog|epilog",
		Short: "Slurm health check (HealthCheckProgram) and prolog/epilog check of this node",
		Long: `slurm audits this node as doctor does, fast, for Slurm to run on every node.

  health  for HealthCheckProgram (runs as root on the node). A finding that
          makes the node unhealthy (a fail, by default; a warn never does
          unless --unhealthy-on or --always says so) drains it:
            scontrol update NodeName=N State=DRAIN Reason="sparkrig: <check id>: <what>"
          When the node is healthy again, a drain whose reason starts with
          "sparkrig:" is resumed; a drain or down set by anyone else is never
          touched. When sparkrig cannot check (scontrol or the audit fails,
          evidence a check needs could not be read, a tool timed out, another
          run holds the lock), nothing changes, never a drain nor a resume,
          and it says why. Every scontrol call has a deadline.
          Exit 0 healthy, 2 unhealthy (drained), 3 could not check.
  prolog  for Prolog and Epilog: calls no Slurm command. Exit 1 when the node
  epilog  is unhealthy under the policy (Slurm then drains it, and requeues
          the job for a prolog), else 0, also when sparkrig cannot check
          (said on stderr). deploy/slurm's scripts give both the policy in
          /etc/default/sparkrig-health.

The node's name is --node, else $SLURMD_NODENAME, else the host name.
--textfile also writes the audit for node_exporter's textfile collector,
with the same metric names as doctor --format prometheus.`,
		Example: `  # slurm.conf, with deploy/slurm's scripts installed in /usr/local/sbin
  HealthCheckProgram=/usr/local/sbin/sparkrig-health.sh
  HealthCheckInterval=300
  HealthCheckNodeState=ANY
  Prolog=/usr/local/sbin/sparkrig-prolog.sh
  Epilog=/usr/local/sbin/sparkrig-prolog.sh
  # by hand, changing nothing
  sparkrig slurm health --dry-run --always 'net.*'`,
		Args: cobra.NoArgs,
	}
	for _, mode := range []string{"health", "prolog", "epilog"} {
		o := &slurmOptions{}
		sub := &cobra.Command{
			Use:   mode,
			Short: map[string]string{"health": "HealthCheckProgram: drain on a problem, resume sparkrig's own drains", "prolog": "Prolog: exit 1 when the node is unhealthy; no Slurm commands", "epilog": "Epilog: exit 1 when the node is unhealthy; no Slurm commands"}[mode],
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if mode == "health" {
					return runSlurmHealth(cmd.Context(), env, o)
				}
				return runSlurmJobCheck(cmd.Context(), env, o, mode)
			},
		}
		f := sub.Flags()
		addPolicyFlags(f, &o.policy, "makes the node unhealthy")
		f.DurationVar(&o.timeout, "audit-timeout", 40*time.Second, "deadline for the audit (a tool still running then is not evaluated; keep it below HealthCheckTimeout, 60s by default)")
		f.StringVar(&o.textfile, "textfile", "", "also write the audit here for node_exporter's textfile collector (e.g. /var/lib/prometheus/node-exporter/sparkrig.prom)")
		if mode == "health" {
			f.StringVar(&o.node, "node", "", "the node's Slurm name (default $SLURMD_NODENAME, else the host name)")
			f.StringVar(&o.scontrol, "scontrol", "scontrol", "the scontrol program")
			f.BoolVar(&o.dryRun, "dry-run", false, "say what would be done; change nothing")
			f.DurationVar(&o.scontrolTimeout, "scontrol-timeout", slurm.DefaultScontrolTimeout, "deadline for each scontrol call")
			f.StringVar(&o.lockFile, "lock-file", slurm.DefaultLockFile, "file locked while the check runs, so two runs never overlap (a second exits 3 and changes nothing)")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// slurmAudit audits this node within --audit-timeout and judges it under
// the policy; a checker that fails (panics) is an error, never a finding.
func slurmAudit(ctx context.Context, env *Env, o *slurmOptions, name string) (v health.Verdict, err error) {
	policy, profile, err := o.policy.policy(name)
	if err != nil {
		return v, err
	}
	defer func() {
		if p := recover(); p != nil {
			v, err = health.Verdict{}, fmt.Errorf("the audit failed: %s", sanitize.Line(fmt.Sprint(p)))
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	r := localAudit(ctx, env, profile)
	if o.textfile != "" {
		if werr := writeTextfile(o.textfile, r); werr != nil {
			fmt.Fprintf(env.Stderr, "sparkrig: %s: --textfile: %s\n", name, sanitize.Line(werr.Error()))
		}
	}
	if len(r.Hosts) != 1 {
		return v, fmt.Errorf("the audit gave no node")
	}
	return policy.JudgeHost(r.Hosts[0], nil), nil
}

func slurmNodeName(env *Env, o *slurmOptions, name string) (string, error) {
	node := o.node
	if node == "" {
		node = env.Getenv("SLURMD_NODENAME")
	}
	if node == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", exitf(ExitUnknown, "%s: no node name: give --node (%v)", name, err)
		}
		node, _, _ = strings.Cut(h, ".")
	}
	return node, nil
}

func runSlurmHealth(ctx context.Context, env *Env, o *slurmOptions) error {
	const name = "slurm health"
	if _, _, err := o.policy.policy(name); err != nil {
		return err
	}
	node, err := slurmNodeName(env, o, name)
	if err != nil {
		return err
	}
	if !o.dryRun {
		unlock, err := slurm.Lock(o.lockFile)
		if err != nil {
			return exitf(ExitUnknown, "%s: %s: %s; the node is left as it is", name, node, sanitize.Line(err.Error()))
		}
		defer unlock()
	}
	v, err := slurmAudit(ctx, env, o, name)
	if err != nil {
		return exitf(ExitUnknown, "%s: %s: %v; the node is left as it is", name, node, err)
	}
	sc := slurm.Scontrol{Bin: o.scontrol, Timeout: o.scontrolTimeout}
	st, err := sc.Show(ctx, node)
	if err != nil {
		return exitf(ExitUnknown, "%s: %s: %s; the node is left as it is", name, node, sanitize.Line(err.Error()))
	}
	a := slurm.Decide(st, v)
	verb := map[slurm.ActionKind]string{slurm.Drain: "drain", slurm.Resume: "resume", slurm.Nothing: "leave"}[a.Kind]
	if o.dryRun {
		verb = "would " + verb
	}
	fmt.Fprintf(env.Stdout, "%s: %s: %s\n", node, verb, sanitize.Line(a.Why))
	if !o.dryRun {
		switch a.Kind {
		case slurm.Drain:
			err = sc.Drain(ctx, node, a.Reason)
		case slurm.Resume:
			err = sc.Resume(ctx, node)
		}
		if err != nil {
			return exitf(ExitUnknown, "%s: %s: %s", name, node, sanitize.Line(err.Error()))
		}
	}
	return statusError(map[health.State]int{health.Healthy: ExitOK, health.Unhealthy: ExitCritical, health.Unknown: ExitUnknown}[v.State])
}

// runSlurmJobCheck is the prolog and epilog check: exit 1 when the node is
// unhealthy, else 0, also when the check cannot run or cannot tell (a
// failing prolog drains the node and requeues the job: only a real problem
// may do that).
func runSlurmJobCheck(ctx context.Context, env *Env, o *slurmOptions, mode string) error {
	name := "slurm " + mode
	if _, _, err := o.policy.policy(name); err != nil {
		return err
	}
	v, err := slurmAudit(ctx, env, o, name)
	switch {
	case err != nil:
		fmt.Fprintf(env.Stderr, "sparkrig: %s: %v; not failing the job for it\n", name, err)
	case v.State == health.Unknown:
		fmt.Fprintf(env.Stderr, "sparkrig: %s: could not check (%s); not failing the job for it\n", name, sanitize.Line(v.Detail(slurm.MaxReason)))
	case v.State == health.Unhealthy:
		fmt.Fprintln(env.Stdout, sanitize.Line(slurm.Reason(v.Bad)))
		return statusError(1)
	}
	return nil
}
