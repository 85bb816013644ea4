package acquire_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/exporter"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// BenchmarkExporterAudits: the exporter over many hosts re-audits them
// (capture over SSH, doctor's audit, the Prometheus page) 100 times
// through one SSH runner, as `sparkrig exporter --hosts` does; reported:
// the live heap and the RSS after the 1st, 10th and 100th audit, which
// stay level when nothing of an audit outlives it.
//
//	go test ./internal/acquire -run '^$' -bench 'BenchmarkExporterAudits' -benchtime 1x
func BenchmarkExporterAudits(b *testing.B) {
	const hosts, audits = 100, 100
	config, names := startServers(b, "capture", hosts)
	d, err := remote.NewDialer(remote.Options{ConfigFile: config, Home: b.TempDir(), ConnectTimeout: 60 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	r := &runner.SSH{Dialer: d}
	defer r.Close()
	s := &exporter.Server{Interval: time.Hour, Timeout: 10 * time.Minute,
		Audit: func(ctx context.Context) (*report.Report, error) {
			nodes := acquire.Remote(ctx, names, acquire.Options{Runner: r, Parallel: remote.DefaultParallel,
				HostTimeout: 60 * time.Second, Timeout: 10 * time.Minute, NoPing: true, Keep: fix.Evidence, KeepPaths: fix.Paths()})
			for _, n := range nodes {
				if n.Err != nil {
					return nil, n.Err
				}
			}
			return doctor.Audit(nodes, doctor.Options{Version: "bench", Now: time.Now()}).Report, nil
		}}
	b.ResetTimer()
	for range b.N {
		for i := 1; i <= audits; i++ {
			s.Once(context.Background())
			if e := s.LastError(); e != "" {
				b.Fatalf("audit %d: %s", i, e)
			}
			if i == 1 || i == 10 || i == audits {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				b.ReportMetric(float64(m.HeapInuse)/(1<<20), fmt.Sprintf("heap-MiB@%d", i))
				b.ReportMetric(rssMiB(), fmt.Sprintf("RSS-MiB@%d", i))
			}
		}
	}
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}

// rssMiB is the process's resident set now (VmRSS).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
