package bench

import (
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// RolePeer is a rank of sparkrig's own collective benchmark other than rank
// 0: started and waited for with the step's clients, stopped with them, but
// not judged (rank 0 prints every rank's table).
const RolePeer = "peer"

// The ports bench's servers listen on, from Options.BasePort: perftest on
// rail i at BasePort+i, the TCP test at BasePort+TCPPortOffset+i, and from
// BasePort+RendezvousPortOffset the native collectives' rendezvous (one
// port) or the qualify directions (two per rail). Every one lies below
// BasePort+PortSpan for up to 50 rails, which fix keeps out of the
// ephemeral range (tuning.ReservedPorts).
const (
	DefaultBasePort      = tuning.BenchBasePort
	TCPPortOffset        = 100
	RendezvousPortOffset = 200
	PortSpan             = tuning.BenchPortSpan
)

// nativeRanks is one `sparkrig bench gpu collective` process per node, one
// GPU each, that meet at rank 0's rendezvous on the first node's bootstrap
// address: rank 0 first (the client whose output is judged), then the
// peers, which retry the rendezvous until rank 0 listens. Every rank gets
// the derived NCCL environment, as mpirun -x would give it.
func nativeRanks(nodes []*facts.Node, env []Var, coll string, maxBytes int64, o Options) []Cmd {
	host, _ := rendezvousHost(nodes[0], env)
	addr := net.JoinHostPort(host, strconv.Itoa(o.BasePort+RendezvousPortOffset))
	jsonFile := path.Join(o.RunDir, "coll-"+coll+".json")
	n := strconv.Itoa(len(nodes))
	var cmds []Cmd
	for i, node := range nodes {
		argv := []string{o.NativeNCCL, "bench", "gpu", "--mem-fraction", strconv.FormatFloat(o.MemFraction, 'f', -1, 64),
			"collective", "--op", coll, "-b", SizeString(min(o.MinBytes, maxBytes)), "-e", SizeString(maxBytes), "-f", "2",
			"--nranks", n, "--rank", strconv.Itoa(i), "--rendezvous", addr}
		c := Cmd{Host: node.Host, Role: RolePeer, Env: env, Argv: argv}
		if i == 0 {
			c.Role = RoleClient
			c.Argv = append(c.Argv, "--json-file", jsonFile)
			c.Fetch = []string{jsonFile}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// rendezvousHost is the first node's IPv4 address on the bootstrap
// interface (the first name of NCCL_SOCKET_IFNAME it has), which every node
// reaches, and true; the host's own name and false when the facts give none.
func rendezvousHost(n *facts.Node, env []Var) (string, bool) {
	for _, v := range env {
		if v.Name != "NCCL_SOCKET_IFNAME" {
			continue
		}
		for _, name := range strings.Split(v.Value, ",") {
			if nd := n.NetDev(strings.TrimSpace(name)); nd != nil {
				if ps := fabric.IPv4Prefixes(*nd); len(ps) > 0 {
					return ps[0].Addr().String(), true
				}
			}
		}
	}
	return hostOnly(n.Host), false
}

// hostOnly strips a user and a port from a host as the user named it.
func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// ncclOnly keeps the NCCL variables: without mpirun the MPI and UCX ones
// have no reader.
func ncclOnly(env []Var) []Var {
	var out []Var
	for _, v := range env {
		if strings.HasPrefix(v.Name, "NCCL_") {
			out = append(out, v)
		}
	}
	return out
}

// notesNative says that the native collectives run one rank per node,
// which GPUs that leaves out, and when the rendezvous address is only the
// first host's name.
func (p *Plan) notesNative(nodes []*facts.Node, env []Var) {
	if host, ok := rendezvousHost(nodes[0], env); !ok {
		p.note(Note{ID: "bench.rendezvous-host", Host: nodes[0].Host, Detail: fmt.Sprintf(
			"the ranks meet at %s as named here: no bootstrap interface address is known on %s, and the other nodes must resolve that name", host, nodes[0].Host),
			Fix: "pass --bootstrap-if NAME"})
	}
	for i, n := range nodes {
		if len(n.GPUs) > 1 {
			p.note(Note{ID: "bench.native-one-gpu", Host: n.Host, Detail: fmt.Sprintf(
				"sparkrig's own collectives run one rank per node: %s has %d GPUs and rank %d uses GPU %d (nccl-tests through mpirun would use all of them)",
				n.Host, len(n.GPUs), i, i%len(n.GPUs))})
		}
	}
}
