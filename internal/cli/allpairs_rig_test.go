package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/shell"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// switchRig is n hosts on one switch (a bridge in its own namespace), each
// port shaped with tc tbf to portRate both ways: the switch's port speed,
// which a loaded machine still moves evenly.
func switchRig(t *testing.T, n int, portRate string) (*testrig.Rig, *testrig.Switch) {
	return switchRigB(t, n, portRate)
}

func switchRigB(t testing.TB, n int, portRate string) (*testrig.Rig, *testrig.Switch) {
	t.Helper()
	var cfg testrig.Config
	for i := range n {
		cfg.Hosts = append(cfg.Hosts, testrig.HostSpec{Name: fmt.Sprintf("node-%d", i+1)})
	}
	r := testrig.New(t, cfg)
	var ports []testrig.SwitchPort
	for i, h := range r.Names() {
		ports = append(ports, testrig.SwitchPort{Host: h, Dev: "enp1s0f1np1", Addr: fmt.Sprintf("10.77.0.%d/24", 11+i)})
	}
	sw, err := r.AddSwitch(ports)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Names() {
		shape(t, r, sw, h, "both", portRate)
	}
	return r, sw
}

// shape sets a host's port rate: "tx" what it sends (its veth's egress),
// "rx" what it receives (the switch port's egress), or both.
func shape(t testing.TB, r *testrig.Rig, sw *testrig.Switch, host, side, rate string) {
	t.Helper()
	tbf := []string{"root", "tbf", "rate", rate, "burst", "64kb", "latency", "10ms"}
	if side != "rx" {
		if out, err := r.Host(host).Exec(context.Background(), append([]string{"tc", "qdisc", "replace", "dev", "enp1s0f1np1"}, tbf...)...); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	if side != "tx" {
		if out, err := sw.Exec(context.Background(), append([]string{"tc", "qdisc", "replace", "dev", sw.Ports[host]}, tbf...)...); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
}

func rigQualify(t *testing.T, r *testrig.Rig, extra ...string) (int, *report.Report, string) {
	t.Helper()
	args := append([]string{"qualify", "--all-pairs", "--format", "json", "--ssh-config", r.SSHConfig, "--host-timeout", "60s",
		"--hosts", strings.Join(r.Names(), ",")}, extra...)
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.AllPairs == nil {
		t.Fatalf("exit %d, no all-pairs report: %v\nstdout: %s\nstderr: %s", code, err, out.String(), errb.String())
	}
	return code, &rep, errb.String()
}

// wantNamed holds a critical run to naming exactly want.
func wantNamed(t *testing.T, rep *report.Report, code int, want []string) {
	t.Helper()
	if got := named(rep); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("named %q, want %q", got, want)
	}
	if code != ExitCritical {
		t.Errorf("exit %d, want %d", code, ExitCritical)
	}
}

// named lists what a report names: its suspects not cleared and its
// findings, "kind node side status" and "id host subject".
func named(rep *report.Report) []string {
	var out []string
	for _, s := range rep.AllPairs.Suspects {
		if s.Status != "cleared" {
			out = append(out, strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s", s.Kind, s.Node, s.Side, s.Peer, s.Status)), " "))
		}
	}
	for _, f := range rep.Cluster.Findings {
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Severity, f.ID, f.Host, f.Subject))
	}
	sort.Strings(out)
	return out
}

