package cli

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/topology"
	"github.com/sparkrig/sparkrig/internal/tuning"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// fixOptions are the fix command's flags.
// ifnameList is one or more Linux interface names (at most 15 characters
// each), comma-separated: what NCCL_SOCKET_IFNAME takes, and nothing a
// sourced file or a shell could read as something else.
var ifnameList = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}(,[A-Za-z0-9_.:@-]{1,15})*$`) })

type fixOptions struct {
	plan, apply, rollback bool
	remote                remoteOptions
	snapshots             []string
	topology              string
	addressing            string
	subnets               []string
	firstHost, mtu, port  int
	socketIfname          string
	launcherEnv           bool
	renumber              bool
	output                string
	format                string
	deadman               time.Duration
	activate              string
}

const fixHelp = `fix changes only what a doctor finding (warn or fail) requires, on every node:
the ConnectX-7 twins' stanzas in /etc/netplan/40-cx7.yaml (mode 600: both twins of
every cabled port addressed, each on its own subnet, MTU 9000), the kernel parameters
the doctor flags (/etc/sysctl.d/60-sparkrig.conf; in a ring of four or more, forwarding
and loose reverse-path filtering, with a netplan route to every subnet a node is not
on), the NCCL lines of /etc/nccl.conf it flags, and /etc/sparkrig/cluster.env (the
NCCL, UCX, Open MPI and Gloo settings for launchers that sparkrig bench derives) where
it is stale, or with --launcher-env. Every change names the findings it resolves.

The addressing in place is kept where it is valid (each rail's two ends in one subnet,
rails on distinct subnets, no address twice); only what is not is changed, and an
address set live but in no configuration file is persisted as it is. --renumber (or
--subnets) asks for a fresh scheme. Existing files are edited, never replaced: keys,
interfaces and comments the user wrote stay. A healthy cluster plans nothing.

  --plan      (default) print per host a unified diff against what is there now, and
              the doctor findings each change resolves; -o DIR also writes the full
              files under DIR/<host>/<path>. Changes nothing.
  --apply     over SSH (root, or sudo -n): back up every file to
              /var/backups/sparkrig/<time>/, write, arm a dead-man timer on the host,
              run netplan apply and sysctl --system, check back over a new connection
              and confirm; if the host stops answering its timer restores the backup,
              if the checks got worse sparkrig restores it at once.
  --rollback  restore the newest backup on every host.

fix never touches the management port (enP7s7 on a DGX Spark) or the interface the
SSH session arrives on, and refuses a plan that would.

