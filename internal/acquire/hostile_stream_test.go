package acquire_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
)

// hostileStreams are the answers a hostile node gives the capture script,
// each with the error that must end it.
var hostileStreams = []struct {
	name, want string
	send       func(w io.Writer, limit int64) int64
}{
	{"endless header", "a record header longer than 8 KiB", loopssh.EndlessHeader},
	{"endless empty links", "capture stream of more than 50000 records",
		func(w io.Writer, limit int64) int64 { return loopssh.EndlessEmptyRecords(w, "link", limit) }},
	{"endless empty commands", "capture stream of more than 50000 records",
		func(w io.Writer, limit int64) int64 { return loopssh.EndlessEmptyRecords(w, "cmd", limit) }},
}

// A node that answers with a header line without end, or with endless
// zero-size records, is stopped at the stream's bounds (header bytes and
// records are counted, not only payloads) with memory bounded, and the
// node beside it is still captured.
func TestHostileNodeStreamsAreBounded(t *testing.T) {
	recorded := recordedCapture(t)
	for _, hs := range hostileStreams {
		t.Run(hs.name, func(t *testing.T) {
			var sent atomic.Int64
			s, err := loopssh.Start(2, t.TempDir(), healthyBeside(recorded, func(w io.Writer) {
				hs.send(countingWriter{w, &sent}, 4<<30)
			}))
			d := loopDialer(t, s, err)
			runtime.GC()
			stop := samplePeakHeap()
			nodes := acquire.Remote(context.Background(), s.Hosts, acquire.Options{Dialer: d, Parallel: 2,
				HostTimeout: 120 * time.Second, Timeout: 240 * time.Second, NoPing: true})
			peak := stop()
			if err := nodes[0].Err; err == nil || !strings.Contains(err.Error(), hs.want) {
				t.Errorf("hostile node: %v, want %q", err, hs.want)
			}
			if nodes[1].Err != nil || nodes[1].Facts == nil {
				t.Errorf("healthy node: %v", nodes[1].Err)
			}
			if peak > 256<<20 {
				t.Errorf("the heap held %d MiB at its peak; the bound per node is 256 MiB", peak>>20)
			}
			t.Logf("peak heap %d MiB, %d MiB sent", peak>>20, sent.Load()>>20)
			if n := sent.Load(); n > 96<<20 {
				t.Errorf("the hostile node sent %d MiB before it was stopped; the stream's bound is 64 MiB", n>>20)
			}
		})
	}
}

// countingWriter adds what it writes to n as it goes.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// recordedCapture is the capture script's real output on this machine.
func recordedCapture(t testing.TB) []byte {
	t.Helper()
	cmd := exec.Command("sh", "-s")
	cmd.Stdin = strings.NewReader(capture.Script())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// healthyBeside is a handler whose node 0 answers the capture with hostile
// and every other node with the recorded capture.
func healthyBeside(recorded []byte, hostile func(w io.Writer)) loopssh.Handler {
	return func(host int, cmd string, stdin io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			return 0
		}
		io.WriteString(stdout, "sparkrig-pgid 4242\n")
		if !strings.Contains(cmd, "sh -s") {
			return 0
		}
		if host == 0 {
			hostile(stdout)
			return 1
		}
		io.Copy(io.Discard, stdin)
		stdout.Write(recorded)
		return 0
	}
}

// BenchmarkHostileNode captures one hostile node per run and reports the
// bytes it sent before it was stopped and the process's peak RSS (run
// each alone, as scripts/bench-scale.sh does, for that case's own figure).
func BenchmarkHostileNode(b *testing.B) {
	recorded := recordedCapture(b)
	for _, hs := range hostileStreams {
		b.Run(strings.ReplaceAll(hs.name, " ", "-"), func(b *testing.B) {
			var sent atomic.Int64
			s, err := loopssh.Start(1, b.TempDir(), healthyBeside(recorded, func(w io.Writer) { hs.send(countingWriter{w, &sent}, 4<<30) }))
			d := loopDialer(b, s, err)
			for b.Loop() {
				nodes := acquire.Remote(context.Background(), s.Hosts, acquire.Options{Dialer: d, Parallel: 1,
					HostTimeout: 120 * time.Second, Timeout: 240 * time.Second, NoPing: true})
				if nodes[0].Err == nil {
					b.Fatal("the hostile node was accepted")
				}
			}
			b.ReportMetric(float64(sent.Load())/(1<<20), "MiB-sent")
			b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
		})
	}
}

