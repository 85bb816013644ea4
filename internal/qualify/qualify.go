// Package qualify is the pipeline of `sparkrig qualify` (all-pairs and
// ring) and of doctor --qualify's traffic test: it lists the nodes'
// addresses and reads their facts through acquire and the runner, picks a
// tool per direction, measures through bench's executor and allpairs'
// rounds, and judges every direction by the one link rule
// (diagnose.LinkRef) into a report.
package qualify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// Options are a qualification's inputs.
type Options struct {
	// Runner reaches the nodes (SSH, srun, kubectl); the caller closes it.
	Runner runner.Runner
	Hosts  []string
	// Ring qualifies a direct-cabled ring's cables, nodes in the order
	// given; else every pair of the segment the nodes share.
	Ring bool
	// Subnet is the segment to measure; zero: the one most nodes share.
	Subnet netip.Prefix
	// Budget sets each test's length (allpairs.TestDuration); TestTime,
	// when set, sets it directly.
	Budget   time.Duration
	TestTime time.Duration
	// Expected is the rate a direction should reach (Gb/s); 0: what the
	// best pairs show (diagnose.LinkRef).
	Expected float64
	Streams  int
	Port     int // the probe servers'; the NCCL test's is Port+1, bench's RDMA steps' above
	// ProbePath is a sparkrig already on every node; "" copies Self to
	// each node's scratch directory (removed after).
	ProbePath string
	Self      string
	// NCCL runs a 2-rank NCCL test on each pair with a GPU and NCCL at
	// both ends; NCCLBytes is its largest message, NCCLLibs the node
	// directories searched first for the libraries.
	NCCL      bool
	NCCLBytes int64
	NCCLLibs  []string
	// Parallel, HostTimeout and Timeout bound reading the nodes.
	Parallel    int
	HostTimeout time.Duration
	Timeout     time.Duration
	ToolVersion string
	Now         func() time.Time
	// Log receives the progress lines (stderr); nil discards them.
	Log io.Writer
}

// Check says what is wrong with the options before any node is reached.
func (o Options) Check() error {
	switch {
	case len(o.Hosts) < 2:
		return errors.New("needs two or more nodes (--hosts or --hostfile)")
	case o.Expected < 0:
		return fmt.Errorf("--expected-gbps %g: want a rate above 0 Gb/s (or leave it out to judge against the best pairs)", o.Expected)
	case o.TestTime > 0 && o.TestTime < allpairs.MinTest:
		return fmt.Errorf("--test-time %s is under %s", o.TestTime, allpairs.MinTest)
	case o.NCCL && o.NCCLBytes < 8:
		return fmt.Errorf("--nccl-bytes %d: want a size such as 256M", o.NCCLBytes)
	}
	if o.TestTime <= 0 {
		if _, err := allpairs.TestDuration(o.Budget, len(o.Hosts)); err != nil {
			return fmt.Errorf("--budget: %v", err)
		}
	}
	return nil
}

// ErrInterrupted is Run's error when its context ended: the report it returns
// with it says what was measured and what was not.
var ErrInterrupted = errors.New("interrupted")

