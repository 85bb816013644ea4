package cli

import (
	"os"
	"path/filepath"
	"strconv"
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
func TestRigQualify(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) { c.Hosts[0].RDMA, c.Hosts[1].RDMA = true, true })
	start := time.Now()
	_, rep, errOut := rigDoctor(t, r, "--qualify")
	took := time.Since(start)
	t.Logf("doctor --qualify of 2 nodes, 2 links, 4 directions: %s (%s)", took, strings.TrimSpace(errOut))
	if len(rep.Cluster.Qualified) != 4 {
		t.Fatalf("%d directions qualified, want 4: %+v", len(rep.Cluster.Qualified), rep.Cluster.Qualified)
	}
	for _, q := range rep.Cluster.Qualified {
		if q.Verdict != "ok" || q.Gbps <= 0 {
			t.Errorf("healthy pair: %+v", q)
		}
	}
	if got := linkProblems(rep); len(got) != 0 {
		t.Errorf("healthy pair: %q", got)
	}

	// spark-01's second twin sends at 1 Gbit/s at most.
	rigOut(t, r, "spark-01", "tc", "qdisc", "add", "dev", "enP2p1s0f1np1", "root", "tbf", "rate", "1gbit", "burst", "1mb", "latency", "50ms")
	counter := filepath.Join(r.Host("spark-02").Dir, "root/sys/class/infiniband/rocep1s0f1/ports/1/counters/symbol_error")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the stand-in counter counts up while the doctor runs
		defer wg.Done()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				os.WriteFile(counter, []byte(strconv.Itoa(n)+"\n"), 0o644)
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
	for _, not := range []string{"link.degraded spark-02:enP2p1s0f1np1", "link.degraded spark-01:enp1s0f1np1", "link.degraded spark-02:enp1s0f1np1", "link.errors spark-01:enP2p1s0f1np1"} {
		if strings.Contains(got, not) {
			t.Errorf("link findings include %q:\n%s", not, got)
		}
	}
}
