// Package exporter serves the last audit as Prometheus metrics: /metrics in
// the text exposition format (the report's metrics, named as doctor
// --format prometheus names them, and the exporter's own), and /healthz. It
// audits on an interval, never at scrape time, so a scrape costs the same
// whatever the cluster: it copies the last rendered page.
package exporter

import (
	"github.com/sparkrig/sparkrig/internal/sanitize"

	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Server audits every Interval and serves the result.
type Server struct {
	// Audit gathers one report; ctx bounds it (Timeout).
	Audit    func(ctx context.Context) (*report.Report, error)
	Interval time.Duration
	Timeout  time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu       sync.Mutex
	page     []byte // the last good audit, rendered
	lastOK   time.Time
	lastTry  time.Time
	lastDur  time.Duration
	lastErr  string
	audits   int
	failures int
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

// Once runs one audit and keeps its page. A failed audit (an error, or a
// panic in the checker) keeps the previous page and is counted.
func (s *Server) Once(ctx context.Context) {
	start := s.now()
	page, err := s.auditPage(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audits++
	s.lastTry, s.lastDur = start, s.now().Sub(start)
	if err != nil {
		s.failures++
		s.lastErr = err.Error()
		return
	}
	s.page, s.lastOK, s.lastErr = page, start, ""
}

func (s *Server) auditPage(ctx context.Context) (page []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			page, err = nil, fmt.Errorf("audit failed: %v", p)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	r, err := s.Audit(ctx)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := render.Prometheus(&b, r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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

// healthz answers 200 while the last good audit is recent (within three
// intervals), else 503 with why.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	lastOK, lastErr := s.lastOK, s.lastErr
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case lastOK.IsZero() && lastErr == "":
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "no audit yet")
	case lastOK.IsZero() || s.now().Sub(lastOK) > 3*s.Interval:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "no good audit in three intervals: "+sanitize.Line(lastErr))
	default:
		fmt.Fprintln(w, "ok")
	}
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
	if s.lastErr == "" && !s.lastOK.IsZero() {
		success = 1
	}
	counter("sparkrig_exporter_audits_total", "Audits the exporter ran.", float64(s.audits))
	counter("sparkrig_exporter_audit_failures_total", "Audits that failed; the metrics above are from the last good one.", float64(s.failures))
	gauge("sparkrig_exporter_last_audit_success", "Whether the last audit succeeded (1) or not (0).", success)
	gauge("sparkrig_exporter_last_audit_duration_seconds", "How long the last audit took.", s.lastDur.Seconds())
	if !s.lastOK.IsZero() {
		gauge("sparkrig_exporter_last_good_audit_timestamp_seconds", "When the last good audit started (Unix time).", float64(s.lastOK.UnixNano())/1e9)
	}
	return b.Bytes()
}
