package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// linkProblems lists "id subject" of the link.* findings.
func linkProblems(rep *report.Report) []string {
	var out []string
	for _, f := range rep.Cluster.Findings {
		if strings.HasPrefix(f.ID, "link.") {
			out = append(out, f.ID+" "+f.Subject)
		}
	}
	return out
}

// TestRigQualify: doctor --qualify on a pair with both twins of port 1
// cabled: every direction of both links tested; then one twin's egress
// shaped with tc tbf (a degraded port) and a stand-in RDMA error counter
// that advances during the test (the rig has no RoCE hardware: the counter
// file is a stand-in, bumped from outside while the test runs).
//
// Not parallel: the verdicts compare rates, and other rig tests' traffic on
// the same two cores would be measured with them. Even so, a loaded machine
// moves TCP unevenly, so the healthy pair is held to what no load changes:
// every direction measured, no error counter moved, nothing failed.
func TestRigQualify(t *testing.T) {
	r := sparkPair(t, func(c *testrig.Config) { c.Hosts[0].RDMA, c.Hosts[1].RDMA = true, true })
	start := time.Now()
	_, rep, errOut := rigDoctor(t, r, "--qualify")
	took := time.Since(start)
	t.Logf("doctor --qualify of 2 nodes, 2 links, 4 directions: %s (%s)", took, strings.TrimSpace(errOut))
	if len(rep.Cluster.Qualified) != 4 {
		t.Fatalf("%d directions qualified, want 4: %+v", len(rep.Cluster.Qualified), rep.Cluster.Qualified)
	}
	for _, q := range rep.Cluster.Qualified {
		if q.Verdict == "failed" || q.Verdict == "errors" || q.Gbps <= 0 {
			t.Errorf("healthy pair: %+v", q)
		}
	}
	for _, p := range linkProblems(rep) {
		if !strings.HasPrefix(p, "link.degraded") && !strings.HasPrefix(p, "link.asymmetric") {
			t.Errorf("healthy pair: %s", p)
		}
	}

	// spark-01's second twin sends at 200 Mbit/s at most: a veth moves
	// gigabits even on a loaded machine.
	rigOut(t, r, "spark-01", "tc", "qdisc", "add", "dev", "enP2p1s0f1np1", "root", "tbf", "rate", "200mbit", "burst", "256kb", "latency", "100ms")
	counter := filepath.Join(r.Host("spark-02").Dir, "root/sys/class/infiniband/rocep1s0f1/ports/1/counters/symbol_error")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	f, err := os.OpenFile(counter, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	go func() { // the stand-in counter counts up while the doctor runs
		defer wg.Done()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				// Written in place at a fixed width, never truncated: a
				// read between a truncation and the write would find no
				// value, as sysfs never shows.
				f.WriteAt(fmt.Appendf(nil, "%010d\n", n), 0)
			}
		}
	}()
	_, rep, _ = rigDoctor(t, r, "--qualify")
	close(stop)
	wg.Wait()
	t.Logf("directions: %+v", rep.Cluster.Qualified)
	got := strings.Join(linkProblems(rep), "\n")
	for _, want := range []string{
		"link.degraded spark-01:enP2p1s0f1np1→spark-02:enP2p1s0f1np1",
		"link.asymmetric rail1",
		"link.errors spark-01:enp1s0f1np1→spark-02:enp1s0f1np1",
		"link.errors spark-02:enp1s0f1np1→spark-01:enp1s0f1np1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("link findings lack %q:\n%s", want, got)
		}
	}
	// The shaped direction is the slowest of the four (the others' verdicts
	// depend on the machine's load, the shaped one's does not).
	slowest := rep.Cluster.Qualified[0]
	for _, q := range rep.Cluster.Qualified {
		if q.Gbps < slowest.Gbps {
			slowest = q
		}
	}
	if slowest.From != "spark-01:enP2p1s0f1np1" || slowest.Verdict != "slow" {
		t.Errorf("slowest direction %+v, want spark-01:enP2p1s0f1np1 slow", slowest)
	}
	for _, not := range []string{"link.errors spark-01:enP2p1s0f1np1", "link.errors spark-02:enP2p1s0f1np1"} {
		if strings.Contains(got, not) {
			t.Errorf("link findings include %q:\n%s", not, got)
		}
	}

	// bench qualify over the shaped twin, and report over the run's saved
	// document, give one verdict: the qualify findings count in both.
	dir := t.TempDir()
	var bout, berr bytes.Buffer
	bcode := Main([]string{"bench", "qualify", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","), "--results", dir},
		strings.NewReader(""), &bout, &berr)
	saved, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(saved) != 1 {
		t.Fatalf("bench qualify: exit %d, saved %q\n%s\n%s", bcode, saved, bout.String(), berr.String())
	}
	if !strings.Contains(bout.String(), "link.degraded spark-01:enP2p1s0f1np1→spark-02:enP2p1s0f1np1") {
		t.Errorf("bench qualify does not show the degraded direction:\n%s", bout.String())
	}
	var rout, rerr bytes.Buffer
	rcode := Main([]string{"report", "--format", "json", saved[0]}, strings.NewReader(""), &rout, &rerr)
	if bcode == ExitOK || rcode != bcode {
		t.Errorf("bench qualify exit %d, report over its document exit %d; want one verdict, not ok\n%s", bcode, rcode, rerr.String())
	}
}
