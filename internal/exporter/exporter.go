// Package exporter serves the last audit as Prometheus metrics: /metrics in
// the text exposition format (the report's metrics, named as doctor
// --format prometheus names them, and the exporter's own), and /healthz. It
// audits on an interval, never at scrape time, so a scrape costs the same
// whatever the cluster: it copies the last rendered page.
package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Reasons an audit failed, the values of the reason label of
// sparkrig_exporter_last_audit_failed.
const (
	FailError            = "error"             // the audit returned an error
	FailPanic            = "panic"             // the checker failed
	FailTimeout          = "timeout"           // the audit did not end within Timeout
	FailStillRunning     = "still_running"     // the audit before, past its deadline, has not ended yet
	FailNoHostReached    = "no_host_reached"   // no node could be audited
	FailNothingEvaluated = "nothing_evaluated" // nothing was judged: every check not evaluated
)

var failReasons = []string{FailError, FailPanic, FailTimeout, FailStillRunning, FailNoHostReached, FailNothingEvaluated}

// FailingAfter is how many audits in a row must fail before /healthz
// answers 503.
const FailingAfter = 3

// Server audits every Interval and serves the result.
type Server struct {
	// Audit gathers one report; ctx bounds it (Timeout). An Audit that does
	// not return by then is left behind and the audit counts as failed.
	Audit    func(ctx context.Context) (*report.Report, error)
	Interval time.Duration
	Timeout  time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	running atomic.Bool // an Audit call has not returned yet

	mu          sync.Mutex
	page        []byte // the last audit's page that could be rendered
	lastOK      time.Time
	lastTry     time.Time
	lastDur     time.Duration
	lastErr     string
	lastFail    string // the last audit's failure reason, "" when it succeeded
	audits      int
	failures    int
	consecutive int
}

func (s *Server) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Run audits at once and then every Interval until ctx ends.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		s.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs one audit and keeps its page. A failed audit (an error, a
// panic in the checker, past its deadline, no node reached, nothing
// evaluated) is counted with its reason; an audit that gave no page keeps
// the previous one.
func (s *Server) Once(ctx context.Context) {
	start := s.now()
	page, reason, err := s.auditPage(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audits++
	s.lastTry, s.lastDur = start, s.now().Sub(start)
	if page != nil {
		s.page = page
	}
	if reason != "" {
		s.failures++
		s.consecutive++
		s.lastErr, s.lastFail = err.Error(), reason
		return
	}
	s.lastOK, s.lastErr, s.lastFail, s.consecutive = start, "", "", 0
}

type auditResult struct {
	page   []byte
	reason string
	err    error
}

// auditPage runs Audit under Timeout and renders its report; past the
// deadline it returns at once, whatever Audit is blocked on.
func (s *Server) auditPage(ctx context.Context) ([]byte, string, error) {
	if !s.running.CompareAndSwap(false, true) {
		return nil, FailStillRunning, errors.New("the previous audit has not ended")
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	done := make(chan auditResult, 1)
	go func() {
		res := s.audit(ctx)
		// cleared before the result is handed over: the next Once may
		// start as soon as this one returns
		s.running.Store(false)
		done <- res
	}()
	select {
	case res := <-done:
		return res.page, res.reason, res.err
	case <-ctx.Done():
		return nil, FailTimeout, fmt.Errorf("the audit did not end within %s", s.Timeout)
	}
}

func (s *Server) audit(ctx context.Context) (res auditResult) {
	defer func() {
		if p := recover(); p != nil {
			res = auditResult{reason: FailPanic, err: fmt.Errorf("audit failed: %v", p)}
		}
	}()
	r, err := s.Audit(ctx)
	if err != nil {
		return auditResult{reason: FailError, err: err}
	}
	if ctx.Err() != nil {
		return auditResult{reason: FailTimeout, err: fmt.Errorf("the audit did not end within %s", s.Timeout)}
	}
	var b bytes.Buffer
	if err := render.Prometheus(&b, r); err != nil {
		return auditResult{reason: FailError, err: err}
	}
	res.page = b.Bytes()
	if reason, why := Failure(r); reason != "" {
		res.reason, res.err = reason, errors.New(why)
	}
	return res
}

// Failure says whether an audit's report is a failed audit: one that
// reached no host, or judged nothing (every check not evaluated, every
// input unreadable). Its page is still served: it names the hosts not
// reached.
func Failure(r *report.Report) (reason, why string) {
	reached, judged := false, false
	see := func(fs []report.Finding) {
		for _, f := range fs {
			if f.Severity != report.NotEvaluated && f.Severity != "" {
				judged = true
			}
		}
	}
	for _, h := range r.Hosts {
		if h.Status == "" || h.Status == report.HostAudited {
			reached = true
			see(h.Findings)
		}
	}
	if r.Cluster != nil {
		see(r.Cluster.Findings)
	}
	for _, a := range r.Analyses {
		if a.Status != report.VerdictUnknown {
			judged = true
		}
	}
	switch {
	case len(r.Hosts) > 0 && !reached:
		return FailNoHostReached, fmt.Sprintf("no host reached (%d tried)", len(r.Hosts))
	case !judged:
		return FailNothingEvaluated, "nothing evaluated"
	}
	return "", ""
}

// LastError is the last audit's error ("" when it succeeded).
func (s *Server) LastError() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Handler serves /metrics and /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /healthz", s.healthz)
	return mux
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	page := s.page
	own := s.ownMetrics()
	s.mu.Unlock()
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	w.Write(page)
	w.Write(own)
}

// healthz answers 200 "ok" while the audits go well: a good audit within
// three intervals and fewer than FailingAfter failures in a row; else 503
// "failing". Why is in the metrics and on stderr, never here: anyone who
// reaches the port may ask.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	ok := !s.lastOK.IsZero() && s.consecutive < FailingAfter && s.now().Sub(s.lastOK) <= FailingAfter*s.Interval
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "failing")
		return
	}
	fmt.Fprintln(w, "ok")
}

