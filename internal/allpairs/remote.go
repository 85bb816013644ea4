package allpairs

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/bench/probe"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/runner"
)

// The tools a direction is measured with, as reports name them.
const (
	ToolRDMA = "ib_write_bw"
	ToolTCP  = "sparkrig TCP probe"
)

// Remote measures on the nodes through a bench executor, all tests of a
// round started together as one bench step (servers first, then clients):
// a direction RDMA holds a step for with ib_write_bw (bench's qualify step
// for it: both ends have an active RDMA port and perftest), every other one
// with sparkrig's TCP probe, a client on the sender bound to its own
// address and a server on the receiver's. Each node receives at most once
// a round, so one probe port serves every node. Where Rails holds a pair's
// two ends, their interface and RDMA port counters are read before and
// after the round, and the error counters that moved are the pair's.
type Remote struct {
	X     *bench.Executor
	Hosts []string // how each node is reached, by index
	// Addr is node's address facing peer: its segment address, or on a
	// ring the address on the cable between them.
	Addr    func(node, peer int) string
	Port    int
	Streams int
	Probe   string // the sparkrig binary on the nodes
	Pings   int
	// RDMA is the ib_write_bw step of each direction measured with it.
	RDMA map[Test]bench.Step
	// Rails are the two ends of each pair, by Pair{A < B}.
	Rails map[Pair]bench.Rail
	// NCCL is how Collectives runs a pair's 2-rank NCCL test.
	NCCL NCCLTest
	seq  int
	// the counters read after the last round, and of which ends: the next
	// round on the same ends (all-pairs: every node's one port) starts
	// from them instead of reading them again
	last     map[string]map[string]bench.Counter
	lastEnds string

	persistent bool     // Servers runs a server on every node for the run
	stop       []func() // ends them
}

// Measure runs one round.
func (p *Remote) Measure(ctx context.Context, tests []Test, d time.Duration) []Measurement {
	p.seq++
	st := bench.Step{ID: fmt.Sprintf("allpairs/round-%d", p.seq), Kind: "allpairs", Tool: "sparkrig-probe", Timeout: d + 60*time.Second}
	out := make([]Measurement, len(tests))
	var of []int // the test of each client
	for i, t := range tests {
		out[i].Test = t
		if rs, ok := p.RDMA[t]; ok {
			out[i].Tool = ToolRDMA
			st.Servers = append(st.Servers, rs.Servers...)
			for _, c := range rs.Clients {
				c.Group = "test-" + strconv.Itoa(i) // a direction that fails stops no other
				st.Clients = append(st.Clients, c)
				of = append(of, i)
			}
			st.Timeout = max(st.Timeout, rs.Timeout)
			continue
		}
		out[i].Tool = ToolTCP
		listen := fmt.Sprintf("%s:%d", p.Addr(t.To, t.From), p.Port)
		if !p.persistent {
			st.Servers = append(st.Servers, bench.Cmd{Host: p.Hosts[t.To], Role: bench.RoleServer, ListenPort: p.Port,
				Argv: []string{p.Probe, "bench", "probe-server", "--listen", listen, "--once"}})
		}
		st.Clients = append(st.Clients, bench.Cmd{Host: p.Hosts[t.From], Role: bench.RoleClient, Group: "test-" + strconv.Itoa(i),
			Argv: []string{p.Probe, "bench", "probe-client", "--connect", listen, "--bind", p.Addr(t.From, t.To),
				"--streams", strconv.Itoa(max(p.Streams, 1)), "--duration", d.String(), "--pings", strconv.Itoa(max(p.Pings, 1))}})
		of = append(of, i)
	}
	rails := p.rails(tests)
	before, ends := p.last, endsOf(rails)
	if ends != p.lastEnds || before == nil {
		before = bench.ReadCounters(ctx, p.X.T, rails)
	}
	res := p.X.Run(ctx, st)
	p.last, p.lastEnds = bench.ReadCounters(ctx, p.X.T, rails), ends
	moved := bench.ErrorsMoved(bench.CountersBetween(before, p.last))
	var clients []bench.CmdResult
	for _, c := range res.Commands {
		if c.Role == bench.RoleClient {
			clients = append(clients, c)
		}
	}
	got := make([]bool, len(tests))
	for k, i := range of {
		if got[i] {
			continue
		}
		got[i] = true
		if k >= len(clients) {
			out[i].Err = res.Error
			if out[i].Err == "" {
				out[i].Err = res.Status
			}
			continue
		}
		out[i].Gbps, out[i].Err = rate(out[i].Tool, clients[k])
	}
	for i, t := range tests {
		out[i].Moved = bench.Moved(movedOn(moved, p.Rails[pairOf(t)]))
	}
	return out
}

// rate reads a client's output: the rate it measured, or why there is none.
func rate(tool string, c bench.CmdResult) (float64, string) {
	if tool == ToolRDMA {
		runs, err := results.ParsePerftest(strings.NewReader(c.Stdout))
		if err == nil && len(runs) > 0 {
			if g, _ := runs[0].SteadyAvgGbps(); g > 0 {
				return g, ""
			}
		}
		return 0, firstLine(c.Stderr, firstLine(c.Error, "no ib_write_bw result in the output"))
	}
	r, err := probe.Parse([]byte(c.Stdout))
	switch {
	case err == nil:
		return r.Gbps, ""
	case c.Error != "":
		return 0, firstLine(c.Stderr, c.Error)
	}
	return 0, err.Error()
}

// rails are the ends of the pairs the tests measure, each once.
func (p *Remote) rails(tests []Test) []bench.Rail {
	var out []bench.Rail
	seen := map[Pair]bool{}
	for _, t := range tests {
		k := pairOf(t)
		if r, ok := p.Rails[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// endsOf names the rails' ends, whatever their order.
func endsOf(rails []bench.Rail) string {
	var out []string
	for _, r := range rails {
		for _, e := range []bench.Endpoint{r.A, r.B} {
			out = append(out, e.Host+" "+e.NetDev+" "+e.RDMADev)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), "\n")
}

// movedOn keeps the counters of the rail's two ends.
func movedOn(cs []bench.Counter, r bench.Rail) []bench.Counter {
	var out []bench.Counter
	for _, c := range cs {
		for _, e := range []bench.Endpoint{r.A, r.B} {
			if e.Host != "" && c.Host == e.Host && (c.Dev == e.NetDev || e.RDMADev != "" && strings.HasPrefix(c.Dev, e.RDMADev+"/")) {
				out = append(out, c)
			}
		}
	}
	return out
}

func pairOf(t Test) Pair { return Pair{min(t.From, t.To), max(t.From, t.To)} }

func firstLine(s, or string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			if i > 0 {
				return s[:i]
			}
			break
		}
	}
	if s != "" && s[len(s)-1] != '\n' {
		return s
	}
	return or
}

// Alive runs `true` on the node through the executor's runner, bounded by
// AliveTimeout: nil when it answers.
func (p *Remote) Alive(ctx context.Context, node int) error {
	ctx, cancel := context.WithTimeout(ctx, AliveTimeout)
	defer cancel()
	_, _, err := runner.Run(ctx, p.X.T, p.Hosts[node], "true", nil)
	return err
}

// AliveTimeout bounds the question whether a node whose tests failed still
// answers: generous for a healthy node on a loaded machine.
const AliveTimeout = 30 * time.Second
