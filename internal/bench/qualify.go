package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// KindQualify is the short per-link, per-direction test of doctor --qualify.
const KindQualify = "qualify"

// QualifyDuration is each direction's test: long enough for TCP to reach
// its rate, short enough that a two-node, two-twin pair is done in seconds.
const QualifyDuration = 2 * time.Second

// planQualify adds, for every rail, one test in each direction on its own:
// ib_write_bw (the client writes into the server's memory: data flows
// client → server) where Options.QualifyRDMA says perftest is on every node
// and both ends have an active RoCE port, else sparkrig's TCP probe from one
// end's address to the other's.
func (p *Plan) planQualify(o Options) {
	if len(p.Rails) == 0 {
		p.note(Note{ID: "bench.no-rail", Detail: "no two nodes share an IPv4 subnet: no link to qualify"})
		return
	}
	for i, r := range p.Rails {
		port := o.BasePort + RendezvousPortOffset + 2*i
		for dir, ends := range [2][2]Endpoint{{r.A, r.B}, {r.B, r.A}} {
			from, to := ends[0], ends[1]
			id := fmt.Sprintf("qualify/%s/%s-to-%s", r.Name, from.Host, to.Host)
			if o.QualifyRDMA && from.RDMAReady() && to.RDMAReady() {
				// perftest's server is the rail's A end, its client the B end
				toward := Rail{Name: r.Name, A: to, B: from, Subnet: r.Subnet}
				p.Steps = append(p.Steps, Step{ID: id, Kind: KindQualify, Tool: "ib_write_bw", Rails: []string{r.Name},
					Timeout: o.Duration + 60*time.Second,
					Servers: []Cmd{perftest(o, "ib_write_bw", toward, port+dir, false)},
					Clients: []Cmd{perftest(o, "ib_write_bw", toward, port+dir, true)}})
				continue
			}
			listen := fmt.Sprintf("%s:%d", to.Addr, port+dir)
			p.Steps = append(p.Steps, Step{ID: id, Kind: KindQualify,
				Tool: "sparkrig-probe", Rails: []string{r.Name}, Timeout: o.Duration + 30*time.Second,
				Servers: []Cmd{{Host: to.Host, Role: RoleServer, ListenPort: port + dir,
					Argv: []string{o.ProbePath, "bench", "probe-server", "--listen", listen, "--once"}}},
				Clients: []Cmd{{Host: from.Host, Role: RoleClient,
					Argv: []string{o.ProbePath, "bench", "probe-client", "--connect", listen, "--bind", from.Addr,
						"--streams", strconv.Itoa(o.Streams), "--duration", o.Duration.String()}}}})
		}
	}
}

// Counter is one interface or RDMA port counter of one host, read before
// and after a step.
type Counter struct {
	Host   string `json:"host"`
	Dev    string `json:"dev"`  // netdev, or RDMA device/port ("rocep1s0f1/1")
	Name   string `json:"name"` // "rx_bytes", "symbol_error", ...
	Before uint64 `json:"before"`
	After  uint64 `json:"after"`
}

// Delta is how much the counter moved (0 when it went back: a reset).
func (c Counter) Delta() uint64 {
	if c.After < c.Before {
		return 0
	}
	return c.After - c.Before
}

// counterScript prints "path:value" for the netdev statistics and the RDMA
// port counters (counters and hw_counters) of the given netdevs and RDMA
// devices, paths relative to /sys/class/net and /sys/class/infiniband: one
// grep a class, not a process a counter, so a read around every round of a
// qualification stays cheap.
func counterScript(netdevs, rdma []string) string {
	var b strings.Builder
	if len(netdevs) > 0 {
		b.WriteString("cd /sys/class/net && grep -H . ")
		for _, d := range netdevs {
			fmt.Fprintf(&b, " %s/statistics/*", shell.Quote(d))
		}
		b.WriteString(" 2>/dev/null\n")
	}
	if len(rdma) > 0 {
		b.WriteString("cd /sys/class/infiniband && grep -H . ")
		for _, d := range rdma {
			q := shell.Quote(d)
			fmt.Fprintf(&b, " %s/ports/*/counters/* %s/ports/*/hw_counters/*", q, q)
		}
		b.WriteString(" 2>/dev/null\n")
	}
	b.WriteString("true\n")
	return b.String()
}