// ownMetrics are the exporter's own: how its audits go. Called with mu held.
func (s *Server) ownMetrics() []byte {
	var b bytes.Buffer
	gauge := func(name, help string, v float64) {
		mf := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(v)}}}}
		expfmt.MetricFamilyToText(&b, mf)
	}
	counter := func(name, help string, v float64) {
		mf := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_COUNTER.Enum(),
			Metric: []*dto.Metric{{Counter: &dto.Counter{Value: proto.Float64(v)}}}}
		expfmt.MetricFamilyToText(&b, mf)
	}
	success := 0.0
	if s.lastFail == "" && !s.lastOK.IsZero() {
		success = 1
	}
	counter("sparkrig_exporter_audits_total", "Audits the exporter ran.", float64(s.audits))
	counter("sparkrig_exporter_audit_failures_total", "Audits that failed; the metrics above are from the last good one.", float64(s.failures))
	gauge("sparkrig_exporter_last_audit_success", "Whether the last audit succeeded (1) or not (0).", success)
	gauge("sparkrig_exporter_consecutive_failures", "Audits that failed in a row; /healthz answers 503 from 3.", float64(s.consecutive))
	failed := &dto.MetricFamily{Name: proto.String("sparkrig_exporter_last_audit_failed"), Type: dto.MetricType_GAUGE.Enum(),
		Help: proto.String("Why the last audit failed: 1 for its reason, 0 for the others (all 0 when it succeeded).")}
	for _, r := range failReasons {
		v := 0.0
		if r == s.lastFail {
			v = 1
		}
		failed.Metric = append(failed.Metric, &dto.Metric{Label: []*dto.LabelPair{{Name: proto.String("reason"), Value: proto.String(r)}},
			Gauge: &dto.Gauge{Value: proto.Float64(v)}})
	}
	expfmt.MetricFamilyToText(&b, failed)
	gauge("sparkrig_exporter_last_audit_duration_seconds", "How long the last audit took.", s.lastDur.Seconds())
	if !s.lastOK.IsZero() {
		gauge("sparkrig_exporter_last_good_audit_timestamp_seconds", "When the last good audit started (Unix time).", float64(s.lastOK.UnixNano())/1e9)
	}
	return b.Bytes()
}
