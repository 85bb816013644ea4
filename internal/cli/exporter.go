package cli

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/exporter"
	"github.com/sparkrig/sparkrig/internal/report"
)

// exporterOptions are the exporter command's flags.
type exporterOptions struct {
	listen   string
	webConf  string
	maxConns int
	interval time.Duration
	timeout  time.Duration
	results  []string
	idle     time.Duration
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
benchmark ever.

An audit that reaches no host, evaluates nothing, or does not finish within
--audit-timeout (every input included: a --results path that is not a
regular file is refused unread) is a failed audit:
sparkrig_exporter_last_audit_success 0 and sparkrig_exporter_last_audit_failed
saying why. /healthz answers "ok" (200), or "failing" (503) after three
failed audits in a row or none good in three intervals.

TLS and basic authentication come from a Prometheus web configuration file
(--web.config.file, the format every Prometheus exporter reads). Idle
connections are closed after --idle-timeout, and past --max-connections the
longest idle one is closed to admit a new one. SIGTERM ends it with exit 0.`,
		Example: `  sparkrig exporter --listen :9807
  sparkrig exporter --hosts spark-[01-04] --results /var/lib/sparkrig/qualify.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExporter(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", ":9807", "address to serve /metrics and /healthz on")
	f.StringVar(&o.webConf, "web.config.file", "", "Prometheus web configuration file: TLS and basic authentication (prometheus/exporter-toolkit's format)")
	f.IntVar(&o.maxConns, "max-connections", 512, "connections held open at most; past it the longest idle one is closed")
	f.DurationVar(&o.idle, "idle-timeout", 2*time.Minute, "close a keep-alive connection idle this long")
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
	if o.interval < time.Second || o.timeout <= 0 || o.maxConns < 1 || o.idle <= 0 {
		return exitf(ExitUnknown, "exporter: --interval must be 1s or more; --audit-timeout, --idle-timeout and --max-connections positive")
	}
	if o.webConf != "" {
		if err := web.Validate(o.webConf); err != nil {
			return exitf(ExitUnknown, "exporter: --web.config.file: %s", sanitize.Line(err.Error()))
		}
	}
	o.remote.noPing = !o.pingMesh
	defer o.remote.closeRunner()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return exitf(ExitUnknown, "exporter: %v", err)
	}
	s := &exporter.Server{Audit: func(ctx context.Context) (*report.Report, error) { return exporterAudit(ctx, env, o, profile) },
		Interval: o.interval, Timeout: o.timeout, Now: env.Now}
	limit := &exporter.ConnLimit{Max: o.maxConns}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: o.idle, MaxHeaderBytes: 16 << 10, ConnState: limit.ConnState,
		ErrorLog: log.New(io.Discard, "", 0)}
	env.daemon.Store(true)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	go s.Run(ctx)
	scheme := "http"
	if o.webConf != "" {
		scheme = "configured by --web.config.file at"
	}
	fmt.Fprintf(env.Stderr, "sparkrig: exporter: serving %s://%s/metrics\n", scheme, ln.Addr())
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	webConf := o.webConf
	if err := web.Serve(limit.Listener(ln), srv, &web.FlagConfig{WebConfigFile: &webConf}, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitf(ExitUnknown, "exporter: %s", sanitize.Line(err.Error()))
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
	if t := o.remote.transport; t != nil && t.kubectl {
		o.remote.closeRunner() // the next audit lists the pods again: a pod restarted has a new name
	}
	m := newReportMerge(r)
	for _, p := range o.results {
		if err := addResults(ctx, m, p); err != nil {
			a := unreadable(p, err)
			fmt.Fprintf(env.Stderr, "sparkrig: exporter: %s: %s\n", sanitize.Line(p), sanitize.Line(a.Error))
			r.Analyses = append(r.Analyses, a)
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the audit did not end within its deadline")
	}
	r.Status = report.Worse(reportStatus(r, false), m.finish())
	return r, nil
}

// addResults adds one --results document, giving up at ctx's end (the
// audit's deadline) whatever the read is blocked on (a hung NFS mount).
// addFile opens it with capped.Open, which refuses anything but a regular
// file by its type before reading (a FIFO would block the open, a
// character device such as /dev/zero never ends).
func addResults(ctx context.Context, m reportMerge, path string) error {
	// A read blocked past the deadline is left behind; the audit it belongs
	// to is failed and never rendered (exporterAudit stops at ctx's end).
	done := make(chan error, 1)
	go func() { done <- addFile(m, path, analyze.Options{}) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("not read within the audit's deadline")
	}
}
