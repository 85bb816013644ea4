package bench

import (
	"fmt"
	"strconv"
	"time"
)

// planRDMA adds ib_write_bw and ib_write_lat per rail, then ib_write_bw on
// every rail at once for the aggregate.
func (p *Plan) planRDMA(o Options) {
	var ready []Rail
	for _, r := range p.Rails {
		if !r.A.RDMAReady() || !r.B.RDMAReady() {
			p.note(Note{ID: "bench.rail-no-rdma", Detail: r.String() + ": no active RDMA port on both ends; rdma tests skip it"})
			continue
		}
		ready = append(ready, r)
	}
	if len(ready) == 0 {
		p.note(Note{ID: "bench.no-rdma-rail", Detail: "no rail has an active RDMA port on both ends: nothing for rdma to test",
			Fix: "check `sparkrig doctor --hosts ...` for the RoCE ports and their addresses"})
		return
	}
	timeout := o.Duration + 60*time.Second
	for _, r := range ready {
		p.Steps = append(p.Steps, Step{ID: "rdma/" + r.Name + "/ib_write_bw", Kind: KindRDMA, Tool: "ib_write_bw",
			Rails: []string{r.Name}, Timeout: timeout,
			Servers: []Cmd{perftest(o, "ib_write_bw", r, o.BasePort, false)},
			Clients: []Cmd{perftest(o, "ib_write_bw", r, o.BasePort, true)}})
		p.Steps = append(p.Steps, Step{ID: "rdma/" + r.Name + "/ib_write_lat", Kind: KindRDMA, Tool: "ib_write_lat",
			Rails: []string{r.Name}, Timeout: 60 * time.Second,
			Servers: []Cmd{perftest(o, "ib_write_lat", r, o.BasePort, false)},
			Clients: []Cmd{perftest(o, "ib_write_lat", r, o.BasePort, true)}})
	}
	if len(ready) < 2 {
		return
	}
	agg := Step{ID: "rdma/all/ib_write_bw", Kind: KindRDMA, Tool: "ib_write_bw", Timeout: timeout}
	for i, r := range ready {
		agg.Rails = append(agg.Rails, r.Name)
		agg.Servers = append(agg.Servers, perftest(o, "ib_write_bw", r, o.BasePort+i, false))
		agg.Clients = append(agg.Clients, perftest(o, "ib_write_bw", r, o.BasePort+i, true))
	}
	p.Steps = append(p.Steps, agg)
}

// perftest builds one side of a perftest run on a rail. Both sides name
// their own device and GID; where a GID index is unknown, both use rdma_cm
// (-R), which resolves the path from the IP address instead.
func perftest(o Options, tool string, r Rail, port int, client bool) Cmd {
	e := r.A
	if client {
		e = r.B
	}
	argv := []string{o.Tools.Path(tool), "-d", e.RDMADev, "-i", strconv.Itoa(e.Port), "-p", strconv.Itoa(port), "-F"}
	cm := r.A.GIDIndex < 0 || r.B.GIDIndex < 0
	if cm {
		argv = append(argv, "-R")
	} else {
		argv = append(argv, "-x", strconv.Itoa(e.GIDIndex))
	}
	if tool == "ib_write_bw" {
		argv = append(argv, "--report_gbits", "-q", strconv.Itoa(o.QPs), "-D", strconv.Itoa(seconds(o.Duration)))
	} else {
		argv = append(argv, "-n", "10000")
	}
	c := Cmd{Host: e.Host, Role: RoleServer, Argv: argv}
	if client {
		c.Role = RoleClient
		c.Argv = append(c.Argv, r.A.Addr)
	} else if !cm {
		c.ListenPort = port
	}
	return c
}

func seconds(d time.Duration) int {
	s := int(d / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// planTCP adds one TCP throughput test per rail: iperf3 in JSON mode, or
// sparkrig's own probe with --native.
func (p *Plan) planTCP(o Options) {
	if len(p.Rails) == 0 {
		p.note(Note{ID: "bench.no-rail", Detail: "no two nodes share an IPv4 subnet: nothing for tcp to test",
			Fix: "address the links between the nodes (sparkrig fix), or check `sparkrig doctor --hosts ...`"})
		return
	}
	for i, r := range p.Rails {
		port := o.BasePort + TCPPortOffset + i
		if o.Native {
			p.Steps = append(p.Steps, probeStep(o, r, port))
			continue
		}
		dur := strconv.Itoa(seconds(o.Duration))
		p.Steps = append(p.Steps, Step{ID: "tcp/" + r.Name + "/iperf3", Kind: KindTCP, Tool: "iperf3",
			Rails: []string{r.Name}, Timeout: o.Duration + 30*time.Second,
			Servers: []Cmd{{Host: r.A.Host, Role: RoleServer, ListenPort: port,
				Argv: []string{o.Tools.Path("iperf3"), "-s", "-1", "-B", r.A.Addr, "-p", strconv.Itoa(port)}}},
			Clients: []Cmd{{Host: r.B.Host, Role: RoleClient,
				Argv: []string{o.Tools.Path("iperf3"), "-c", r.A.Addr, "-B", r.B.Addr, "-p", strconv.Itoa(port),
					"-P", strconv.Itoa(o.Streams), "-t", dur, "-J"}}}})
	}
}

func probeStep(o Options, r Rail, port int) Step {
	listen := fmt.Sprintf("%s:%d", r.A.Addr, port)
	return Step{ID: "tcp/" + r.Name + "/probe", Kind: KindTCP, Tool: "sparkrig-probe",
		Rails: []string{r.Name}, Timeout: o.Duration + 30*time.Second,
		Servers: []Cmd{{Host: r.A.Host, Role: RoleServer, ListenPort: port,
			Argv: []string{o.ProbePath, "bench", "probe-server", "--listen", listen, "--once"}}},
		Clients: []Cmd{{Host: r.B.Host, Role: RoleClient,
			Argv: []string{o.ProbePath, "bench", "probe-client", "--connect", listen, "--bind", r.B.Addr,
				"--streams", strconv.Itoa(o.Streams), "--duration", o.Duration.String()}}}}
}
