package cli

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// qualifyOptions are the flags of `sparkrig qualify`.
type qualifyOptions struct {
	remote    remoteOptions
	allPairs  bool
	ring      bool
	subnet    string
	budget    time.Duration
	testTime  time.Duration
	expected  float64
	streams   int
	port      int
	format    string
	output    string
	probePath string
	nccl      string
	ncclBytes string
	ncclLibs  []string
}

// qualifyFormats are the formats qualify and triage write: all render draws.
var qualifyFormats = render.Formats

func newQualifyCmd(env *Env) *cobra.Command {
	o := &qualifyOptions{}
	cmd := &cobra.Command{
		Use:   "qualify --all-pairs --hosts A,B,C...",
		Short: "measure every pair of nodes and name the bad node or cable",
		Long: `qualify --all-pairs measures the links between every pair of nodes that share a
network segment (nodes on one switch): the circle method's rounds of disjoint
pairs run at once, each pair in both directions together, with sparkrig's TCP
probe (the sparkrig binary is copied to each node's scratch directory and
removed after). Each node's sending and receiving sides get a pass ratio over
the rounds (a direction passes within 30 % of the median, or of
--expected-gbps); a side passing fewer than half its tests, or a pair failing
while both its ends pass elsewhere, is a suspect, and suspects are measured
again against a known-good node to tell which side is bad. --ring instead
qualifies the cables of a direct-cabled ring, nodes in the order given, in
NCCL's even/odd order.

Where both nodes of a pair have a GPU and NCCL, the pair also runs a 2-rank
NCCL all_reduce (sparkrig's own collective benchmark, one rank on each node's
first GPU, NCCL kept to the pair's netdev and RDMA port), in rounds of their
own after the bandwidth tests; each pair's bus bandwidth at the largest
message (--nccl-bytes) is judged against the pairs' median by the same 30 %
rule. The report says which pairs were not tested and why (--nccl off skips
them).

The time budget sets each test's length: the budget shared over the rounds
plus two rounds kept for re-tests (--test-time sets it directly). The NCCL
rounds come on top: each takes its communicators' set-up and a sweep of four
sizes.`,
		Example: `  sparkrig qualify --all-pairs --hosts 'spark-[01-08]'
  sparkrig qualify --all-pairs --hostfile hosts --budget 2m --format html -o pairs.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQualify(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	addRemoteFlags(f, &o.remote)
	f.BoolVar(&o.allPairs, "all-pairs", false, "measure every pair of nodes of the segment they share")
	f.BoolVar(&o.ring, "ring", false, "the nodes form a direct-cabled ring in the order given: qualify each cable in NCCL's even/odd order")
	f.StringVar(&o.subnet, "subnet", "", "the segment to measure (CIDR); default: the subnet the most nodes share")
	f.DurationVar(&o.budget, "budget", 60*time.Second, "time for the whole run; sets each test's length")
	f.DurationVar(&o.testTime, "test-time", 0, "each test's length, instead of the one --budget gives")
	f.Float64Var(&o.expected, "expected-gbps", 0, "the rate each direction should reach (Gb/s); default: judge against the median")
	f.IntVar(&o.streams, "streams", 4, "parallel TCP streams per direction")
	f.IntVar(&o.port, "port", bench.DefaultBasePort+bench.RendezvousPortOffset, "TCP port the probe servers listen on")
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(qualifyFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout")
	f.StringVar(&o.probePath, "probe-path", "", "a sparkrig already on every node (skips the copy)")
	f.StringVar(&o.nccl, "nccl", "auto", "a 2-rank NCCL test per pair: auto (where both nodes have a GPU and NCCL) or off")
	f.StringVar(&o.ncclBytes, "nccl-bytes", bench.SizeString(allpairs.DefaultNCCLBytes), "the NCCL test's largest message, the one judged")
	f.StringSliceVar(&o.ncclLibs, "nccl-lib-dir", nil, "directories on the nodes searched first for libnccl and libcudart (a venv's nvidia/nccl/lib)")
	return cmd
}

func runQualify(ctx context.Context, env *Env, o *qualifyOptions) error {
	var err error
	if o.format, err = checkFormat("qualify", o.format, qualifyFormats); err != nil {
		return err
	}
	if o.allPairs == o.ring {
		return exitf(ExitUnknown, "qualify: give one of --all-pairs or --ring")
	}
	if o.nccl != "auto" && o.nccl != "off" {
		return exitf(ExitUnknown, "qualify: --nccl %q: want auto or off", o.nccl)
	}
	ncclBytes, err := results.ParseSize(o.ncclBytes)
	if err != nil || ncclBytes < 8 {
		return exitf(ExitUnknown, "qualify: --nccl-bytes %q: want a size such as 256M", o.ncclBytes)
	}
	defer o.remote.closeRunner()
	hosts, err := o.remote.nodes(ctx, env)
	if err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if len(hosts) < 2 {
		return exitf(ExitUnknown, "qualify: needs two or more nodes (--hosts or --hostfile)")
	}
	var want netip.Prefix
	if o.subnet != "" {
		if want, err = netip.ParsePrefix(o.subnet); err != nil {
			return exitf(ExitUnknown, "qualify: --subnet %q: %v", o.subnet, err)
		}
	}
	d := o.testTime
	if d <= 0 {
		if d, err = allpairs.TestDuration(o.budget, len(hosts)); err != nil {
			return exitf(ExitUnknown, "qualify: --budget: %v", err)
		}
	} else if d < allpairs.MinTest {
		return exitf(ExitUnknown, "qualify: --test-time %s is under %s", d, allpairs.MinTest)
	}
	t, err := o.remote.runner(env) // SSH, or srun or kubectl as chosen
	if err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	runDir := "/tmp/sparkrig-qualify-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	x := &bench.Executor{T: t, RunDir: runDir}
	probe := o.probePath
	if probe == "" {
		self, err := os.Executable()
		if err != nil {
			return exitf(ExitUnknown, "qualify: %v", err)
		}
		x.Helper, x.HelperPath, probe = self, filepath.Join(runDir, "sparkrig"), filepath.Join(runDir, "sparkrig")
	}
	// an interrupt waits for the nodes to be cleaned up and the report of
	// what was measured (every wait below is bounded, a dead node's too)
	env.cleansUp.Store(true)
	// the binary is copied and the nodes' facts (which tool each pair
	// gets) are read while the addresses are
	prep := time.Now()
	prepc := make(chan map[string]error, 1)
	go func() { prepc <- x.Prepare(ctx, hosts) }()
	capc := make(chan []acquire.Node, 1)
	go func() {
		capc <- acquire.Remote(ctx, hosts, acquire.Options{Runner: t, Parallel: o.remote.parallel, HostTimeout: o.remote.hostTimeout,
			Timeout: o.remote.timeout, NoPing: true, ToolVersion: Version, Script: qualifyEvidence()})
	}()
	prepared := false
	defer func() {
		if !prepared {
			<-prepc
		}
		x.Cleanup(hosts)
	}()
	addrs, err := nodeAddrs(ctx, t, hosts, o.remote.hostTimeout)
	if err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	segment := ""
	var addrOf func(node, peer int) string
	ends := map[[2]int]allpairs.Addr{} // node's end of its cable or port facing peer
	if o.ring {
		for _, phase := range allpairs.RingPhases(len(hosts)) {
			for _, p := range phase {
				a, b, ok := allpairs.CableAddrs(addrs, p.A, p.B)
				if !ok {
					return exitf(ExitUnknown, "qualify: --ring: %s and %s share no subnet of their own: are they cabled to each other?", hosts[p.A], hosts[p.B])
				}
				ends[[2]int{p.A, p.B}], ends[[2]int{p.B, p.A}] = a, b
			}
		}
	} else {
		seg, err := allpairs.FindSegment(hosts, addrs, want)
		if err != nil {
			return exitf(ExitUnknown, "qualify: %v", err)
		}
		segment = seg.Subnet.String()
		for i := range hosts {
			for j := range hosts {
				if i != j {
					ends[[2]int{i, j}] = seg.Addrs[i]
				}
			}
		}
	}
	addrOf = func(node, peer int) string {
		if peer < 0 { // all-pairs: a node's one segment address faces every peer
			peer = (node + 1) % len(hosts)
		}
		return ends[[2]int{node, peer}].Prefix.Addr().String()
	}
	errs := <-prepc
	prepared = true
	if len(errs) > 0 {
		var parts []string
		for _, h := range hosts {
			if e := errs[h]; e != nil {
				parts = append(parts, h+": "+e.Error())
			}
		}
		return exitf(ExitUnknown, "qualify: %s", strings.Join(parts, "; "))
	}
	m := &allpairs.Remote{X: x, Hosts: hosts, Addr: addrOf, Port: o.port, Streams: o.streams, Probe: probe, Pings: 1}
	var nodes []*facts.Node
	m.Rails, m.RDMA, nodes = qualifyTools(ctx, env, o, t, hosts, <-capc, ends, d, runDir)
	m.NCCL = allpairs.NCCLTest{MaxBytes: ncclBytes, Port: o.port + 1, LibDirs: o.ncclLibs}
	fmt.Fprintf(env.Stderr, "qualify: %d nodes, %s per test, %d of %d directions with ib_write_bw, set up in %.1f s\n",
		len(hosts), d, len(m.RDMA), len(ends), time.Since(prep).Seconds())
	schedule := allpairs.AllPairs
	if o.ring {
		schedule = allpairs.Ring
	}
	rules := allpairs.DefaultRules
	rules.Expected = o.expected
	if !o.ring {
		// one server per node for the whole run: a round starts its clients only
		if err := m.Servers(ctx, runDir); err != nil {
			m.Stop()
			return exitf(ExitUnknown, "qualify: %v", err)
		}
		defer m.Stop()
	}
	res, runErr := allpairs.Run(ctx, m, hosts, schedule, d, rules)
	ap, findings := res.Report(schedule, "sparkrig TCP probe", segment)
	ncclOK, skipped := ncclPairs(hosts, nodes, o)
	var coll *allpairs.Collectives
	if rounds := allpairs.CollectiveRounds(schedule, len(hosts), ncclOK); runErr == nil && len(rounds) > 0 {
		fmt.Fprintf(env.Stderr, "qualify: a 2-rank NCCL test on each of %d pairs with GPUs at both ends, %d rounds\n", countPairs(rounds), len(rounds))
		coll, runErr = allpairs.RunCollectives(ctx, m, hosts, rounds, rules)
	}
	var ncclFindings []report.Finding
	ap.NCCL, ncclFindings = coll.Report(hosts, skipped)
	findings = append(findings, ncclFindings...)
	rep := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: Version, Command: "qualify",
		GeneratedAt: env.Now().UTC(), AllPairs: ap, Cluster: &report.Cluster{Links: []report.Link{}, Findings: findings}, Hosts: []report.Host{}}
	rep.Status = findingsStatus(findings, false)
	if runErr != nil {
		rep.Status = report.VerdictUnknown
	}
	rounds := fmt.Sprint(res.RoundsRun)
	if res.RoundsRun < len(res.Rounds) {
		rounds = fmt.Sprintf("%d of %d", res.RoundsRun, len(res.Rounds))
	}
	fmt.Fprintf(env.Stderr, "qualify: %s rounds in %.1f s, all with re-tests %.1f s\n", rounds, res.RoundsWall.Seconds(), res.Wall.Seconds())
	if coll != nil {
		fmt.Fprintf(env.Stderr, "qualify: %d NCCL rounds in %.1f s\n", len(coll.Rounds), coll.Wall.Seconds())
	}
	if err := writeQualify(env, o.output, o.format, rep); err != nil {
		return exitf(ExitUnknown, "qualify: %v", err)
	}
	if runErr != nil {
		return exitf(ExitInterrupted, "qualify: interrupted")
	}
	return statusError(exitFor(rep.Status))
}

// qualifyTools decides, as doctor --qualify does, which directions
// ib_write_bw measures: those whose two ends have an active RDMA port (the
// nodes' facts) and perftest installed, with bench's qualify step for each;
// the others get sparkrig's TCP probe. It returns too every pair's two
// ends (netdev, and RDMA port where there is one) for their counters. A
// node whose facts cannot be read keeps to TCP, said on stderr.
func qualifyTools(ctx context.Context, env *Env, o *qualifyOptions, t runner.Runner, hosts []string, caps []acquire.Node,
	ends map[[2]int]allpairs.Addr, d time.Duration, runDir string) (map[allpairs.Pair]bench.Rail, map[allpairs.Test]bench.Step, []*facts.Node) {
	index := map[string]int{}
	for i, h := range hosts {
		index[h] = i
	}
	var links []bench.Link
	rails := map[allpairs.Pair]bench.Rail{}
	for k, a := range ends {
		if k[0] > k[1] {
			continue
		}
		b := ends[[2]int{k[1], k[0]}]
		links = append(links, bench.Link{A: bench.LinkEnd{Host: hosts[k[0]], NetDev: a.Dev, Addr: a.Prefix.Addr().String()},
			B: bench.LinkEnd{Host: hosts[k[1]], NetDev: b.Dev, Addr: b.Prefix.Addr().String()}, Subnet: a.Prefix.Masked().String()})
		rails[allpairs.Pair{A: k[0], B: k[1]}] = bench.Rail{
			A: bench.Endpoint{Host: hosts[k[0]], NetDev: a.Dev, Addr: a.Prefix.Addr().String(), GIDIndex: -1},
			B: bench.Endpoint{Host: hosts[k[1]], NetDev: b.Dev, Addr: b.Prefix.Addr().String(), GIDIndex: -1}}
	}
	var nodes []*facts.Node
	byIndex := make([]*facts.Node, len(hosts))
	for i, c := range caps {
		if c.Err != nil || c.Facts == nil {
			fmt.Fprintf(env.Stderr, "qualify: %s: its RDMA ports and GPUs could not be read, its pairs use TCP and no NCCL test: %s\n", hosts[i], sanitize.Line(fmt.Sprint(c.Err)))
			continue
		}
		n := *c.Facts
		n.Host = hosts[i]
		nodes = append(nodes, &n)
		byIndex[i] = &n
	}
	found, _ := bench.Rails(nodes, links)
	for _, r := range found {
		a, b := index[r.A.Host], index[r.B.Host]
		if a > b {
			r.A, r.B = r.B, r.A
			a, b = b, a
		}
		rails[allpairs.Pair{A: a, B: b}] = r
	}
	bo := bench.Options{Kinds: []string{bench.KindQualify}, Duration: d, RunDir: runDir, QualifyRDMA: true, Links: links,
		BasePort: o.port + 2 - bench.RendezvousPortOffset} // its ports start just above the probe servers'
	rdma := map[allpairs.Test]bench.Step{}
	if len(nodes) < 2 {
		return rails, rdma, byIndex
	}
	plan, err := bench.NewPlan(nodes, bo)
	if err != nil {
		return rails, rdma, byIndex
	}
	missing := map[string]bool{}
	for _, m := range bench.MissingTools(ctx, t, plan, func(tool string) bool { return tool != "ib_write_bw" }) {
		missing[m.Host] = true
	}
	for _, st := range plan.Steps {
		if st.Tool != "ib_write_bw" || len(st.Servers) != 1 || len(st.Clients) != 1 {
			continue
		}
		from, to := st.Clients[0].Host, st.Servers[0].Host // the client writes into the server's memory
		if missing[from] || missing[to] {
			continue
		}
		rdma[allpairs.Test{From: index[from], To: index[to]}] = st
	}
	return rails, rdma, byIndex
}

// qualifyEvidence is what qualify reads of each node: its netdevs and RDMA
// ports (which tool measures each pair), its GPUs and NCCL (which pairs
// get a NCCL test), not the whole capture.
func qualifyEvidence() string {
	return capture.ScriptOnly(
		[]string{"/proc/sys/kernel/hostname", "/sys/class/net/", "/sys/class/infiniband/", "/proc/driver/nvidia/", "/usr/lib/", "/usr/local/"},
		[]string{"uname-m", "ip-addr", "ip-link", "rdma-link", "ibdev2netdev", "ibv-devinfo", "nvidia-smi-q", "ldconfig", "nccl-build-id", "dpkg-nccl", "env"})
}

// ncclPairs says which pairs get a 2-rank NCCL test, those whose two nodes
// have a GPU and NCCL (found on the node, or looked for in --nccl-lib-dir),
// and why the others do not.
func ncclPairs(hosts []string, nodes []*facts.Node, o *qualifyOptions) (func(allpairs.Pair) bool, []string) {
	if o.nccl == "off" {
		return func(allpairs.Pair) bool { return false }, []string{"no NCCL test: --nccl off"}
	}
	ok := make([]bool, len(hosts))
	var why []string
	for i, h := range hosts {
		n := nodes[i]
		switch {
		case n == nil:
			why = append(why, h+"'s GPUs could not be read")
		case len(n.GPUs) == 0:
			why = append(why, h+" has no GPU")
		case n.NCCL.Library == "" && len(o.ncclLibs) == 0:
			why = append(why, h+" has no libnccl.so.2 where the loader finds it (install NCCL, or pass --nccl-lib-dir)")
		default:
			ok[i] = true
		}
	}
	some := 0
	for _, v := range ok {
		if v {
			some++
		}
	}
	if some < 2 {
		why = append([]string{"no pair was NCCL-tested: the test needs a GPU and NCCL on both nodes"}, why...)
	} else if len(why) > 0 {
		why = append([]string{"the pairs of these nodes were not NCCL-tested"}, why...)
	}
	return func(p allpairs.Pair) bool { return ok[p.A] && ok[p.B] }, why
}

func countPairs(rounds [][]allpairs.Pair) int {
	n := 0
	for _, r := range rounds {
		n += len(r)
	}
	return n
}

func writeQualify(env *Env, output, format string, rep *report.Report) error {
	var buf bytes.Buffer
	opt := textOptions(env)
	if output != "" {
		opt.Color = false
	}
	if err := render.Write(&buf, rep, format, opt); err != nil {
		return err
	}
	return writeOut(env, output, buf.Bytes())
}

// writeOut writes to the named file (mode 644, replaced whole) or stdout.
func writeOut(env *Env, output string, b []byte) error {
	if output == "" || output == "-" {
		_, err := env.Stdout.Write(b)
		return err
	}
	tmp := output + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, output)
}

// nodeAddrs reads every node's IPv4 addresses (ip -br addr), giving up on
// a node that does not answer within perHost.
func nodeAddrs(ctx context.Context, t runner.Runner, hosts []string, perHost time.Duration) ([][]allpairs.Addr, error) {
	addrs := make([][]allpairs.Addr, len(hosts))
	res := remote.FanOut{PerHost: perHost}.Each(ctx, hosts, func(ctx context.Context, i int, h string) error {
		out, _, err := runner.Run(ctx, t, h, allpairs.AddrCommand, nil) // its output bounded
		if err != nil {
			return err
		}
		addrs[i] = allpairs.ParseAddrs(out)
		return nil
	})
	for i, r := range res {
		if r.Err != nil {
			return nil, fmt.Errorf("%s: %s: %w", hosts[i], allpairs.AddrCommand, r.Err)
		}
	}
	return addrs, nil
}

// findingsStatus is the verdict of a report made of findings alone
// (qualify, triage): the worst finding's, ok with none; unknown instead of
// ok when bad (some evidence could not be had).
func findingsStatus(fs []report.Finding, bad bool) report.Verdict {
	v := report.VerdictNone
	for _, f := range fs {
		v = report.Worse(v, f.Severity.Verdict())
	}
	if bad {
		v = report.Worse(v, report.VerdictUnknown)
	}
	if v == report.VerdictNone {
		return report.VerdictOK
	}
	return v
}
