package allpairs

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/bench/probe"
)

// TCPProbe measures with sparkrig's TCP probe: for each test a probe
// server on the receiver's segment address and a client on the sender
// bound to its own, all tests of a round started together as one bench
// step (servers first, then clients). Each node receives at most once a
// round, so one port serves every node.
type TCPProbe struct {
	X     *bench.Executor
	Hosts []string // how each node is reached, by index
	// Addr is node's address facing peer: its segment address, or on a
	// ring the address on the cable between them.
	Addr    func(node, peer int) string
	Port    int
	Streams int
	Probe   string // the sparkrig binary on the nodes
	Pings   int
	seq     int

	persistent bool     // Servers runs a server on every node for the run
	stop       []func() // ends them
}

// Measure runs one round.
func (p *TCPProbe) Measure(ctx context.Context, tests []Test, d time.Duration) []Measurement {
	p.seq++
	st := bench.Step{ID: fmt.Sprintf("allpairs/round-%d", p.seq), Kind: "allpairs", Tool: "sparkrig-probe", Timeout: d + 60*time.Second}
	for _, t := range tests {
		listen := fmt.Sprintf("%s:%d", p.Addr(t.To, t.From), p.Port)
		if !p.persistent {
			st.Servers = append(st.Servers, bench.Cmd{Host: p.Hosts[t.To], Role: bench.RoleServer, ListenPort: p.Port,
				Argv: []string{p.Probe, "bench", "probe-server", "--listen", listen, "--once"}})
		}
		st.Clients = append(st.Clients, bench.Cmd{Host: p.Hosts[t.From], Role: bench.RoleClient,
			Argv: []string{p.Probe, "bench", "probe-client", "--connect", listen, "--bind", p.Addr(t.From, t.To),
				"--streams", strconv.Itoa(max(p.Streams, 1)), "--duration", d.String(), "--pings", strconv.Itoa(max(p.Pings, 1))}})
	}
	res := p.X.Run(ctx, st)
	out := make([]Measurement, len(tests))
	var clients []bench.CmdResult
	for _, c := range res.Commands {
		if c.Role == bench.RoleClient {
			clients = append(clients, c)
		}
	}
	for i, t := range tests {
		out[i].Test = t
		if i >= len(clients) {
			out[i].Err = res.Error
			if out[i].Err == "" {
				out[i].Err = res.Status
			}
			continue
		}
		c := clients[i]
		r, err := probe.Parse([]byte(c.Stdout))
		switch {
		case err == nil:
			out[i].Gbps = r.Gbps
		case c.Error != "":
			out[i].Err = firstLine(c.Stderr, c.Error)
		default:
			out[i].Err = err.Error()
		}
	}
	return out
}

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