// parseCounters reads counterScript's output: a netdev's statistic as
// (netdev, name), an RDMA port's counter as ("device/port", name).
func parseCounters(host string, b []byte) map[string]Counter {
	out := map[string]Counter{}
	for _, l := range strings.Split(string(b), "\n") {
		path, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			continue
		}
		var dev, name string
		switch f := strings.Split(path, "/"); {
		case len(f) == 3 && f[1] == "statistics":
			dev, name = f[0], f[2]
		case len(f) == 5 && f[1] == "ports" && (f[3] == "counters" || f[3] == "hw_counters"):
			dev, name = f[0]+"/"+f[2], f[4]
		default:
			continue
		}
		out[dev+" "+name] = Counter{Host: host, Dev: dev, Name: name, After: v}
	}
	return out
}

// readCounters reads the counters of a step's rails on every host of it.
func (s *Session) readCounters(ctx context.Context, st Step) map[string]map[string]Counter {
	var rails []Rail
	for _, r := range s.Plan.Rails {
		if len(st.Rails) == 0 || slices.Contains(st.Rails, r.Name) {
			rails = append(rails, r) // a step on named rails reads those; others (NCCL) every rail
		}
	}
	return ReadCounters(ctx, s.Exec.T, rails)
}

// ReadCounters reads the interface and RDMA port counters of both ends of
// the rails, every host at once: host → "dev name" → counter (its value in
// After). A host that cannot be read is left out.
func ReadCounters(ctx context.Context, t runner.Runner, rails []Rail) map[string]map[string]Counter {
	devs := map[string][2][]string{}
	for _, r := range rails {
		for _, e := range []Endpoint{r.A, r.B} {
			d := devs[e.Host]
			if e.NetDev != "" && !slices.Contains(d[0], e.NetDev) {
				d[0] = append(d[0], e.NetDev)
			}
			if e.RDMADev != "" && !slices.Contains(d[1], e.RDMADev) {
				d[1] = append(d[1], e.RDMADev)
			}
			devs[e.Host] = d
		}
	}
	out := map[string]map[string]Counter{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for host, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			stdout, err := run(cctx, t, host, counterScript(d[0], d[1]))
			cancel()
			if err == nil {
				cs := parseCounters(host, []byte(stdout))
				mu.Lock()
				out[host] = cs
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// CountersBetween pairs two reads of ReadCounters: every counter read both
// times, sorted by host, device and name.
func CountersBetween(before, after map[string]map[string]Counter) []Counter {
	var out []Counter
	for host, cs := range after {
		for k, c := range cs {
			b, ok := before[host][k]
			if !ok {
				continue
			}
			c.Before = b.After
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Host+a.Dev+a.Name < b.Host+b.Dev+b.Name
	})
	return out
}

// ErrorsMoved are the error counters among cs that moved.
func ErrorsMoved(cs []Counter) []Counter {
	var out []Counter
	for _, c := range cs {
		if errorCounter(c.Name) && c.Delta() > 0 {
			out = append(out, c)
		}
	}
	return out
}

// withCounters runs a step between two counter reads on its hosts.
func (s *Session) withCounters(ctx context.Context, st Step, run func() StepResult) StepResult {
	before := s.readCounters(ctx, st)
	res := run()
	res.Counters = append(res.Counters, CountersBetween(before, s.readCounters(ctx, st))...)
	return res
}

// errorCounter names the counters that count something gone wrong: any
// movement of one during a test is a finding.
func errorCounter(name string) bool {
	switch name {
	case "rx_errors", "tx_errors", "rx_dropped", "tx_dropped", "rx_crc_errors", "rx_missed_errors", "rx_frame_errors",
		"rx_fifo_errors", "tx_fifo_errors", "rx_length_errors", "rx_over_errors", "tx_carrier_errors", "collisions",
		"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
		"port_xmit_discards", "port_rcv_switch_relay_errors", "local_link_integrity_errors", "excessive_buffer_overrun_errors",
		"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err", "roce_adp_retrans",
		"implied_nak_seq_err", "duplicate_request", "rx_icrc_encapsulated", "req_cqe_error", "resp_cqe_error":
		return true
	}
	return false
}

// Moved says how much each counter moved: "host dev name +n".
func Moved(cs []Counter) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s %s +%d", c.Host, c.Dev, c.Name, c.Delta()))
	}
	return out
}

// ErrorsFinding is the finding of error counters that moved (as Moved
// says them) while subject, a link or one direction of it, carried
// traffic.
func ErrorsFinding(subject string, moved []string) report.Finding {
	return report.Finding{ID: "link.errors", Severity: report.Warn, Subject: subject,
		Title: "no error counter moves while the link carries traffic", Observed: strings.Join(moved, ", "),
		Expected: "every error counter unchanged",
		Why:      "CRC, symbol and link errors, drops and RDMA retransmissions cost bandwidth long before a link fails",
		Remedy:   report.Manual(report.ActionCable, "reseat or replace the cable (and clean the connectors); a counter on one end only points at that end's port or cable end"),
		Source:   "Linux netdev statistics and RDMA port counters (/sys/class/net/*/statistics, /sys/class/infiniband/*/ports/*/counters, hw_counters)"}
}

// Direction is one direction of one link as qualified.
type Direction struct {
	Rail    string    `json:"rail"`
	Tool    string    `json:"tool"`
	From    string    `json:"from"` // "host:netdev"
	To      string    `json:"to"`
	Status  string    `json:"status"`
	Gbps    float64   `json:"gbps"`
	Moved   []Counter `json:"counters_moved,omitempty"` // error counters that moved
	Verdict string    `json:"verdict"`                  // diagnose.LinkPass, LinkSlow, LinkFailed, LinkUnjudged; "errors" for a pass whose counters moved
}

// Qualification is what doctor --qualify found, per link and direction.
type Qualification struct {
	Directions []Direction      `json:"directions"`
	Findings   []report.Finding `json:"findings"`
	Rules      QualificationRef `json:"rules"`
}

// QualificationRef states the reference and fractions the verdicts use.
type QualificationRef struct {
	PassAt     float64 `json:"pass_at"`    // of the reference
	Asymmetric float64 `json:"asymmetric"` // the larger direction over the smaller
	Reference  float64 `json:"reference_gbps,omitempty"`
	RefName    string  `json:"reference,omitempty"` // expected, best pairs; "" with none credible
	Expected   float64 `json:"expected_gbps,omitempty"`
	Source     string  `json:"source"`
}

// Qualify judges a qualify run by the one link rule (diagnose.LinkRef):
// each direction against the expected rate (where the platform has one for
// the tool) or else the best rate two directions confirm, each link's two
// directions against each other, and every error counter that moved. Two
// directions or two twins are never averaged. With no credible reference
// the directions are unjudged and a not-evaluated finding asks for an
// expected rate.
func Qualify(rec *Record, expectedGbps float64, expectSource string) Qualification {
	q := Qualification{Rules: QualificationRef{PassAt: diagnose.PassFraction, Asymmetric: 2, Expected: expectedGbps,
		Source: diagnose.LinkRuleSource + "; sparkrig policy (directions differing more than 2×); NVIDIA/dgx-spark-playbooks PR #108 (the 8-25 Gb/s degraded CX-7 signature)"}}
	if expectSource != "" {
		q.Rules.Source += "; expected rate: " + expectSource
	}
	railOf := map[string]Rail{}
	for _, r := range rec.Bench.Plan.Rails {
		railOf[r.Name] = r
	}
	planned := map[string]Step{}
	for _, ps := range rec.Bench.Plan.Steps {
		planned[ps.ID] = ps
	}
	var rates []float64
	for i, st := range rec.Bench.Steps {
		if st.Kind != KindQualify {
			continue
		}
		d := Direction{Tool: st.Tool, Status: st.Status}
		if len(st.Rails) == 1 {
			r := railOf[st.Rails[0]]
			d.Rail = r.Name
			from, to := r.A, r.B
			if ps, ok := planned[st.ID]; ok && len(ps.Servers) > 0 && ps.Servers[0].Host == r.A.Host { // the server's host receives
				from, to = r.B, r.A
			}
			d.From, d.To = from.Host+":"+from.NetDev, to.Host+":"+to.NetDev
		}
		if i < len(rec.Analyses) && len(rec.Analyses[i].Items) > 0 {
			d.Gbps = rec.Analyses[i].Items[0].Value
		}
		if st.Status == StatusOK {
			rates = append(rates, d.Gbps)
		}
		d.Moved = ErrorsMoved(st.Counters)
		q.Directions = append(q.Directions, d)
	}
	ref := diagnose.LinkRef(expectedGbps, expectSource, rates)
	q.Rules.Reference, q.Rules.RefName = ref.Gbps, ref.Name
	refName := ref.Name
	if refName == diagnose.RefBestPairs {
		refName = "the best rate two directions confirm"
	}
	if !ref.Credible() && len(q.Directions) > 0 {
		q.Findings = append(q.Findings, report.Finding{ID: "link.degraded", Severity: report.NotEvaluated, Subject: "reference",
			Title: "each direction of each link moves at its rate", Observed: "no credible reference: " + ref.Why,
			Expected: "an expected rate for the platform and tool, or two directions agreeing on the best rate",
			Why:      "without a reference a slow direction cannot be told from a normal one: the links are not shown sound",
			Remedy:   report.Manual(report.ActionRun, "sparkrig qualify --all-pairs --expected-gbps RATE --hosts ... (the rate a direction of these links should reach)"),
			Source:   q.Rules.Source})
	}
	for i := range q.Directions {
		d := &q.Directions[i]
		subject := d.From + "→" + d.To
		d.Verdict = ref.Judge(d.Gbps, d.Status == StatusOK)
		switch d.Verdict {
		case diagnose.LinkFailed:
			q.Findings = append(q.Findings, report.Finding{ID: "link.degraded", Severity: report.Fail, Subject: subject,
				Title: "the link carries traffic in this direction", Observed: "the test did not complete (" + d.Status + ")",
				Expected: "a rate", Why: "nothing moved over this direction in the test", Remedy: report.Manual(report.ActionCable, "check the cable and both ports (sparkrig doctor --hosts ...)"), Source: q.Rules.Source})
		case diagnose.LinkSlow:
			obs := fmt.Sprintf("%.1f Gb/s, %.0f %% of %s (%.1f Gb/s)", d.Gbps, 100*d.Gbps/ref.Gbps, refName, ref.Gbps)
			if d.Gbps >= 8 && d.Gbps <= 25 && expectedGbps >= 90 {
				obs += ": the 8-25 Gb/s signature of a ConnectX-7 port that trained degraded"
			}
			q.Findings = append(q.Findings, report.Finding{ID: "link.degraded", Severity: report.Fail, Subject: subject,
				Title: "each direction of each link moves at its rate", Observed: obs,
				Expected: fmt.Sprintf("at least %.0f %% of %s", 100*diagnose.PassFraction, refName),
				Why:      "a link can show carrier, 200000 Mb/s, PCIe Gen5 x4 and MTU 9000 and still move a fraction of its rate: only traffic shows it",
				Remedy:   report.Manual(report.ActionCable, "reseat or replace the cable; reboot the node whose port trained degraded (a ConnectX-7 port can come up degraded at boot); compare with the other twin"),
				Source:   q.Rules.Source})
		}
		if len(d.Moved) > 0 {
			parts := Moved(d.Moved)
			if d.Verdict == diagnose.LinkPass {
				d.Verdict = "errors"
			}
			q.Findings = append(q.Findings, ErrorsFinding(subject, parts))
		}
	}
	// The two directions of each link, never averaged.
	byRail := map[string][]Direction{}
	for _, d := range q.Directions {
		byRail[d.Rail] = append(byRail[d.Rail], d)
	}
	var rails []string
	for r := range byRail {
		rails = append(rails, r)
	}
	sort.Strings(rails)
	for _, r := range rails {
		ds := byRail[r]
		if len(ds) != 2 || ds[0].Gbps <= 0 || ds[1].Gbps <= 0 {
			continue
		}
		hi, lo := ds[0], ds[1]
		if lo.Gbps > hi.Gbps {
			hi, lo = lo, hi
		}
		if hi.Gbps/lo.Gbps > q.Rules.Asymmetric {
			q.Findings = append(q.Findings, report.Finding{ID: "link.asymmetric", Severity: report.Warn, Subject: r,
				Title:    "both directions of a link move alike",
				Observed: fmt.Sprintf("%s→%s %.1f Gb/s, %s→%s %.1f Gb/s (%.1f×)", hi.From, hi.To, hi.Gbps, lo.From, lo.To, lo.Gbps, hi.Gbps/lo.Gbps),
				Expected: fmt.Sprintf("within %.0f× of each other", q.Rules.Asymmetric),
				Why:      "one direction slower than the other points at one end: a port, a transceiver, a shaping or a pause-frame storm on one side",
				Remedy:   report.Manual(report.ActionCable, "look at the slow direction's sender: its port counters, its qdisc (tc qdisc show dev NETDEV) and its cable end"),
				Source:   q.Rules.Source})
		}
	}
	return q
}

// Report is the directions as the report model holds them.
func (q Qualification) Report() []report.QualifiedDirection {
	var out []report.QualifiedDirection
	for _, d := range q.Directions {
		tool := d.Tool
		if tool == "sparkrig-probe" {
			tool = "sparkrig TCP probe"
		}
		qd := report.QualifiedDirection{Rail: d.Rail, From: d.From, To: d.To, Tool: tool, Gbps: d.Gbps, Verdict: d.Verdict}
		qd.Moved = Moved(d.Moved)
		out = append(out, qd)
	}
	return out
}

// Suspects are the steps behind a degraded direction or an asymmetric
// link: doctor --qualify measures them once more before it judges, so a
// moment of contention on a node is not reported as a bad link.
func (q Qualification) Suspects(rec *Record) []string {
	bad := map[string]bool{}
	for _, f := range q.Findings {
		if f.ID == "link.degraded" || f.ID == "link.asymmetric" {
			bad[f.Subject] = true
		}
	}
	var ids []string
	i := 0
	for _, st := range rec.Bench.Steps {
		if st.Kind != KindQualify {
			continue
		}
		d := q.Directions[i]
		i++
		if bad[d.From+"→"+d.To] || bad[d.Rail] {
			ids = append(ids, st.ID)
		}
	}
	return ids
}

// KeepBest takes, for every step of again that rec has too, the run that
// moved more: a second measurement can only clear a direction, never
// blame it. The first run's counters are kept (an error then stays one).
func KeepBest(rec, again *Record) {
	rate := func(r *Record, i int) float64 {
		if i < len(r.Analyses) && len(r.Analyses[i].Items) > 0 && r.Bench.Steps[i].Status == StatusOK {
			return r.Analyses[i].Items[0].Value
		}
		return -1
	}
	for j, st := range again.Bench.Steps {
		for i := range rec.Bench.Steps {
			if rec.Bench.Steps[i].ID == st.ID && rate(again, j) > rate(rec, i) {
				counters := rec.Bench.Steps[i].Counters
				rec.Bench.Steps[i] = st
				rec.Bench.Steps[i].Counters = counters
				rec.Analyses[i] = again.Analyses[j]
			}
		}
	}
}
