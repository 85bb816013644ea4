package acquire_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig/loopssh"
)

// The fan-out benchmarks measure sparkrig's own cost of auditing many nodes:
// the nodes are in-process SSH servers on loopback, in a child process so
// that their CPU and memory are not counted, answering the capture script
// at once with this machine's capture stream recorded when they start
// (BenchmarkRemote) or with endless zeros (BenchmarkHostileNodes).
// Run one size per process so the peak-RSS figure is that size's:
//
//	go test ./internal/acquire -run '^$' -bench 'BenchmarkRemote/hosts=1000$' -benchtime 1x
//
// scripts/bench-scale.sh runs every size.

const serverEnv = "SPARKRIG_LOOPSSH_SERVERS"

// TestLoopSSHServerProcess is the child: it serves until stdin closes.
func TestLoopSSHServerProcess(t *testing.T) {
	spec := os.Getenv(serverEnv)
	if spec == "" {
		t.Skip("runs only as the fan-out benchmark's server process")
	}
	mode, rest, _ := strings.Cut(spec, ",")
	n, _ := strconv.Atoi(rest)
	var answer []byte
	if mode == "capture" {
		cmd := exec.Command("sh", "-s") // recorded once, replayed to every client
		cmd.Stdin = strings.NewReader(capture.Script())
		var err error
		if answer, err = cmd.Output(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := loopssh.Start(n, t.TempDir(), func(_ int, cmd string, stdin io.Reader, stdout io.Writer) int {
		if strings.Contains(cmd, "kill -TERM") {
			return 0
		}
		if _, err := io.WriteString(stdout, "sparkrig-pgid 4242\n"); err != nil {
			return 1
		}
		if mode == "zeros" {
			zeros := make([]byte, 32<<10)
			for {
				if _, err := stdout.Write(zeros); err != nil {
					return 1
				}
			}
		}
		io.Copy(io.Discard, stdin)
		stdout.Write(answer)
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("%s %s %s %s\n", s.SSHConfig, s.Identity, s.KnownHosts, strings.Join(s.Hosts, ","))
	io.Copy(io.Discard, os.Stdin)
}

// startServers starts n servers in a child process.
func startServers(b *testing.B, mode string, n int) (config string, hosts []string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoopSSHServerProcess$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", serverEnv, mode, n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 4 {
		b.Fatalf("server process: %q, %v", line, err)
	}
	return f[0], strings.Split(f[3], ",")
}

func BenchmarkRemote(b *testing.B) {
	for _, n := range []int{1, 32, 256, 1000, 4000, 10000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) { benchRemote(b, "capture", n) })
	}
}

// BenchmarkHostileNodes: 32 nodes that answer with endless zeros.
func BenchmarkHostileNodes(b *testing.B) {
	b.Run("hosts=32", func(b *testing.B) { benchRemote(b, "zeros", 32) })
}

func benchRemote(b *testing.B, mode string, n int) {
	config, hosts := startServers(b, mode, n)
	d, err := remote.NewDialer(remote.Options{ConfigFile: config, Home: b.TempDir(), ConnectTimeout: 60 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	o := acquire.Options{Dialer: d, Parallel: remote.DefaultParallel, HostTimeout: 60 * time.Second,
		Timeout: 10 * time.Minute, NoPing: true, Keep: fix.Evidence, KeepPaths: fix.Paths()}
	before := cpuTime()
	b.ResetTimer()
	failed := 0
	for i := 0; i < b.N; i++ {
		nodes := acquire.Remote(context.Background(), hosts, o)
		failed = 0
		for _, nd := range nodes {
			if nd.Err != nil {
				failed++
				if mode == "capture" {
					b.Fatalf("%s: %v", nd.Host, nd.Err)
				}
			} else if nd.Facts == nil {
				b.Fatalf("%s: no facts", nd.Host)
			}
		}
		runtime.KeepAlive(nodes)
	}
	b.StopTimer()
	if mode == "zeros" && failed != n {
		b.Fatalf("%d of %d hostile nodes refused, want all", failed, n)
	}
	b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(b.N*n), "cpu-ms/host")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
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
