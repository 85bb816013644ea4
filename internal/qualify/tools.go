package qualify

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sparkrig/sparkrig/internal/allpairs"
	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/runner"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// nodes are the facts of the nodes reached, by index (nil where they
// could not be read).
func (s *setup) nodes() []*facts.Node {
	out := make([]*facts.Node, len(s.hosts))
	for i, c := range s.caps {
		if c.Err != nil || c.Facts == nil {
			continue
		}
		n := *c.Facts
		n.Host = s.hosts[i]
		out[i] = &n
	}
	return out
}

// tools decides, as doctor --qualify does, which directions ib_write_bw
// measures: those whose two ends have an active RDMA port (the nodes'
// facts) and perftest installed, with bench's qualify step for each; the
// others get sparkrig's TCP probe. It returns too every pair's two ends
// (netdev, and RDMA port where there is one) for their counters. A node
// whose facts cannot be read keeps to TCP, said on the log.
func tools(ctx context.Context, o Options, hosts []string, byIndex []*facts.Node,
	ends map[[2]int]allpairs.Addr, d time.Duration, runDir string) (map[allpairs.Pair]bench.Rail, map[allpairs.Test]bench.Step) {
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
	for i, n := range byIndex {
		if n == nil {
			fmt.Fprintf(o.Log, "qualify: %s: its RDMA ports and GPUs could not be read, its pairs use TCP and no NCCL test\n", sanitize.Line(hosts[i]))
			continue
		}
		nodes = append(nodes, n)
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
	rdma := map[allpairs.Test]bench.Step{}
	if len(nodes) < 2 {
		return rails, rdma
	}
	bo := bench.Options{Kinds: []string{bench.KindQualify}, Duration: d, RunDir: runDir, QualifyRDMA: true, Links: links,
		BasePort: o.Port + 2 - bench.RendezvousPortOffset} // its ports start just above the probe servers'
	plan, err := bench.NewPlan(nodes, bo)
	if err != nil {
		return rails, rdma
	}
	missing := map[string]bool{}
	for _, m := range bench.MissingTools(ctx, o.Runner, plan, func(tool string) bool { return tool != "ib_write_bw" }) {
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
	return rails, rdma
}

// evidence is what qualify reads of each node: its netdevs and RDMA ports
// (which tool measures each pair), its GPUs and NCCL (which pairs get a
// NCCL test), not the whole capture.
func evidence() string {
	return capture.ScriptOnly(
		[]string{"/proc/sys/kernel/hostname", "/sys/class/net/", "/sys/class/infiniband/", "/proc/driver/nvidia/", "/usr/lib/", "/usr/local/"},
		[]string{"uname-m", "ip-addr", "ip-link", "rdma-link", "ibdev2netdev", "ibv-devinfo", "nvidia-smi-q", "ldconfig", "nccl-build-id", "dpkg-nccl", "env"})
}

// ncclPairs says which pairs get a 2-rank NCCL test, those whose two nodes
// have a GPU and NCCL (found on the node, or looked for in NCCLLibs), and
// why the others do not.
func ncclPairs(hosts []string, nodes []*facts.Node, o Options) (func(allpairs.Pair) bool, []string) {
	if !o.NCCL {
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
		case n.NCCL.Library == "" && len(o.NCCLLibs) == 0:
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

// listAddrs reads every node's IPv4 addresses (ip -br addr) through the
// runner, all nodes at once through remote.FanOut, giving up on a node
// that does not answer within perHost: those are returned with why.
func listAddrs(ctx context.Context, t runner.Runner, hosts []string, perHost time.Duration) ([][]allpairs.Addr, map[string]string) {
	addrs := make([][]allpairs.Addr, len(hosts))
	res := remote.FanOut{PerHost: perHost}.Each(ctx, hosts, func(ctx context.Context, i int, h string) error {
		out, _, err := runner.Run(ctx, t, h, allpairs.AddrCommand, nil) // its output bounded
		if err != nil {
			return err
		}
		addrs[i] = allpairs.ParseAddrs(out)
		return nil
	})
	gone := map[string]string{}
	for i, r := range res {
		if r.Err != nil {
			gone[hosts[i]] = oneLine(r.Err.Error())
		}
	}
	return addrs, gone
}

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}
