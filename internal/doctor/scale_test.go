package doctor_test

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// fleet is n copies of the healthy DGX Spark snapshot (testdata/nodes) on
// one switch, node-00001 …, each with its own name, MACs and addresses (the
// rails 10.100.0.0/16 and 10.101.0.0/16 live, in netplan and in the RoCE
// GIDs; the management port 172.16.0.0/16), its facts read from its own
// evidence, then held as a run over SSH holds them: the facts and what fix
// reads. odd(i, data) may change node i's evidence first.
func fleet(tb testing.TB, n int, odd func(i int, data map[string][]byte)) []acquire.Node {
	tb.Helper()
	proto, err := snapshot.Read("../../testdata/nodes/spark-healthy.tar.gz")
	if err != nil {
		tb.Fatal(err)
	}
	nodes := make([]acquire.Node, n)
	for i := range nodes {
		host := fmt.Sprintf("node-%05d", i+1)
		hi, lo := (i+1)>>8, (i+1)&0xff
		r := strings.NewReplacer(
			"192.168.100.11/24", fmt.Sprintf("10.100.%d.%d/16", hi, lo),
			"192.168.200.17/24", fmt.Sprintf("10.101.%d.%d/16", hi, lo),
			`"local":"192.168.100.11","prefixlen":24`, fmt.Sprintf(`"local":"10.100.%d.%d","prefixlen":16`, hi, lo),
			`"local":"192.168.200.17","prefixlen":24`, fmt.Sprintf(`"local":"10.101.%d.%d","prefixlen":16`, hi, lo),
			`"local":"192.168.1.50","prefixlen":24`, fmt.Sprintf(`"local":"172.16.%d.%d","prefixlen":16`, hi, lo),
			"ffff:c0a8:640b", fmt.Sprintf("ffff:0a64:%02x%02x", hi, lo),
			"ffff:c0a8:c811", fmt.Sprintf("ffff:0a65:%02x%02x", hi, lo),
			"spark1", host,
		)
		s := &snapshot.Snapshot{Manifest: proto.Manifest, Data: make(map[string][]byte, len(proto.Data))}
		s.Manifest.Host = host
		for k, v := range proto.Data {
			s.Data[k] = macs.ReplaceAllFunc([]byte(r.Replace(string(v))), func(m []byte) []byte {
				return fmt.Appendf(nil, "%s%02x:%02x%s", m[:6], hi, lo, m[11:])
			})
		}
		if odd != nil {
			odd(i, s.Data)
		}
		nd := facts.FromSnapshot(s)
		s.Release(fix.Evidence)
		nodes[i] = acquire.Node{Host: host, Source: "ssh", Snap: s, Facts: nd}
	}
	return nodes
}

var macs = regexp.MustCompile(`\b[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}\b`)

// doctorRun is what doctor does after acquisition: the audit (checks,
// cluster checks, fix plan, remedies) and the text and JSON documents.
func doctorRun(tb testing.TB, nodes []acquire.Node, text io.Writer) doctor.Result {
	res := doctor.Audit(nodes, doctor.Options{Version: "test", Now: time.Unix(0, 0)})
	if err := render.Write(text, res.Report, "text", render.Options{Width: 100}); err != nil {
		tb.Fatal(err)
	}
	if err := render.Write(io.Discard, res.Report, "json", render.Options{}); err != nil {
		tb.Fatal(err)
	}
	return res
}

// BenchmarkDoctor is a whole doctor run over n nodes once their facts are
// read: scripts/bench-scale.sh reports it beside the fan-out.
//
//	go test ./internal/doctor -run '^$' -bench 'BenchmarkDoctor/nodes=10000$' -benchtime 1x
func BenchmarkDoctor(b *testing.B) {
	for _, n := range []int{32, 1000, 4000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := fleet(b, n, nil)
			runtime.GC()
			before := cpuTime()
			b.ResetTimer()
			for range b.N {
				doctorRun(b, nodes, io.Discard)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(b.N*n), "cpu-ms/node")
			b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

func TestShowFleet(t *testing.T) {
	nodes := fleet(t, 4, nil)
	var b strings.Builder
	doctorRun(t, nodes, &b)
	t.Log(b.String())
}