// samplePeakHeap samples the heap's objects (live and not yet collected)
// every millisecond until the function it returns is called, which returns
// the largest sample.
func samplePeakHeap() func() uint64 {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

// A ProxyJump inside a Match block sparkrig cannot evaluate refuses the
// node it may apply to (ssh -G would go through the bastion) instead of
// connecting to it directly; the node beside it is captured.
func TestUnevaluatedMatchRefusesTheNodeItMayRoute(t *testing.T) {
	recorded := recordedCapture(t)
	var reached [2]atomic.Bool
	s, err := loopssh.Start(2, t.TempDir(), func(host int, cmd string, stdin io.Reader, stdout io.Writer) int {
		reached[host].Store(true)
		return healthyBeside(recorded, func(io.Writer) {})(host+1, cmd, stdin, stdout) // every node healthy
	})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(s.SSHConfig)
	if err != nil {
		t.Fatal(err)
	}
	conf = append(conf, "\nMatch host "+s.Hosts[0]+" exec \"true\"\n  ProxyJump bastion.invalid\n"...)
	if err := os.WriteFile(s.SSHConfig, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	d := loopDialer(t, s, nil)
	nodes := acquire.Remote(context.Background(), s.Hosts, acquire.Options{Dialer: d, Parallel: 2,
		HostTimeout: 60 * time.Second, Timeout: 120 * time.Second, NoPing: true})
	if err := nodes[0].Err; err == nil || !strings.Contains(err.Error(), "sets ProxyJump and may apply to "+s.Hosts[0]) || reached[0].Load() {
		t.Errorf("node 0: %v (reached directly: %v)", err, reached[0].Load())
	}
	if nodes[1].Err != nil || nodes[1].Facts == nil {
		t.Errorf("node 1: %v", nodes[1].Err)
	}
}

// A hostile snapshot (a manifest of two million items, a manifest that is
// a symlink to /dev/zero) is reported alone; the snapshots beside it are
// read and audited.
func TestHostileSnapshotBesideGoodOnes(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "many.tar.gz")
	var m strings.Builder
	m.WriteString(`{"schema":1,"host":"big","items":[{}`)
	for range 2_000_000 - 1 {
		m.WriteString(`,{}`)
	}
	m.WriteString("]}")
	writeTarGz(t, many, map[string]string{"manifest.json": m.String()})
	zero := filepath.Join(dir, "zero")
	if err := os.MkdirAll(zero, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zero, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("..", "..", "testdata", "nodes", "spark-healthy.tar.gz")
	nodes := acquire.Snapshots([]string{good, many, zero, good}, nil)
	for i, want := range []string{"", "lists more than 200000 items", "manifest.json is not a regular file", ""} {
		n := nodes[i]
		switch {
		case want == "" && (n.Err != nil || n.Facts == nil):
			t.Errorf("%d: %v", i, n.Err)
		case want != "" && (n.Err == nil || !strings.Contains(n.Err.Error(), want)):
			t.Errorf("%d: %v, want %q", i, n.Err, want)
		}
	}
}

func writeTarGz(t *testing.T, p string, files map[string]string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

// A snapshot whose read stalls (a file on a hung mount) is given up on at
// the per-snapshot deadline and reported alone; the others are audited. The
// stalled read would otherwise never return.
func TestStalledSnapshotIsGivenUp(t *testing.T) {
	good := filepath.Join("..", "..", "testdata", "nodes", "spark-healthy.tar.gz")
	stalled := filepath.Join(t.TempDir(), "stalled.tar.gz")
	restore := acquire.StallSnapshots(stalled, 2*time.Second)
	defer restore()
	nodes := acquire.Snapshots([]string{good, stalled, good}, nil)
	if nodes[0].Err != nil || nodes[2].Err != nil {
		t.Errorf("good snapshots: %v, %v", nodes[0].Err, nodes[2].Err)
	}
	if err := nodes[1].Err; err == nil || !strings.Contains(err.Error(), "still reading after 2s (a stalled file system?); given up") {
		t.Errorf("stalled snapshot: %v", err)
	}
}
