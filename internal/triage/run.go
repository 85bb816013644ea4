package triage

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// MaxSampleBytes bounds what one node's sample may send back.
const MaxSampleBytes = 8 << 20

// Options are what one triage asks.
type Options struct {
	Runner runner.Runner
	Hosts  []string // the nodes, as Runner names them
	// Interval is the time between the two samples (0: one sample).
	Interval time.Duration
	Log      string // a job log on the nodes to show the tail of
	LogLines int
	RASPort  int // 0: RASPort
	// RASDeadline bounds each RAS query (0: RASDeadline(Interval)).
	RASDeadline time.Duration
	Parallel    int           // nodes sampled at once (0: remote.DefaultParallel)
	HostTimeout time.Duration // one node's sample (0: none)
	ToolVersion string
	Now         func() time.Time
}

// Run samples every node, twice Interval apart, and judges the job. A node
// that cannot be sampled keeps its place in the report with its error; the
// others go on. It returns the context's error when interrupted.
func Run(ctx context.Context, o Options) (*report.Report, error) {
	port := o.RASPort
	if port == 0 {
		port = RASPort
	}
	if err := CheckRASPort(port); err != nil {
		return nil, err
	}
	if o.Interval < 0 {
		return nil, errors.New("--interval must not be negative")
	}
	if len(o.Hosts) == 0 || o.Runner == nil {
		return nil, errors.New("no node to sample")
	}
	deadline := o.RASDeadline
	if deadline <= 0 {
		deadline = RASDeadline(o.Interval)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	start := time.Now()
	script := Script(ScriptOptions{RASPort: port, Log: o.Log, LogLines: o.LogLines, RASDeadline: deadline})
	fan := remote.FanOut{Parallel: o.Parallel, PerHost: o.HostTimeout}
	first := sample(ctx, fan, o.Runner, o.Hosts, script)
	var second []Sample
	if o.Interval > 0 && ctx.Err() == nil && !noJob(first) {
		select {
		case <-time.After(o.Interval):
			second = sample(ctx, fan, o.Runner, o.Hosts, script)
		case <-ctx.Done():
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	interval := o.Interval
	if second == nil {
		interval = 0
	}
	d := Diagnose(first, second, interval)
	rep := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.ToolVersion, Command: "triage",
		GeneratedAt: now().UTC(), Triage: d.Report(first, second, time.Since(start)),
		Cluster: &report.Cluster{Links: []report.Link{}, Findings: d.Findings}, Hosts: []report.Host{}}
	cleanReport(rep.Triage, rep.Cluster.Findings)
	unreached := false
	for _, s := range first {
		unreached = unreached || s.Err != ""
	}
	rep.Status = report.FindingsVerdict(d.Findings, unreached || d.Verdict == VerdictUnknown || d.Verdict == VerdictNoJob)
	return rep, nil
}

// noJob reports a first sample in which no node runs an NCCL process or
// answers RAS, and every node was sampled: a second sample would say the
// same, so none is taken.
func noJob(first []Sample) bool {
	for _, s := range first {
		if s.Err != "" || len(s.Procs) > 0 {
			return false
		}
		if st, _ := s.Status(); st != nil {
			return false
		}
	}
	return true
}

// sample runs the script on every host through the runner, at most
// fan.Parallel at a time, each within fan.PerHost. A host that fails keeps
// its place with Err set, and whatever it sent before failing (its GPU
// samples are taken before RAS is asked).
func sample(ctx context.Context, fan remote.FanOut, r runner.Runner, hosts []string, script string) []Sample {
	out := make([]Sample, len(hosts))
	bufs := make([]*capped.Buffer, len(hosts))
	for i := range hosts {
		bufs[i] = &capped.Buffer{Max: MaxSampleBytes}
	}
	res := fan.Each(ctx, hosts, func(ctx context.Context, i int, host string) error {
		stderr := &capped.Buffer{Max: 64 << 10}
		err := r.Exec(ctx, host, script, nil, bufs[i], stderr)
		if err != nil {
			if e := strings.TrimSpace(string(stderr.Bytes())); e != "" {
				return errors.Join(err, errors.New(firstLine(e)))
			}
		}
		return err
	})
	for i, h := range hosts {
		b := bufs[i].Bytes()
		s := ParseSample(h, b)
		if err := res[i].Err; err != nil && !strings.Contains(string(b), marker+" end") {
			s.Err = sanitize.Line(strings.ReplaceAll(err.Error(), "\n", ": "))
		}
		if len(b) >= MaxSampleBytes {
			s.Err = "the node sent more than 8 MiB"
		}
		s.Elapsed = res[i].Elapsed.Seconds()
		out[i] = s
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
