package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// doctorOptions are the doctor command's flags.
type doctorOptions struct {
	snapshots []string
	format    string
	verbose   bool
	profile   string
	qualify   bool
	quiet     bool
	remote    remoteOptions
	npd       npdOptions
}

func newDoctorCmd(env *Env) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor [--snapshot PATH...]",
		Short: "audit this node, captured snapshots, or nodes over SSH",
		Long: `doctor audits a node's configuration for what costs multi-node GPU performance:
ConnectX-7 twins, addressing, MTU, link speed, PCIe width, NCCL version and settings,
GPU state (persistence, MIG, ECC, Xid, throttling), and OS and network tuning.

Without flags it audits this machine. --snapshot audits captured snapshots
(directories or .tar.gz archives from "sparkrig snapshot"); several paths may
follow it, so a shell glob works: sparkrig doctor --snapshot nodes/*.tar.gz

` + exitHelp,
		Example: `  sparkrig doctor
  sparkrig doctor --format json > node.json
  sparkrig doctor --snapshot node1.tar.gz node2.tar.gz
  sparkrig doctor --verbose --profile gpu-server`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && len(opts.snapshots) == 0 {
				return exitf(ExitUnknown, "doctor: unexpected argument %q (snapshots go after --snapshot)", args[0])
			}
			opts.snapshots = append(opts.snapshots, args...)
			return runDoctor(cmd.Context(), env, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.snapshots, "snapshot", nil, "audit a snapshot directory or .tar.gz instead of this machine (repeatable; more paths may follow)")
	f.StringVar(&opts.format, "format", "text", "output format: "+strings.Join(render.Formats, ", "))
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "also show passing checks and why skipped checks did not apply")
	f.StringVar(&opts.profile, "profile", "", "platform profile: dgx-spark, gpu-server or no-gpu (default: detected per host)")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "text: print only the summary line (the exit status says the rest)")
	f.BoolVar(&opts.qualify, "qualify", false, "also test every link in each direction for a few seconds (sparkrig's TCP probe) and read both ends' error counters; needs --hosts")
	addRemoteFlags(f, &opts.remote)
	addNPDFlags(f, &opts.npd)
	return cmd
}

func runDoctor(ctx context.Context, env *Env, opts *doctorOptions) error {
	if opts.npd.enabled {
		return runNPD(ctx, env, opts)
	}
	var err error
	if opts.format, err = checkFormat("doctor", opts.format, render.Formats); err != nil {
		return err
	}
	defer opts.remote.closeRunner()
	ro, err := doctorRunOptions(ctx, env, opts)
	if err != nil {
		return err
	}
	r, err := doctor.Run(ctx, ro)
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return err // the qualify step's own words
	} else if err != nil {
		return exitf(ExitUnknown, "doctor: %v", err)
	}
	for _, line := range sameNodeLines("doctor", r, "audited twice, one node of the cluster") {
		fmt.Fprintln(env.Stderr, line)
	}
	for _, h := range r.Hosts {
		if h.Status != report.HostAudited {
			fmt.Fprintln(env.Stderr, "sparkrig: doctor: "+sanitize.Line(h.Error))
		}
	}
	code := exitFor(r.Status)
	ropt := textOptions(env)
	ropt.Verbose = opts.verbose
	if opts.format == "text" && opts.quiet {
		return writeSummary(env, r, code, ropt)
	}
	if opts.format == "text" && len(auditedHosts(r)) == 0 {
		// each host's reason had its line on stderr; stdout says what came of it
		fmt.Fprintf(env.Stdout, "summary 0 of %d host(s) audited\n", len(r.Hosts))
		return statusError(code)
	}
	if err := render.Write(env.Stdout, r, opts.format, ropt); err != nil {
		return exitf(ExitUnknown, "doctor: write report: %v", err)
	}
	return statusError(code)
}

// doctorRunOptions are doctor.Run's inputs from the flags: the profile, and
// the hosts and the runner that reaches them when nodes are named.
func doctorRunOptions(ctx context.Context, env *Env, opts *doctorOptions) (doctor.RunOptions, error) {
	ro := doctor.RunOptions{Audit: doctor.Options{Version: Version}, Snapshots: opts.snapshots, Now: env.Now,
		Remote: opts.remote.enabled()}
	if opts.profile != "" {
		p, err := check.ParseProfile(opts.profile)
		if err != nil {
			return ro, exitf(ExitUnknown, "doctor: --profile: %v", err)
		}
		ro.Audit.Profile = p
	}
	if opts.qualify {
		ro.Qualify = func(ctx context.Context, nodes []acquire.Node, r *report.Report) error {
			return doctorQualify(ctx, env, opts, nodes, r)
		}
	}
	if !ro.Remote || len(opts.snapshots) > 0 {
		return ro, nil
	}
	var err error
	if ro.Hosts, err = opts.remote.nodes(ctx, env); err != nil {
		return ro, exitf(ExitUnknown, "doctor: %v", err)
	}
	if ro.Acquire, err = opts.remote.acquireOptions(env, false); err != nil {
		return ro, exitf(ExitUnknown, "doctor: %v", err)
	}
	return ro, nil
}

// readSnapshots reads each path; a bad one becomes a host that was not
// audited. Of each snapshot, the facts and what fix reads are kept.
func readSnapshots(paths []string) []hostCapture { return acquire.Snapshots(paths, fix.Evidence) }

// auditReport audits every captured host, then the cluster, with one
// remedy per finding (internal/doctor).
func auditReport(caps []hostCapture, profile check.Profile, env *Env) *report.Report {
	return doctor.Audit(caps, doctor.Options{Profile: profile, Version: Version, Now: env.Now()}).Report
}

func auditedHosts(r *report.Report) []report.Host {
	var out []report.Host
	for _, h := range r.Hosts {
		if h.Status == report.HostAudited {
			out = append(out, h)
		}
	}
	return out
}

// writeSummary prints the report's one summary line, as the text report
// ends with it.
func writeSummary(env *Env, r *report.Report, code int, ropt render.Options) error {
	if err := render.Summary(env.Stdout, r, ropt); err != nil {
		return exitf(ExitUnknown, "doctor: write report: %v", err)
	}
	return statusError(code)
}