Exit status (the monitoring-plugin convention every command follows): --plan exits
with the doctor's status on the same evidence, whatever it proposes: 0 nothing wrong
(and nothing to change), 1 a warn finding, 2 a fail finding; --apply and --rollback:
0 all applied, 1 applied with problems left, 2 a host refused or rolled back; 3 bad
input or a host unreachable (also beside warnings); 130 interrupted.`

func newFixCmd(env *Env) *cobra.Command {
	o := &fixOptions{}
	cmd := &cobra.Command{
		Use:   "fix (--plan | --apply | --rollback) (--hosts H1,H2 | --snapshot S1 --snapshot S2)",
		Short: "write the network and NCCL configuration a topology needs",
		Long:  fixHelp,
		Example: `  sparkrig fix --plan --hosts spark-01,spark-02
  sparkrig fix --plan --snapshot a.tar.gz --snapshot b.tar.gz --topology two-nodes-one-cable -o proposed/
  sparkrig fix --plan --hosts spark-0[1-3] --topology three-node-ring --subnets 10.10.0.0/24,10.10.1.0/24,10.10.2.0/24 --subnets 10.10.3.0/24,10.10.4.0/24,10.10.5.0/24
  sparkrig fix --apply --hosts spark-01,spark-02
  sparkrig fix --rollback --hosts spark-01,spark-02`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runFix(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.plan, "plan", false, "show what would change (the default)")
	f.BoolVar(&o.apply, "apply", false, "apply the plan over SSH, with backup and automatic rollback")
	f.BoolVar(&o.rollback, "rollback", false, "restore the newest backup on every host")
	f.StringArrayVar(&o.snapshots, "snapshot", nil, "plan offline from captured snapshots, in node order (repeatable)")
	f.StringVar(&o.topology, "topology", "", topology.Names(fix.Topologies)+" (default: detected)")
	f.StringVar(&o.addressing, "addressing", fix.Static, "static or link-local (one-cable only)")
	f.StringSliceVar(&o.subnets, "subnets", nil, "rail subnets in order, comma-separated or repeated, renumbering every rail (default: keep the addressing in place)")
	f.BoolVar(&o.renumber, "renumber", false, "give every rail a fresh address (192.168.100.0/24, 192.168.101.0/24, ...) even where the addressing in place is valid")
	f.IntVar(&o.firstHost, "first-host", 10, "host number of the first node on every rail; node i gets first-host+i")
	f.IntVar(&o.mtu, "mtu", tuning.RailMTU, "MTU of the rails")
	intVarRange(f, &o.port, "port", -1, 0, len(platform.SparkPorts)-1, fmt.Sprintf("-1 (the port with carrier) or a port from 0 to %d", len(platform.SparkPorts)-1),
		"QSFP port cabled in one-cable and switch topologies; -1 picks the port with carrier", -1)
	f.StringVar(&o.socketIfname, "socket-ifname", "", "bootstrap interface for NCCL/UCX/MPI/Gloo (default, as bench derives it: the nodes' own NCCL_SOCKET_IFNAME where it reaches every node; on two nodes the first rail's netdevs; on three or more an interface without RDMA on a subnet every node shares, such as the management port)")
	f.BoolVar(&o.launcherEnv, "launcher-env", false, "also write "+fix.EnvPath+" (NCCL, UCX, Open MPI and Gloo settings for launchers) where it does not exist; one that exists is kept current without it")
	f.StringVarP(&o.output, "output", "o", "", "also write each host's proposed files under DIR/<host>/<path>")
	f.StringVar(&o.format, "format", "text", "text or json")
	f.DurationVar(&o.deadman, "deadman", 90*time.Second, "how long a host waits for confirmation before restoring by itself")
	f.StringVar(&o.activate, "activate", "netplan", "how --apply makes changes take effect: netplan (netplan apply, sysctl --system) or ip (ip addr/link and sysctl -p, for hosts where no netplan renderer runs, such as network namespaces)")
	addRemoteFlags(f, &o.remote)
	for _, name := range []string{"no-ping", "parallel", "timeout"} {
		f.MarkHidden(name) // capture-only knobs; fix works on every node at once
	}
	return cmd
}

func runFix(ctx context.Context, env *Env, o *fixOptions) error {
	defer o.remote.closeRunner()
	hosts, err := o.remote.nodes(ctx, env)
	if err != nil {
		return exitf(ExitUnknown, "fix: %v", err)
	}
	if err := o.validate(hosts); err != nil {
		return err
	}
	ro, err := o.runOptions(env, hosts)
	if err != nil {
		return err
	}
	if o.rollback {
		return fixRollback(ctx, env, ro.Targets)
	}
	if o.apply {
		a, err := fix.Prepare(ctx, ro)
		if err != nil {
			return fixError(err)
		}
		if o.output != "" {
			if err := fix.WriteFiles(o.output, a.Plan); err != nil {
				return exitf(ExitUnknown, "fix: write %s: %v", o.output, err)
			}
		}
		return fixApply(ctx, env, o, a.Plan, ro.Targets)
	}
	r, err := fix.Run(ctx, ro)
	if err != nil {
		return fixError(err)
	}
	if err := writeDocument(env, r, o.format); err != nil {
		return exitf(ExitUnknown, "fix: %v", err)
	}
	return statusError(exitFor(r.Status))
}

// fixError is the exit of a plan that could not be made: critical where
// the guard refused it.
func fixError(err error) error {
	if errors.Is(err, fix.ErrRefused) {
		return exitf(ExitCritical, "fix: %v", err)
	}
	return exitf(ExitUnknown, "fix: %v", err)
}

// validate refuses flags that do not go together.
func (o *fixOptions) validate(hosts []string) error {
	modes := 0
	for _, m := range []bool{o.plan, o.apply, o.rollback} {
		if m {
			modes++
		}
	}
	switch {
	case modes > 1:
		return exitf(ExitUnknown, "fix: choose one of --plan, --apply, --rollback")
	case len(hosts) == 0 && len(o.snapshots) == 0:
		return exitf(ExitUnknown, "fix: name the nodes with --hosts, --hostfile or --snapshot")
	case len(hosts) > 0 && len(o.snapshots) > 0:
		return exitf(ExitUnknown, "fix: use --hosts or --snapshot, not both")
	case (o.apply || o.rollback) && len(hosts) == 0:
		return exitf(ExitUnknown, "fix: --apply and --rollback work over SSH: give --hosts")
	case o.activate != "netplan" && o.activate != "ip":
		return exitf(ExitUnknown, "fix: unknown --activate %q (want netplan or ip)", o.activate)
	case !slices.Contains(render.TextAndJSON, o.format):
		_, err := checkFormat("fix", o.format, render.TextAndJSON)
		return err
	case o.deadman < 10*time.Second:
		// The host must outlive its own activation and the check back.
		return exitf(ExitUnknown, "fix: --deadman %s: want 10s or more", o.deadman)
	case o.socketIfname != "" && !ifnameList().MatchString(o.socketIfname):
		return exitf(ExitUnknown, "fix: --socket-ifname %q: want interface names (letters, digits, . _ : @ -), comma-separated", o.socketIfname)
	}
	return nil
}

// runOptions are fix.Run's inputs from the flags: the plan's options, and
// each host's target over a runner that reaches it anew for every script
// (fix proves a host still answers after a change that way).
func (o *fixOptions) runOptions(env *Env, hosts []string) (fix.RunOptions, error) {
	ro := fix.RunOptions{Snapshots: o.snapshots, Output: o.output, Version: Version, Now: env.Now,
		Audit:  doctor.ForFix(Version, env.Now),
		Notice: func(s string) { fmt.Fprintln(env.Stderr, sanitize.Line(s)) }}
	var err error
	if !o.rollback {
		if ro.Plan, err = o.planOptions(); err != nil {
			return ro, err
		}
	}
	if len(hosts) == 0 {
		return ro, nil
	}
	r, err := o.remote.freshRunner(env)
	if err != nil {
		return ro, exitf(ExitUnknown, "fix: %v", err)
	}
	for _, h := range hosts {
		ro.Targets = append(ro.Targets, fix.Target{Runner: r, Host: h})
	}
	if ro.Acquire, err = o.remote.acquireOptions(env, true); err != nil { // the capture's one runner
		return ro, exitf(ExitUnknown, "fix: %v", err)
	}
	return ro, nil
}

// planOptions are the plan's options from the flags.
func (o *fixOptions) planOptions() (fix.Options, error) {
	opt := fix.Options{Renumber: o.renumber, Addressing: o.addressing, FirstHost: o.firstHost, MTU: o.mtu, Port: o.port, SocketIfname: o.socketIfname, LauncherEnv: o.launcherEnv}
	for _, s := range o.subnets {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return opt, exitf(ExitUnknown, "fix: --subnets: %q is not a CIDR subnet", s)
		}
		opt.Subnets = append(opt.Subnets, p)
	}
	if o.topology != "" {
		t, err := topology.Parse(o.topology)
		if err != nil || !slices.Contains(fix.Topologies, t) && !t.IsRing() {
			return opt, exitf(ExitUnknown, "fix: --topology %q: want one of %s, or N-node-ring (three-node-ring, four-node-ring, ...)", o.topology, topology.Names(fix.Topologies))
		}
		opt.Topology = t
	}
	return opt, nil
}

// withoutHost is err's text less a leading "host: ", which SSH errors
// carry, for lines that name the host already.
func withoutHost(host string, err error) string {
	return strings.TrimPrefix(err.Error(), host+": ")
}

func fixApply(ctx context.Context, env *Env, o *fixOptions, p *fix.Plan, ts []fix.Target) error {
	if err := render.FixPlan(env.Stdout, p.Report(nil), textOptions(env)); err != nil {
		return err
	}
	stamp := fix.Stamp(env.Now())
	act := fix.ActivateNetplan
	if o.activate == "ip" {
		act = fix.ActivateIP
	}
	outs := fix.ApplyAll(ctx, p, ts, fix.ApplyOptions{Activation: act, DeadMan: o.deadman, Stamp: stamp, Log: env.Stderr})
	code := ExitOK
	fmt.Fprintln(env.Stdout)
	for _, out := range outs {
		fmt.Fprintf(env.Stdout, "%s: %s", out.Host, out.Status)
		if out.Backup != "" {
			fmt.Fprintf(env.Stdout, " (backup %s)", out.Backup)
		}
		if out.Detail != "" {
			fmt.Fprintf(env.Stdout, ": %s", out.Detail)
		}
		fmt.Fprintln(env.Stdout)
		for _, pr := range out.After {
			fmt.Fprintf(env.Stdout, "   still: %s\n", pr)
		}
		code = max(code, applyExit(out))
	}
	return statusError(code)
}

// applyExit is the exit status of one host's apply: refused or rolled back
// is critical, applied with problems left a warning.
func applyExit(o fix.Outcome) int {
	switch o.Status {
	case fix.Applied:
		if len(o.After) > 0 {
			return exitFor(report.VerdictWarning)
		}
		return exitFor(report.VerdictOK)
	case fix.Unchanged:
		return exitFor(report.VerdictOK)
	case fix.Refused, fix.RolledBack, fix.RolledBackTimer:
		return exitFor(report.VerdictCritical)
	}
	return exitFor(report.VerdictUnknown)
}

func fixRollback(ctx context.Context, env *Env, ts []fix.Target) error {
	code := ExitOK
	for _, t := range ts {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		dir, err := fix.Rollback(cctx, t)
		cancel()
		if err != nil {
			fmt.Fprintf(env.Stdout, "%s: not rolled back: %s\n", t.Host, withoutHost(t.Host, err))
			code = ExitUnknown
			continue
		}
		fmt.Fprintf(env.Stdout, "%s: restored %s\n", t.Host, dir)
	}
	return statusError(code)
}
