package doctor_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
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
		nodes[i] = acquire.Node{Host: host, Source: "ssh", Snap: acquire.Reduce(s, fix.Evidence, fix.Paths()), Facts: nd}
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
// read, 7 of which differ from the others (the text must name them):
// scripts/bench-scale.sh reports it beside the fan-out.
//
//	go test ./internal/doctor -run '^$' -bench 'BenchmarkDoctor/nodes=10000$' -benchtime 1x
func BenchmarkDoctor(b *testing.B) {
	for _, n := range []int{32, 1000, 4000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes, differs := oddFleet(b, n, 7, 38)
			runtime.GC()
			before := cpuTime()
			b.ResetTimer()
			var text strings.Builder
			for range b.N {
				text.Reset()
				doctorRun(b, nodes, &text)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(b.N*n), "cpu-ms/node")
			b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
			if n > report.FoldAbove {
				namesTheOdd(b, text.String(), n, differs)
			}
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

// oddFleet is fleet(n) of which odd nodes, chosen by seed, differ from the
// others, each in one of three ways (a socket buffer, the kernel command
// line, an NCCL variable): it returns the nodes and the names of those
// that differ.
func oddFleet(tb testing.TB, n, odd int, seed uint64) ([]acquire.Node, map[int]string) {
	rng := rand.New(rand.NewPCG(seed, 7))
	differs := map[int]string{}
	for len(differs) < odd {
		differs[rng.IntN(n)] = ""
	}
	ways := []func(map[string][]byte){
		func(d map[string][]byte) { d["files/proc/sys/net/core/rmem_max"] = []byte("212992\n") },
		func(d map[string][]byte) {
			d["files/proc/cmdline"] = append(bytes.TrimSpace(d["files/proc/cmdline"]), " iommu=off\n"...)
		},
		func(d map[string][]byte) {
			d[snapshot.CmdKey("env", "stdout")] = bytes.Replace(d[snapshot.CmdKey("env", "stdout")], []byte("NCCL_IB_GID_INDEX=3"), []byte("NCCL_IB_GID_INDEX=1"), 1)
		},
	}
	way := map[int]int{}
	for k, i := range slices.Sorted(maps.Keys(differs)) {
		differs[i] = fmt.Sprintf("node-%05d", i+1)
		way[i] = k % len(ways)
	}
	nodes := fleet(tb, n, func(i int, d map[string][]byte) {
		if _, ok := differs[i]; ok {
			ways[way[i]](d)
		}
	})
	return nodes, differs
}

// namesTheOdd checks doctor's text over n nodes: the healthy nodes are one
// section (the first healthy node) and one line naming the others; every
// other name in the text is a node that differs, and each that differs is
// named.
func namesTheOdd(tb testing.TB, out string, n int, differs map[int]string) {
	tb.Helper()
	// the largest fold: "the same on N more hosts: …" up to its blank line
	var rest, fold string
	most := 0
	for _, m := range regexp.MustCompile(`the same on (\d+) more hosts:\s`).FindAllStringSubmatchIndex(out, -1) {
		if c, _ := strconv.Atoi(out[m[2]:m[3]]); c > most {
			most, rest, fold = c, out[:m[0]], out[m[1]:]
		}
	}
	if most < n-len(differs)-1 {
		tb.Fatalf("no line folds the %d healthy hosts:\n%.20000s", n-len(differs)-1, out)
	}
	_, after, _ := strings.Cut(fold, "\n\n")
	named := map[string]bool{}
	for _, h := range regexp.MustCompile(`node-\d{5}`).FindAllString(rest+after, -1) {
		named[h] = true
	}
	first := 0
	for differs[first] != "" {
		first++
	}
	odd := slices.Collect(maps.Values(differs))
	for h := range named {
		if !slices.Contains(odd, h) && h != fmt.Sprintf("node-%05d", first+1) {
			tb.Errorf("%s is like the others but is named", h)
		}
	}
	for _, h := range odd {
		if !named[h] {
			tb.Errorf("%s differs but is not named", h)
		}
	}
	if lines := strings.Count(out, "\n"); lines > 300 {
		tb.Errorf("%d lines of text for %d nodes", lines, n)
	}
}

// Of a fleet larger than a document spells out host by host, the text
// names every node that differs from the others, whichever they are and
// however they differ, and folds the rest into one line; the JSON lists
// every host. (BenchmarkDoctor checks the same at 10,000 nodes.)
func TestTextNamesTheNodesThatDiffer(t *testing.T) {
	for seed := range uint64(3) {
		const n = 200
		nodes, differs := oddFleet(t, n, 7, seed)
		var text strings.Builder
		res := doctorRun(t, nodes, &text)
		namesTheOdd(t, text.String(), n, differs)
		if len(res.Report.Hosts) != n {
			t.Errorf("report holds %d hosts, want %d", len(res.Report.Hosts), n)
		}
		if t.Failed() {
			t.Logf("seed %d:\n%s", seed, text.String())
			break
		}
	}
}