// Run qualifies the links between the nodes. A node that cannot be reached
// is left out and named in a finding while every other pair is measured;
// with fewer than two nodes reached it is an error. An interrupted run
// returns its report (never an all-clear) with ErrInterrupted.
func Run(ctx context.Context, o Options) (*report.Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Runner == nil {
		return nil, errors.New("no way to reach the nodes")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	d := o.TestTime
	if d <= 0 {
		d, _ = allpairs.TestDuration(o.Budget, len(o.Hosts))
	}
	prep := time.Now()
	s := &setup{o: o, d: d, runDir: "/tmp/sparkrig-qualify-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	defer s.cleanup()
	if err := s.reach(ctx); err != nil {
		return nil, err
	}
	m, err := s.measurer(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "qualify: %d nodes, %s per test, %d of %d directions with ib_write_bw, set up in %.1f s\n",
		len(s.hosts), d, len(m.RDMA), len(s.ends), time.Since(prep).Seconds())
	return s.measure(ctx, m)
}

// setup is a run's state between reaching the nodes and cleaning up.
type setup struct {
	o        Options
	d        time.Duration
	runDir   string
	x        *bench.Executor
	probe    string
	hosts    []string // the nodes reached
	gone     map[string]string
	caps     []acquire.Node
	segment  string
	ends     map[[2]int]allpairs.Addr // node's end facing peer
	prepared []string
}

func (s *setup) cleanup() {
	if s.x != nil && len(s.prepared) > 0 {
		s.x.Cleanup(s.prepared)
	}
}

// reach lists every node's addresses (a node that does not answer is left
// out, with why), then copies the probe to the nodes reached and reads
// their facts at once, and finds each direction's two ends.
func (s *setup) reach(ctx context.Context) error {
	o := s.o
	addrs, gone := listAddrs(ctx, o.Runner, o.Hosts, o.HostTimeout)
	s.gone = gone
	var hosts []string
	var reached [][]allpairs.Addr
	for i, h := range o.Hosts {
		if _, ok := gone[h]; !ok {
			hosts, reached = append(hosts, h), append(reached, addrs[i])
		}
	}
	s.x = &bench.Executor{T: o.Runner, RunDir: s.runDir}
	s.probe = o.ProbePath
	if s.probe == "" {
		s.x.Helper, s.x.HelperPath, s.probe = o.Self, filepath.Join(s.runDir, "sparkrig"), filepath.Join(s.runDir, "sparkrig")
	}
	prepc := make(chan map[string]error, 1)
	go func() { prepc <- s.x.Prepare(ctx, hosts) }()
	s.caps = acquire.Remote(ctx, hosts, acquire.Options{Runner: o.Runner, Parallel: o.Parallel, HostTimeout: o.HostTimeout,
		Timeout: o.Timeout, NoPing: true, ToolVersion: o.ToolVersion, Script: evidence()})
	errs := <-prepc
	var keep []string
	var keepAddrs [][]allpairs.Addr
	var keepCaps []acquire.Node
	for i, h := range hosts {
		s.prepared = append(s.prepared, h)
		if e := errs[h]; e != nil {
			s.gone[h] = oneLine(e.Error())
			continue
		}
		keep, keepAddrs, keepCaps = append(keep, h), append(keepAddrs, reached[i]), append(keepCaps, s.caps[i])
	}
	s.hosts, s.caps = keep, keepCaps
	if len(s.hosts) < 2 {
		return fmt.Errorf("fewer than two nodes could be reached: %s", goneList(s.gone))
	}
	for _, h := range slices.Sorted(maps.Keys(s.gone)) {
		fmt.Fprintf(o.Log, "qualify: %s could not be reached, its pairs are left out: %s\n", sanitize.Line(h), s.gone[h])
	}
	return s.findEnds(keepAddrs)
}

// findEnds finds each direction's two ends: on a ring the addresses on the
// cable between the two nodes, else each node's one segment address.
func (s *setup) findEnds(addrs [][]allpairs.Addr) error {
	s.ends = map[[2]int]allpairs.Addr{}
	if s.o.Ring {
		for _, phase := range allpairs.RingPhases(len(s.hosts)) {
			for _, p := range phase {
				a, b, ok := allpairs.CableAddrs(addrs, p.A, p.B)
				if !ok {
					return fmt.Errorf("--ring: %s and %s share no subnet of their own: are they cabled to each other?", s.hosts[p.A], s.hosts[p.B])
				}
				s.ends[[2]int{p.A, p.B}], s.ends[[2]int{p.B, p.A}] = a, b
			}
		}
		return nil
	}
	seg, err := allpairs.FindSegment(s.hosts, addrs, s.o.Subnet)
	if err != nil {
		return err
	}
	s.segment = seg.Subnet.String()
	for i := range s.hosts {
		for j := range s.hosts {
			if i != j {
				s.ends[[2]int{i, j}] = seg.Addrs[i]
			}
		}
	}
	return nil
}

// measurer is the rounds' measurer over the nodes reached, each direction
// with its tool.
func (s *setup) measurer(ctx context.Context) (*allpairs.Remote, error) {
	n := len(s.hosts)
	addrOf := func(node, peer int) string {
		if peer < 0 { // all-pairs: a node's one segment address faces every peer
			peer = (node + 1) % n
		}
		return s.ends[[2]int{node, peer}].Prefix.Addr().String()
	}
	m := &allpairs.Remote{X: s.x, Hosts: s.hosts, Addr: addrOf, Port: s.o.Port, Streams: s.o.Streams, Probe: s.probe, Pings: 1}
	m.Rails, m.RDMA = tools(ctx, s.o, s.hosts, s.nodes(), s.ends, s.d, s.runDir)
	m.NCCL = allpairs.NCCLTest{MaxBytes: s.o.NCCLBytes, Port: s.o.Port + 1, LibDirs: s.o.NCCLLibs}
	return m, nil
}

// measure runs the rounds (and the NCCL pairs' where there are some) and
// makes the report.
func (s *setup) measure(ctx context.Context, m *allpairs.Remote) (*report.Report, error) {
	o := s.o
	schedule := allpairs.AllPairs
	if o.Ring {
		schedule = allpairs.Ring
	}
	rules := allpairs.DefaultRules
	rules.Expected = o.Expected
	if o.Expected > 0 {
		rules.ExpectedSource = "--expected-gbps"
	}
	rules.ToolExpected = s.expectations()
	if !o.Ring {
		// one server per node for the whole run: a round starts its clients only
		if err := m.Servers(ctx, s.runDir); err != nil {
			m.Stop()
			return nil, err
		}
		defer m.Stop()
	}
	res, runErr := allpairs.Run(ctx, m, s.hosts, schedule, s.d, rules)
	res.Unreachable = s.gone
	ap, findings := res.Report(schedule, allpairs.ToolTCP, s.segment)
	ncclOK, skipped := ncclPairs(s.hosts, s.nodes(), o)
	var coll *allpairs.Collectives
	if rounds := allpairs.CollectiveRounds(schedule, len(s.hosts), ncclOK); runErr == nil && len(rounds) > 0 {
		fmt.Fprintf(o.Log, "qualify: a 2-rank NCCL test on each of %d pairs with GPUs at both ends, %d rounds\n", countPairs(rounds), len(rounds))
		coll, runErr = allpairs.RunCollectives(ctx, m, s.hosts, rounds, rules)
	}
	var ncclFindings []report.Finding
	ap.NCCL, ncclFindings = coll.Report(s.hosts, skipped)
	findings = append(findings, ncclFindings...)
	rep := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.ToolVersion, Command: "qualify",
		GeneratedAt: o.Now().UTC(), AllPairs: ap, Cluster: &report.Cluster{Links: []report.Link{}, Findings: findings}, Hosts: []report.Host{}}
	rep.Status = report.FindingsVerdict(findings, runErr != nil)
	rounds := fmt.Sprint(res.RoundsRun)
	if res.RoundsRun < len(res.Rounds) {
		rounds = fmt.Sprintf("%d of %d", res.RoundsRun, len(res.Rounds))
	}
	fmt.Fprintf(o.Log, "qualify: %s rounds in %.1f s, all with re-tests %.1f s\n", rounds, res.RoundsWall.Seconds(), res.Wall.Seconds())
	if coll != nil {
		fmt.Fprintf(o.Log, "qualify: %d NCCL rounds in %.1f s\n", len(coll.Rounds), coll.Wall.Seconds())
	}
	if runErr != nil {
		return rep, ErrInterrupted
	}
	return rep, nil
}

// expectations are each tool's expected rate where every node reached is
// of one platform that expectations.yaml has a rate for.
func (s *setup) expectations() map[string]allpairs.Expectation {
	set, err := expect.Default()
	if err != nil {
		return nil
	}
	topo := "switch"
	if s.o.Ring {
		topo = "ring"
	}
	out := map[string]allpairs.Expectation{}
	for tool, rdma := range map[string]bool{allpairs.ToolTCP: false, allpairs.ToolRDMA: true} {
		if g, src := Expectation(set, s.nodes(), topo, rdma); g > 0 {
			out[tool] = allpairs.Expectation{Gbps: g, Source: src}
		}
	}
	return out
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return sanitize.Line(s)
}

func goneList(gone map[string]string) string {
	var parts []string
	for h, why := range gone {
		parts = append(parts, h+": "+why)
	}
	if len(parts) == 0 {
		return "none was left out"
	}
	return strings.Join(sortStrings(parts), "; ")
}