// TestRigAllPairs: eight hosts on one switch, every port at 200 Mbit/s;
// node-3's port at 20 Mbit/s both ways and node-6's cable slow only in
// what node-6 sends. qualify --all-pairs names exactly node-3 and
// node-6's sending side, and nothing else. Not parallel: rates are
// compared, and other rig tests' traffic on the same cores would be
// measured with them.
func TestRigAllPairs(t *testing.T) {
	r, sw := switchRig(t, 8, "200mbit")
	shape(t, r, sw, "node-3", "both", "20mbit")
	shape(t, r, sw, "node-6", "tx", "20mbit")
	start := time.Now()
	code, rep, errOut := rigQualify(t, r, "--test-time", "2s", "--subnet", "10.77.0.0/24")
	t.Logf("qualify --all-pairs of 8 nodes at 2 s a test: %s wall (%s)", time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(errOut))
	var text bytes.Buffer
	writeRendered(&Env{Stdout: &text, Getenv: func(string) string { return "" }}, "", "text", rep)
	t.Logf("\n%s", text.String())
	want := []string{
		"cable node-6 tx confirmed",
		"fail allpairs.cable node-6 cable tx",
		"fail allpairs.node node-3 port",
		"node node-3 confirmed",
	}
	wantNamed(t, rep, code, want)
	ap := rep.AllPairs
	if ap.Rounds != 7 || len(ap.Matrix) != 8 || ap.Segment != "10.77.0.0/24" || ap.TestSeconds != 2 {
		t.Errorf("rounds %d, segment %s, test %v s", ap.Rounds, ap.Segment, ap.TestSeconds)
	}
	// the rig's hosts have no GPU: no NCCL test, and the report says why
	if n := ap.NCCL; n == nil || len(n.Pairs) != 0 || len(n.Skipped) != 9 ||
		n.Skipped[0] != "no pair was NCCL-tested: the test needs a GPU and NCCL on both nodes" || n.Skipped[1] != "node-1 has no GPU" {
		t.Errorf("NCCL part %+v", n)
	}
	if !strings.Contains(text.String(), "no pair was NCCL-tested") {
		t.Errorf("the text does not say why no NCCL test ran")
	}
	// the shaped directions are under 0.1 Gb/s, every other over it but
	// those towards node-6: what node-6 receives is acknowledged through
	// its slow side, behind what it sends at the same time, so their rate
	// depends on the moment (the re-tests run each direction alone)
	for i, row := range ap.Matrix {
		for j, v := range row {
			slow := i == 2 || j == 2 || i == 5
			if i != j && j != 5 && slow != (v < 0.1) {
				t.Errorf("%s→%s %.3f Gb/s", ap.Nodes[i], ap.Nodes[j], v)
			}
		}
	}
}

// TestRigAllPairsRejectedPath: four hosts on one switch, node-1 with an
// unreachable route to node-2's address, so that node-1 → node-2 fails at
// once and node-2 → node-1 when its connection times out. Each direction
// is a test of its own: the failures stop nothing else of their rounds,
// and qualify names exactly that pair's two paths, confirmed, and no node.
func TestRigAllPairsRejectedPath(t *testing.T) {
	r, _ := switchRig(t, 4, "200mbit")
	if out, err := r.Host("node-1").Exec(context.Background(), "ip", "route", "add", "unreachable", "10.77.0.12/32"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	code, rep, errOut := rigQualify(t, r, "--test-time", "2s", "--subnet", "10.77.0.0/24")
	t.Logf("%s\n%v", strings.TrimSpace(errOut), rep.AllPairs.Matrix)
	want := []string{
		"fail allpairs.pair  the path node-1 → node-2",
		"fail allpairs.pair  the path node-2 → node-1",
		"pair node-1 node-2 confirmed",
		"pair node-2 node-1 confirmed",
	}
	wantNamed(t, rep, code, want)
	for i, row := range rep.AllPairs.Matrix {
		for j, v := range row {
			if rejected := i+j == 1; i != j && rejected != (v < 0) {
				t.Errorf("%s→%s %.3f Gb/s", rep.AllPairs.Nodes[i], rep.AllPairs.Nodes[j], v)
			}
		}
	}
}

// BenchmarkRigAllPairs is the wall time of qualify --all-pairs over eight
// healthy rig hosts on one switch at 2 s a test: the goal is 7 rounds ×
// 2 s + 20 % (16.8 s) for the rounds.
func BenchmarkRigAllPairs(b *testing.B) {
	r, _ := switchRigB(b, 8, "200mbit")
	for range b.N {
		args := []string{"qualify", "--all-pairs", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","),
			"--test-time", "2s", "--subnet", "10.77.0.0/24"}
		var out, errb bytes.Buffer
		start := time.Now()
		code := Main(args, strings.NewReader(""), &out, &errb)
		b.Logf("exit %d in %s: %s", code, time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(errb.String()))
	}
}

