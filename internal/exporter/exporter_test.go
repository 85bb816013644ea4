package exporter

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sparkrig/sparkrig/internal/report"
)

// clock is a test clock moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// parse reads an exposition page as Prometheus would, and fails the test
// when it is not valid.
func parse(t *testing.T, page string) map[string]int {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("not valid exposition: %v\n%s", err, page)
	}
	n := map[string]int{}
	for name, f := range fams {
		n[name] = len(f.GetMetric())
	}
	return n
}

func sample() *report.Report {
	return &report.Report{Tool: "sparkrig", ToolVersion: "test", Command: "exporter", Status: report.VerdictWarning,
		Hosts: []report.Host{{Host: "spark-01", Status: report.HostAudited, Findings: []report.Finding{
			{ID: "net.tcp-buffers", Severity: report.Warn, Subject: "net.ipv4.tcp_rmem", Observed: "4096 131072 1048576"},
			{ID: "net.core-buffers", Severity: report.OK, Subject: "net.core.rmem_max", Observed: "67108864"},
		}}, {Host: "spark-02", Status: report.HostUnreachable, Error: "spark-02: unreachable"}}}
}

// A scrape serves the last audit and never audits; /healthz follows the
// last good audit; a failed audit keeps the last good page and is counted.
func TestServerServesTheLastAudit(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var audits atomic.Int32
	fail := false
	s := &Server{Interval: time.Minute, Timeout: time.Minute, Now: c.now, Audit: func(context.Context) (*report.Report, error) {
		audits.Add(1)
		if fail {
			panic("checker bug")
		}
		return sample(), nil
	}}
	h := s.Handler()
	if code, body := get(t, h, "/healthz"); code != 503 || body != "failing\n" {
		t.Errorf("healthz before any audit: %d %q", code, body)
	}
	if _, page := get(t, h, "/metrics"); parse(t, page)["sparkrig_exporter_last_audit_success"] != 1 || strings.Contains(page, "sparkrig_check_status") {
		t.Errorf("before any audit, only the exporter's own metrics:\n%s", page)
	}

	s.Once(context.Background())
	for range 5 {
		get(t, h, "/metrics")
	}
	if n := audits.Load(); n != 1 {
		t.Errorf("%d audits after one audit and five scrapes, want 1", n)
	}
	_, page := get(t, h, "/metrics")
	fams := parse(t, page)
	for name, want := range map[string]int{"sparkrig_check_status": 2, "sparkrig_host_audited": 2, "sparkrig_status": 1, "sparkrig_exporter_audits_total": 1} {
		if fams[name] != want {
			t.Errorf("%s: %d series, want %d", name, fams[name], want)
		}
	}
	for _, line := range []string{
		`sparkrig_check_status{host="spark-01",check="net.tcp-buffers",subject="net.ipv4.tcp_rmem"} 3`,
		`sparkrig_host_audited{host="spark-02",status="unreachable"} 0`,
		"sparkrig_exporter_last_audit_success 1",
		"sparkrig_exporter_audit_failures_total 0",
	} {
		if !strings.Contains(page, line+"\n") {
			t.Errorf("no line %q in\n%s", line, page)
		}
	}
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz after a good audit: %d %q", code, body)
	}

	fail = true
	c.t = c.t.Add(time.Minute)
	s.Once(context.Background())
	_, page = get(t, h, "/metrics")
	if !strings.Contains(page, `sparkrig_check_status{host="spark-01",check="net.tcp-buffers",subject="net.ipv4.tcp_rmem"} 3`) ||
		!strings.Contains(page, "sparkrig_exporter_audit_failures_total 1\n") || !strings.Contains(page, "sparkrig_exporter_last_audit_success 0\n") {
		t.Errorf("after a failed audit, the last good page and the failure:\n%s", page)
	}
	if s.LastError() != "audit failed: checker bug" {
		t.Errorf("LastError = %q", s.LastError())
	}
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("healthz one interval after the last good audit: %d, want 200", code)
	}
	c.t = c.t.Add(3 * time.Minute)
	if code, body := get(t, h, "/healthz"); code != 503 || body != "failing\n" {
		t.Errorf("healthz four intervals after the last good audit: %d %q", code, body)
	}
}

