package allpairs

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/results"
)

// NCCLTest is how each pair's 2-rank NCCL test runs: sparkrig's own
// collective benchmark (`sparkrig bench gpu collective`, NCCL loaded at run
// time), one rank on each node's first GPU, meeting at rank 0's address.
type NCCLTest struct {
	// MaxBytes is the largest message, the one judged; the sweep starts
	// at an eighth of it.
	MaxBytes int64
	// Port is rank 0's rendezvous port.
	Port int
	// LibDirs are searched first for libnccl and libcudart on the nodes.
	LibDirs []string
}

// DefaultNCCLBytes is the message judged: large enough for a 200 Gb/s link
// to reach its bus bandwidth (nccl-tests' curves flatten from about
// 64 MB), small enough to take well under a second.
const DefaultNCCLBytes = 256 << 20

// NCCLTimeout bounds one round of NCCL tests: the communicators' set-up
// (seconds over sockets) and four sizes.
const NCCLTimeout = 120 * time.Second

// Collectives runs one round of 2-rank NCCL tests, every pair at once: rank
// 0 on the pair's first node, rank 1 on the other, each on its node's
// first GPU with NCCL kept to the pair's network: NCCL_SOCKET_IFNAME its
// segment netdev and, where both ends have an active RDMA port,
// NCCL_IB_HCA that port (else NCCL_IB_DISABLE, so that the test measures
// this segment and not another fabric).
func (p *Remote) Collectives(ctx context.Context, pairs []Pair) []PairResult {
	p.seq++
	t := p.NCCL
	st := bench.Step{ID: fmt.Sprintf("allpairs/nccl-%d", p.seq), Kind: "allpairs", Tool: "sparkrig-collective", Timeout: NCCLTimeout}
	for _, pr := range pairs {
		addr := net.JoinHostPort(p.Addr(pr.A, pr.B), strconv.Itoa(t.Port))
		for rank, node := range []int{pr.A, pr.B} {
			argv := []string{p.Probe, "bench", "gpu"}
			for _, d := range t.LibDirs {
				argv = append(argv, "--lib-dir", d)
			}
			argv = append(argv, "collective", "--op", "all_reduce",
				"-b", bench.SizeString(max(t.MaxBytes/8, 1)), "-e", bench.SizeString(t.MaxBytes), "-f", "2",
				"--nranks", "2", "--rank", strconv.Itoa(rank), "--device", "0", "--rendezvous", addr)
			c := bench.Cmd{Host: p.Hosts[node], Role: bench.RolePeer, Env: p.ncclEnv(pr, node), Argv: argv,
				Group: pairGroup(pr)} // a rank that fails stops its peer, not the other pairs
			if rank == 0 {
				c.Role = bench.RoleClient
			}
			st.Clients = append(st.Clients, c)
		}
	}
	res := p.X.Run(ctx, st)
	out := make([]PairResult, len(pairs))
	for k, pr := range pairs {
		out[k] = PairResult{Pair: pr, Err: firstLine(res.Error, "not run")}
		var rank0, rank1 *bench.CmdResult
		for i := range res.Commands {
			if c := &res.Commands[i]; c.Group == pairGroup(pr) && c.Role == bench.RoleClient {
				rank0 = c
			} else if c.Group == pairGroup(pr) {
				rank1 = c
			}
		}
		if rank0 == nil {
			continue
		}
		out[k] = collectiveResult(*rank0)
		out[k].Pair = pr
		if out[k].Err != "" && rank1 != nil && rank1.Error != "" && rank1.ElapsedMS <= rank0.ElapsedMS {
			// rank 1 failed first and rank 0 was stopped with it: rank 1 says why
			out[k].Err = p.Hosts[pr.B] + ": " + firstLine(lastLines(rank1.Stderr), firstLine(rank1.Error, "rank 1 failed"))
		}
	}
	return out
}

// pairGroup is the bench group of a pair's two ranks.
func pairGroup(pr Pair) string { return fmt.Sprintf("pair-%d-%d", pr.A, pr.B) }

// ncclEnv keeps node's rank of pair pr to the pair's network.
func (p *Remote) ncclEnv(pr Pair, node int) []bench.Var {
	r, ok := p.Rails[pr]
	if !ok {
		return nil
	}
	e, other := r.A, r.B
	if r.B.Host == p.Hosts[node] {
		e, other = r.B, r.A
	}
	env := []bench.Var{{Name: "NCCL_SOCKET_IFNAME", Value: "=" + e.NetDev}}
	if e.RDMAReady() && other.RDMAReady() {
		return append(env, bench.Var{Name: "NCCL_IB_HCA", Value: "=" + e.RDMADev + ":" + strconv.Itoa(e.Port)})
	}
	return append(env, bench.Var{Name: "NCCL_IB_DISABLE", Value: "1"})
}

// collectiveResult reads rank 0's table: the out-of-place bus bandwidth of
// its largest message, or why there is none (wrong results are one).
func collectiveResult(c bench.CmdResult) PairResult {
	var r PairResult
	out, _ := results.ParseNCCLTests(strings.NewReader(c.Stdout))
	for _, t := range out.Tables {
		r.NCCLVersion = t.NCCLVersion
		for _, row := range t.Rows {
			if row.SizeBytes >= r.Bytes && row.OOP.BusBWGBs != nil {
				r.Bytes, r.BusGBs = row.SizeBytes, *row.OOP.BusBWGBs
			}
		}
		if t.WrongResults > 0 {
			return PairResult{NCCLVersion: r.NCCLVersion, Err: fmt.Sprintf("%d wrong results: the data arrived corrupted", t.WrongResults)}
		}
	}
	if r.Bytes > 0 && c.Error == "" {
		return r
	}
	r.BusGBs = 0
	// not the step's error, which may be another pair's
	r.Err = firstLine(lastLines(c.Stderr), firstLine(c.Error, "no NCCL table in rank 0's output"))
	return r
}

// lastLines is s without its blank lines, the last line first: the error
// a failing command printed last.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l + "\n"
		}
	}
	return ""
}