// TestRigQualifyRing: a direct-cabled ring of four, each cable's twins on
// their own subnets, every data netdev sending at 200 Mbit/s but
// spark-02's port 0 (its cable to spark-03) at 20 Mbit/s: qualify --ring
// measures the cables in NCCL's even/odd order and names that direction
// of that cable, confirmed by measuring it again.
func TestRigQualifyRing(t *testing.T) {
	cfg, err := testrig.Sparks(4, "ring")
	if err != nil {
		t.Fatal(err)
	}
	r := testrig.New(t, cfg)
	for _, h := range r.Names() {
		p0, p1 := testrig.PortNetDevs(0), testrig.PortNetDevs(1)
		for _, dev := range []string{p0[0], p0[1], p1[0], p1[1]} {
			rate := "200mbit"
			if h == "spark-02" && (dev == testrig.PortNetDevs(0)[0] || dev == testrig.PortNetDevs(0)[1]) {
				rate = "20mbit"
			}
			if out, err := r.Host(h).Exec(context.Background(), "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", "64kb", "latency", "10ms"); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}
	}
	// the veths' operstate follows their carrier a moment after the rig
	// is up: wait for every data port, as a ring's are before a run
	deadline := time.Now().Add(30 * time.Second)
	for _, h := range r.Names() {
		for {
			out, _ := r.Host(h).Exec(context.Background(), "ip", "-br", "link")
			if strings.Count(string(out), " UP ") >= 5 || time.Now().After(deadline) { // four data ports and the management one
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	args := []string{"qualify", "--ring", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","), "--test-time", "2s"}
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.AllPairs == nil {
		t.Fatalf("exit %d: %v\n%s", code, err, errb.String())
	}
	t.Logf("%s\n%v", strings.TrimSpace(errb.String()), rep.AllPairs.Matrix)
	if got := named(&rep); strings.Join(got, "\n") != "fail allpairs.pair  the path spark-02 → spark-03\npair spark-02 spark-03 confirmed" {
		t.Fatalf("named %q", got)
	}
	// The shaped direction cannot measure fast; a healthy one may measure
	// slow once on a loaded machine (its re-test clears it, as named shows),
	// so the matrix is held to the shaped direction alone.
	ap := rep.AllPairs
	if ap.Schedule != "ring" || ap.Rounds != 2 || ap.Matrix[0][2] != 0 || ap.Matrix[1][2] >= 0.1 {
		t.Fatalf("%s, %d rounds, matrix %v", ap.Schedule, ap.Rounds, ap.Matrix)
	}
}

// standinPerftest is a stand-in ib_write_bw for rig hosts (the rig has no
// RoCE hardware): as a client (its last argument the server's address) it
// replays a real recorded ib_write_bw client output; as a server it
// listens on its -p port, as perftest's server does, until bench stops
// it (this test binary run as sparkrig's probe server holds the port).
func standinPerftest(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := fixture.ReadVerbatim(t, "testdata/perftest/ib_write_bw-client.txt")
	return "#!/bin/bash\n# stand-in ib_write_bw of the sparkrig test rig: replays a recorded client output; it is not perftest\n" +
		"port=; last=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -p ] && port=$2; last=$1; shift; done\n" +
		"case \"$last\" in\n*.*.*.*) cat <<'RECORDED'\n" + string(out) + "RECORDED\nexit 0 ;;\nesac\n" +
		"exec -a sparkrig " + shell.Quote(self) + " bench probe-server --listen 0.0.0.0:\"$port\" --once\n"
}

// TestRigQualifyRingRDMA is the stand-in replay test of qualify's RDMA
// path: a ring of four whose ports have stand-in RoCE devices. With the
// stand-in ib_write_bw on every node, every direction is measured with it
// (bench's qualify step: the recorded 92.57 Gb/s each) and every pair
// records it; the stand-in symbol_error counter of spark-02's port 1 (its
// cable to spark-01) counts up meanwhile, and that pair alone is flagged,
// with the counter and the end. Then spark-04 without perftest: its two
// cables go to the TCP probe, the others stay with ib_write_bw.
func TestRigQualifyRingRDMA(t *testing.T) {
	cfg, err := testrig.Sparks(4, "ring")
	if err != nil {
		t.Fatal(err)
	}
	script := standinPerftest(t)
	for i := range cfg.Hosts {
		cfg.Hosts[i].RDMA = true
		cfg.Hosts[i].Files = map[string]string{"/usr/local/bin/ib_write_bw": script}
	}
	r := testrig.New(t, cfg)
	for _, h := range r.Names() {
		rigOut(t, r, h, "chmod", "755", "/usr/local/bin/ib_write_bw")
	}
	waitPorts(t, r, 5)
	ring := func() *report.Report {
		args := []string{"qualify", "--ring", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ","), "--test-time", "1s"}
		var out, errb bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errb)
		var rep report.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.AllPairs == nil {
			t.Fatalf("exit %d: %v\n%s", code, err, errb.String())
		}
		t.Logf("exit %d: %s", code, strings.TrimSpace(errb.String()))
		return &rep
	}

	// every node with perftest: ib_write_bw on every cable
	var files []*os.File
	for _, dev := range testrig.PortNetDevs(1) {
		f, err := os.OpenFile(filepath.Join(r.Host("spark-02").Dir, "root/sys/class/infiniband", testrig.RoCEName(dev), "ports/1/counters/symbol_error"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the stand-in counters count up while qualify runs
		defer wg.Done()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				for _, f := range files {
					f.WriteAt(fmt.Appendf(nil, "%010d\n", n), 0) // in place, never truncated: as sysfs shows
				}
			}
		}
	}()
	rep := ring()
	close(stop)
	wg.Wait()
	var first bytes.Buffer
	writeRendered(&Env{Stdout: &first, Getenv: func(string) string { return "" }}, "", "text", rep)
	t.Logf("\n%s", first.String())
	ap := rep.AllPairs
	want := "spark-01↔spark-02 ib_write_bw moved\nspark-03↔spark-04 ib_write_bw\nspark-02↔spark-03 ib_write_bw\nspark-01↔spark-04 ib_write_bw" // even phase, then odd
	if got := pairTools(ap); got != want {
		t.Errorf("pairs:\n%s\nwant:\n%s", got, want)
	}
	if ap.Tool != "ib_write_bw" {
		t.Errorf("tool %q", ap.Tool)
	}
	for i, row := range ap.Matrix {
		for j, v := range row {
			if (i+1)%4 == j || (j+1)%4 == i {
				if v != 92.57 {
					t.Errorf("%s→%s %v Gb/s, want the recorded 92.57", ap.Nodes[i], ap.Nodes[j], v)
				}
			}
		}
	}
	var errs []string
	for _, f := range rep.Cluster.Findings {
		if f.ID == "link.errors" {
			errs = append(errs, f.Subject+": "+f.Observed)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "spark-01↔spark-02: spark-02 roce") || !strings.Contains(errs[0], "p1s0f1/1 symbol_error +") {
		t.Errorf("link.errors findings %q, want spark-01↔spark-02 naming spark-02's port 1 symbol_error", errs)
	}
	if got := named(rep); strings.Join(got, "\n") != "warn link.errors  spark-01↔spark-02" {
		t.Errorf("named %q", got)
	}

	// spark-04 without perftest: its cables measured with the TCP probe,
	// judged against TCP's median, not ib_write_bw's
	rigOut(t, r, "spark-04", "chmod", "644", "/usr/local/bin/ib_write_bw")
	rep = ring()
	want = "spark-01↔spark-02 ib_write_bw\nspark-03↔spark-04 sparkrig TCP probe\nspark-02↔spark-03 ib_write_bw\nspark-01↔spark-04 sparkrig TCP probe"
	if got := pairTools(rep.AllPairs); got != want {
		t.Errorf("pairs:\n%s\nwant:\n%s", got, want)
	}
	if rep.AllPairs.Tool != "ib_write_bw where both ends have RDMA, else sparkrig TCP probe" {
		t.Errorf("tool %q", rep.AllPairs.Tool)
	}
	for _, s := range rep.AllPairs.Suspects {
		if s.Node == "spark-04" && s.Kind == "node" {
			t.Errorf("spark-04 judged against ib_write_bw's rate: %+v", s)
		}
	}
	var text bytes.Buffer
	writeRendered(&Env{Stdout: &text, Getenv: func(string) string { return "" }}, "", "text", rep)
	t.Logf("\n%s", text.String())
	if !strings.Contains(text.String(), "spark-03 ↔ spark-04: sparkrig TCP probe") {
		t.Errorf("text does not show the pair's tool:\n%s", text.String())
	}
}

// pairTools lists each pair of a report, its tool, and "moved" where its
// error counters moved.
func pairTools(ap *report.AllPairs) string {
	var out []string
	for _, p := range ap.Pairs {
		l := p.A + "↔" + p.B + " " + p.Tool
		if len(p.Moved) > 0 {
			l += " moved"
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// waitPorts waits until every rig host shows up ports UP (operstate follows
// carrier a moment after the rig is up), as a ring's are before a run.
func waitPorts(t *testing.T, r *testrig.Rig, up int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, h := range r.Names() {
		for {
			out, _ := r.Host(h).Exec(context.Background(), "ip", "-br", "link")
			if strings.Count(string(out), " UP ") >= up || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestRigDoctorQualifyRingOrder: doctor --qualify on NVIDIA's three-Spark
// ring, hosts named 1, 3, 2: the ring walks spark-01, spark-03, spark-02,
// so its cables are measured in qualify --ring's order (RingPhases: the
// even phase 01–03, the odd phase 03–02, then the wrap cable 02–01), not
// in the order bench names the rails (01–02 first).
func TestRigDoctorQualifyRingOrder(t *testing.T) {
	cfg, err := testrig.Sparks(3, "ring")
	if err != nil {
		t.Fatal(err)
	}
	r := testrig.New(t, cfg)
	waitPorts(t, r, 5)
	args := []string{"doctor", "--qualify", "--format", "json", "--ssh-config", r.SSHConfig, "--host-timeout", "60s", "--hosts", "spark-01,spark-03,spark-02"}
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, errb.String())
	}
	var cables []string
	for _, q := range rep.Cluster.Qualified {
		a, b := strings.Split(q.From, ":")[0], strings.Split(q.To, ":")[0]
		c := min(a, b) + "–" + max(a, b)
		if len(cables) == 0 || cables[len(cables)-1] != c {
			cables = append(cables, c)
		}
	}
	if got := strings.Join(cables, ", "); got != "spark-01–spark-03, spark-02–spark-03, spark-01–spark-02" {
		t.Fatalf("cables measured in the order %s (%d directions)", got, len(rep.Cluster.Qualified))
	}
}

// TestRigAllPairsNodeDiesMidRun: four hosts on one switch; node-4's links
// go down during the rounds, without a word (power or cable lost). With
// keepalives at 2 s × 3 in ssh_config, qualify gives the node up, finishes
// the run, and names node-4 as the node that stopped answering (not as a
// slow one), and no other node.
func TestRigAllPairsNodeDiesMidRun(t *testing.T) {
	r, _ := switchRig(t, 4, "200mbit")
	base, err := os.ReadFile(r.SSHConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(r.Dir, "keepalive.config")
	if err := os.WriteFile(cfg, append([]byte("Host *\n  ServerAliveInterval 2\n  ServerAliveCountMax 3\n"), base...), 0o600); err != nil {
		t.Fatal(err)
	}
	died := make(chan time.Time, 1)
	errb := &lockedBuffer{}
	go func() {
		for !strings.Contains(errb.String(), "set up in") { // the rounds begin
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(3 * time.Second) // node-4 dies in the second round
		for _, dev := range []string{"enp1s0f1np1", "enP7s7"} {
			if out, err := r.Host("node-4").Exec(context.Background(), "ip", "link", "set", dev, "down"); err != nil {
				t.Errorf("%v %s", err, out)
			}
		}
		died <- time.Now()
	}()
	args := []string{"qualify", "--all-pairs", "--format", "json", "--ssh-config", cfg, "--hosts", strings.Join(r.Names(), ","),
		"--test-time", "2s", "--subnet", "10.77.0.0/24"}
	var out bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, errb)
	end := time.Now()
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.AllPairs == nil {
		t.Fatalf("exit %d, no report: %v\n%s", code, err, errb.String())
	}
	t.Logf("exit %d, %s after node-4 died\n%s\n%v", code, end.Sub(<-died).Round(time.Second), strings.TrimSpace(errb.String()), named(&rep))

	// node-4 is named as the node that stopped answering, not as slow,
	// and nothing else is named
	wantNamed(t, &rep, code, []string{"fail allpairs.lost node-4 node", "lost node-4 confirmed"})
}
