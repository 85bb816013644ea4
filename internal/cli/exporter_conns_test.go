package cli

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// idleHelperEnv makes the test binary a client that opens idle keep-alive
// connections ("addr local-ip count") and holds them until stdin closes: the
// connections are spread over several processes, each within the file
// descriptor limit.
const idleHelperEnv = "SPARKRIG_TEST_IDLE_CONNS"

func TestIdleConnsHelper(t *testing.T) {
	spec := os.Getenv(idleHelperEnv)
	if spec == "" {
		t.Skip("a helper process of TestExporterUnderIdleConnections")
	}
	var addr, local string
	var n int
	fmt.Sscan(spec, &addr, &local, &n)
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	var held []net.Conn
	answered := 0
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			continue
		}
		held = append(held, c)
		// one request, then idle on a keep-alive connection
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err == nil {
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered++
			}
		}
		c.SetDeadline(time.Time{})
	}
	fmt.Printf("opened %d answered %d\n", len(held), answered)
	io.Copy(io.Discard, os.Stdin)
}

// TestExporterUnderIdleConnections opens 20,000 idle keep-alive connections
// to the exporter (from four processes: this host's limit is about 20,000
// descriptors a process) and scrapes it all along: every scrape succeeds,
// and the exporter holds no more than --max-connections.
func TestExporterUnderIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 connections")
	}
	bin := buildSparkrig(t)
	args := []string{"--interval", "1h", "--max-connections", "512", "--results", "testdata/bench/h200x2-native.json"}
	if os.Getenv("SPARKRIG_TEST_BIN") != "" && os.Getenv("SPARKRIG_TEST_NO_MAX_CONNECTIONS") != "" {
		args = args[2:] // a build from before --max-connections, to compare
	}
	addr, exp := startExporter(t, bin, args...)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	scrape := func() (time.Duration, error) {
		start := time.Now()
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && (resp.StatusCode != 200 || !strings.Contains(string(b), "sparkrig_exporter_audits_total")) {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), err
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := scrape(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("no scrape before the flood:", err)
		}
	}

	const procs, each = 4, 5000
	var scrapes, failed atomic.Int32
	var worst atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // scrapes all along the flood
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			d, err := scrape()
			scrapes.Add(1)
			if err != nil {
				failed.Add(1)
				t.Logf("scrape during the flood: %v", err)
			}
			if int64(d) > worst.Load() {
				worst.Store(int64(d))
			}
		}
	})
	start := time.Now()
	var lines []string
	for i := range procs {
		h := exec.Command(os.Args[0], "-test.run=^TestIdleConnsHelper$")
		h.Env = append(os.Environ(), fmt.Sprintf("%s=%s 127.0.0.%d %d", idleHelperEnv, addr, i+2, each))
		stdin, _ := h.StdinPipe()
		out, _ := h.StdoutPipe()
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stdin.Close(); h.Wait() }()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "opened ") {
				lines = append(lines, sc.Text())
				break
			}
		}
	}
	flood := time.Since(start)
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(exp.Process.Pid) + "/fd")
	// and after the flood, with every helper still holding what it has
	var after []time.Duration
	for range 20 {
		d, err := scrape()
		if err != nil {
			t.Errorf("scrape after the flood: %v", err)
		}
		after = append(after, d)
	}
	close(stop)
	wg.Wait()
	opened := 0
	for _, l := range lines {
		var o, a int
		fmt.Sscanf(l, "opened %d answered %d", &o, &a)
		opened += o
	}
	t.Logf("%d connections opened by %d processes in %s (%v); exporter holds %d descriptors; %d scrapes during the flood, %d failed, slowest %s; 20 after: %v",
		opened, procs, flood.Round(time.Millisecond), lines, len(fds), scrapes.Load(), failed.Load(), time.Duration(worst.Load()).Round(time.Millisecond), after)
	if opened < procs*each*9/10 {
		t.Errorf("only %d of %d connections opened", opened, procs*each)
	}
	if failed.Load() > 0 {
		t.Errorf("%d of %d scrapes failed during the flood", failed.Load(), scrapes.Load())
	}
	if len(fds) > 512+64 {
		t.Errorf("the exporter holds %d descriptors, over --max-connections 512 and its own", len(fds))
	}
}