// An audit that reached no host, or judged nothing, is a failed audit: the
// last_audit_success gauge says 0, a series says which, and /healthz turns
// 503 (saying only "failing") after three in a row.
func TestAuditThatReachedNothingFails(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var next *report.Report
	s := &Server{Interval: time.Minute, Timeout: time.Minute, Now: c.now, Audit: func(context.Context) (*report.Report, error) { return next, nil }}
	h := s.Handler()
	next = sample()
	s.Once(context.Background())
	unreachable := &report.Report{Hosts: []report.Host{{Host: "spark-01", Status: report.HostUnreachable, Error: "spark-01: dial tcp 10.0.0.1:22: connect: connection refused"},
		{Host: "spark-02", Status: report.HostUnreachable, Error: "spark-02: unreachable"}}}
	unread := &report.Report{Hosts: []report.Host{{Host: "spark-01", Status: report.HostAudited, Findings: []report.Finding{
		{ID: "gpu.driver", Severity: report.NotEvaluated, Subject: "node", Observed: "nvidia-smi timed out after 20s"}}}}}
	for i, c2 := range []struct {
		r      *report.Report
		reason string
		health int
	}{{unreachable, FailNoHostReached, 200}, {unread, FailNothingEvaluated, 200}, {unreachable, FailNoHostReached, 503}, {sample(), "", 200}} {
		next = c2.r
		c.t = c.t.Add(10 * time.Second)
		s.Once(context.Background())
		_, page := get(t, h, "/metrics")
		parse(t, page)
		success := "1"
		if c2.reason != "" {
			success = "0"
			if want := `sparkrig_exporter_last_audit_failed{reason="` + c2.reason + `"} 1`; !strings.Contains(page, want+"\n") {
				t.Errorf("audit %d: no %q", i, want)
			}
		}
		if !strings.Contains(page, "sparkrig_exporter_last_audit_success "+success+"\n") {
			t.Errorf("audit %d: last_audit_success is not %s:\n%s", i, success, page)
		}
		code, body := get(t, h, "/healthz")
		if code != c2.health || (body != "ok\n" && body != "failing\n") {
			t.Errorf("audit %d: /healthz %d %q, want %d", i, code, body, c2.health)
		}
	}
}

// An audit blocked past its deadline (a FIFO, a hung mount) is a failed
// audit at the deadline, not a stalled exporter; while it stays blocked,
// the next audit is not started on top of it.
func TestBlockedAuditTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &Server{Interval: time.Minute, Timeout: 200 * time.Millisecond, Audit: func(context.Context) (*report.Report, error) {
		<-release // ignores its context, as a read blocked in the kernel does
		return sample(), nil
	}}
	done := make(chan struct{})
	go func() {
		s.Once(context.Background())
		s.Once(context.Background())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Once did not return while the audit was blocked")
	}
	_, page := get(t, s.Handler(), "/metrics")
	for _, line := range []string{"sparkrig_exporter_last_audit_success 0", `sparkrig_exporter_last_audit_failed{reason="still_running"} 1`,
		"sparkrig_exporter_audit_failures_total 2", "sparkrig_exporter_consecutive_failures 2"} {
		if !strings.Contains(page, line+"\n") {
			t.Errorf("no %q in\n%s", line, page)
		}
	}
}

// An audit that returns an error is counted like a panic, and the audit's
// deadline is Timeout.
func TestAuditErrorAndDeadline(t *testing.T) {
	var deadline time.Time
	s := &Server{Interval: time.Minute, Timeout: 7 * time.Second, Audit: func(ctx context.Context) (*report.Report, error) {
		deadline, _ = ctx.Deadline()
		return nil, errors.New("no nodes reached")
	}}
	start := time.Now()
	s.Once(context.Background())
	if s.LastError() != "no nodes reached" {
		t.Errorf("LastError = %q", s.LastError())
	}
	if d := deadline.Sub(start); d < 6*time.Second || d > 8*time.Second {
		t.Errorf("audit deadline %v after start, want 7s", d)
	}
}

// BenchmarkScrape is the cost of one scrape of a 32-host page: copying the
// last page, nothing more.
func BenchmarkScrape(b *testing.B) {
	r := sample()
	for i := range 30 {
		h := r.Hosts[0]
		h.Host = "spark-" + string(rune('a'+i))
		r.Hosts = append(r.Hosts, h)
	}
	s := &Server{Interval: time.Minute, Timeout: time.Minute, Audit: func(context.Context) (*report.Report, error) { return r, nil }}
	s.Once(context.Background())
	h := s.Handler()
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}
