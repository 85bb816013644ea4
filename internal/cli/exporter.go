package cli

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/exporter"
	"github.com/sparkrig/sparkrig/internal/report"
)

// exporterOptions are the exporter command's flags.
type exporterOptions struct {
	listen   string
	interval time.Duration
	timeout  time.Duration
	results  []string
	profile  string
	pingMesh bool
	remote   remoteOptions
}

func newExporterCmd(env *Env) *cobra.Command {
	o := &exporterOptions{}
	cmd := &cobra.Command{
		Use:   "exporter [--listen ADDR] [--interval D] [--results FILE...]",
		Short: "serve the audit as Prometheus metrics (/metrics, /healthz)",
		Long: `exporter audits this node (or the nodes --hosts, --slurm or --kubectl name)
every --interval and serves the last audit at /metrics in the Prometheus text
format, with the metric names doctor --format prometheus writes: each check's
status, link speed and MTU, and hosts that could not be captured; --results
adds the last qualify and bench results (sparkrig JSON documents, re-read at
each audit). A scrape only copies the last page: it never runs anything.
Nothing active runs unless asked: the ping mesh only with --ping-mesh, no
benchmark ever. /healthz answers 200 while the last good audit is recent.`,
		Example: `  sparkrig exporter --listen :9807
  sparkrig exporter --hosts spark-[01-04] --results /var/lib/sparkrig/qualify.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExporter(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", ":9807", "address to serve /metrics and /healthz on")
	f.DurationVar(&o.interval, "interval", 60*time.Second, "time between audits")
	f.DurationVar(&o.timeout, "audit-timeout", 45*time.Second, "deadline for one audit")
	f.StringArrayVar(&o.results, "results", nil, "sparkrig JSON document (bench, doctor --qualify, analyze) to export too, re-read at each audit (repeatable)")
	f.StringVar(&o.profile, "profile", "", "platform profile: dgx-spark, gpu-server or no-gpu (default: detected per host)")
	f.BoolVar(&o.pingMesh, "ping-mesh", false, "with several nodes: also run the don't-fragment ping mesh at each audit (active traffic)")
	addRemoteFlags(f, &o.remote)
	f.Lookup("no-ping").Hidden = true
	return cmd
}

func runExporter(ctx context.Context, env *Env, o *exporterOptions) error {
	var profile check.Profile
	if o.profile != "" {
		p, err := check.ParseProfile(o.profile)
		if err != nil {
			return exitf(ExitUnknown, "exporter: --profile: %v", err)
		}
		profile = p
	}
	if o.interval < time.Second || o.timeout <= 0 {
		return exitf(ExitUnknown, "exporter: --interval must be 1s or more and --audit-timeout positive")
	}
	o.remote.noPing = !o.pingMesh
	defer o.remote.closeRunner()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return exitf(ExitUnknown, "exporter: %v", err)
	}
	s := &exporter.Server{Audit: func(ctx context.Context) (*report.Report, error) { return exporterAudit(ctx, env, o, profile) },
		Interval: o.interval, Timeout: o.timeout, Now: env.Now}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	go s.Run(ctx)
	fmt.Fprintf(env.Stderr, "sparkrig: exporter: serving http://%s/metrics\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitf(ExitUnknown, "exporter: %v", err)
	}
	return nil
}

// exporterAudit is one audit: the nodes as doctor sees them, plus the
// result documents named.
func exporterAudit(ctx context.Context, env *Env, o *exporterOptions, profile check.Profile) (*report.Report, error) {
	var r *report.Report
	if o.remote.enabled() {
		caps, err := captureRemote(ctx, env, &o.remote)
		if err != nil {
			return nil, err
		}
		r = auditReport(caps, profile, env)
	} else {
		r = localAudit(ctx, env, profile)
	}
	m := newReportMerge(r)
	for _, p := range o.results {
		if err := addFile(m, p, analyze.Options{}); err != nil {
			fmt.Fprintf(env.Stderr, "sparkrig: exporter: %s: %s\n", p, sanitize.Line(err.Error()))
			r.Analyses = append(r.Analyses, unreadable(p, err))
		}
	}
	r.Status = report.Worse(reportStatus(r, false), m.finish())
	return r, nil
}
