package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/shell"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fixture"
)

// The test binary doubles as the stand-in for programs the test machine
// lacks (ib_write_bw, ib_write_lat, mpirun with nccl-tests, sparkrig's own
// collectives on a GPU node): run with
// SPARKRIG_STANDIN set, it replays the real output recorded in testdata/
// and behaves like the program where orchestration can see it (a server
// listens on its port and waits for its client).
func TestMain(m *testing.M) {
	if tool := os.Getenv("SPARKRIG_STANDIN"); tool != "" {
		os.Exit(standinMain(tool, os.Args[1:]))
	}
	code := m.Run()
	if sparkrigBuilt {
		if bin, err := sparkrigBinary(); err == nil {
			os.RemoveAll(filepath.Dir(bin))
		}
	}
	os.Exit(code)
}

func standinMain(tool string, args []string) int {
	trace(tool, args)
	data := os.Getenv("SPARKRIG_STANDIN_DATA")
	switch tool {
	case "ib_write_bw", "ib_write_lat":
		return standinPerftest(tool, args, data)
	case "bench-killed":
		return killedRunMain(args[0])
	case "sparkrig":
		return standinCollective(args, data)
	case "mpirun", "all_gather_perf":
		name := "standin-all_gather_perf.txt"
		if v := os.Getenv("SPARKRIG_STANDIN_NCCL"); v != "" {
			name = v
		}
		out, err := recorded(filepath.Join(data, "nccl-tests", name))
		if err != nil {
			fmt.Fprintln(os.Stderr, "standin:", err)
			return 2
		}
		fmt.Print(out)
		return 0
	}
	fmt.Fprintln(os.Stderr, "standin: unknown tool", tool)
	return 2
}

// standinHosts runs commands here for stand-in hosts, and answers the
// live check (free memory, GPU processes) as each node would: from its
// entry in live, or from its facts, never from this machine.
type standinHosts struct {
	runner.Local
	nodes []*facts.Node
	live  map[string]Live
}

func (s standinHosts) Exec(ctx context.Context, host, script string, stdin io.Reader, stdout, stderr io.Writer) error {
	if script != liveScript {
		return s.Local.Exec(ctx, host, script, stdin, stdout, stderr)
	}
	l, ok := s.live[host]
	for _, n := range s.nodes {
		if n.Host == host && !ok {
			l = Live{AvailableBytes: n.Memory.AvailableBytes}
			procs := 0
			for _, g := range n.GPUs {
				procs += g.Processes
			}
			l.GPUProcesses = &procs
		}
	}
	avail, procs := "", "-"
	if l.AvailableBytes != nil {
		avail = fmt.Sprint(*l.AvailableBytes >> 10)
	}
	if l.GPUProcesses != nil {
		procs = fmt.Sprint(*l.GPUProcesses)
	}
	_, err := fmt.Fprintf(stdout, "%s\n%s\n", avail, procs)
	return err
}

// trace records how the stand-in was started, for the tests to assert.
func trace(tool string, args []string) {
	dir := os.Getenv("SPARKRIG_STANDIN_TRACE")
	if dir == "" {
		return
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "NCCL_") || strings.HasPrefix(k, "UCX_") || strings.HasPrefix(k, "OMPI_") || strings.HasPrefix(k, "GLOO_") {
			env[k] = v
		}
	}
	b, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "env": env})
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", tool, os.Getpid())), b, 0o644)
}

func standinPerftest(tool string, args []string, data string) int {
	dev, port := flagValue(args, "-d"), flagValue(args, "-p")
	client := net.ParseIP(args[len(args)-1]) != nil
	hang := os.Getenv("SPARKRIG_STANDIN_HANG")
	addr := "127.0.0.1:" + port
	if !client {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "standin server:", err)
			return 1
		}
		fmt.Print("\n************************************\n* Waiting for client to connect... *\n************************************\n")
		if hang == "server" {
			select {}
		}
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		io.Copy(io.Discard, c)
		return 0
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, " Couldn't connect to %s\n", addr)
		return 1
	}
	if hang == "client" {
		select {}
	}
	defer c.Close()
	name := filepath.Join(data, "perftest", "standin-"+tool+"."+dev+".txt")
	if _, err := os.Stat(name); err != nil {
		name = filepath.Join(data, "perftest", "standin-"+tool+".txt")
	}
	out, err := recorded(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		return 2
	}
	fmt.Print(out)
	return 0
}

func flagValue(args []string, name string) string {
	for i, a := range args[:len(args)-1] {
		if a == name {
			return args[i+1]
		}
	}
	return ""
}

// recorded returns the program output of a fixture: the text between its
// BEGIN and END VERBATIM lines.
func recorded(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(fixture.Verbatim(b)), err
}

// standins writes executables named like the real programs into a
// directory called standin-bin: each re-runs this test binary as the
// stand-in for that program. It returns the directory.
func standins(t *testing.T, env map[string]string, tools ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "standin-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	for k, v := range env {
		vars = append(vars, shell.QuoteIfNeeded(k+"="+v))
	}
	for _, tool := range tools {
		script := fmt.Sprintf("#!/bin/sh\n# stand-in for %s: replays recorded output (sparkrig tests)\nexec env SPARKRIG_STANDIN=%s SPARKRIG_STANDIN_DATA=%s %s %s \"$@\"\n",
			tool, tool, shell.QuoteIfNeeded(data), strings.Join(vars, " "), shell.QuoteIfNeeded(self))
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// leftovers lists processes whose command line mentions marker, and TCP
// ports of ports still listening: what a clean run must not leave behind.
func leftovers(t *testing.T, marker string, ports ...int) []string {
	t.Helper()
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if filepath.Base(filepath.Dir(p)) == fmt.Sprint(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie is dead; its parent reaps it
		}
		out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
	}
	for _, port := range ports {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
			out = append(out, fmt.Sprintf("port %d still taken", port))
		} else {
			l.Close()
		}
	}
	return out
}

// eventually retries f until it returns nothing or the deadline passes.
func eventually(d time.Duration, f func() []string) []string {
	deadline := time.Now().Add(d)
	for {
		got := f()
		if len(got) == 0 || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}
