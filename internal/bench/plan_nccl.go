package bench

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// NCCLTimeout bounds one nccl-tests collective.
const NCCLTimeout = 15 * time.Minute

// planNCCL adds one nccl-tests run per collective: directly on a single
// node, through mpirun from the first node across several, with the
// environment NCCLEnv derives and message sizes capped to free memory.
func (p *Plan) planNCCL(nodes []*facts.Node, o Options) {
	env, notes := NCCLEnv(nodes, p.Rails, EnvOptions{BootstrapIf: o.BootstrapIf})
	if len(nodes) > 1 {
		// The cluster's environment, whatever launches the ranks: the same
		// one fix writes to cluster.env.
		p.NCCLEnv = env
		p.Notes = append(p.Notes, notes...)
	}
	native := len(nodes) > 1 && o.NativeNCCL != ""
	if native {
		env = ncclOnly(env) // no MPI: the ranks get NCCL's settings alone
	}
	ranks, perNode := 0, make([]int, len(nodes))
	for i, n := range nodes {
		perNode[i] = max(1, len(n.GPUs))
		if native {
			perNode[i] = 1
		}
		ranks += perNode[i]
	}
	if native {
		p.notesNative(nodes, env)
	}
	if len(o.MPIHosts) != len(nodes) {
		o.MPIHosts = mpiHostNames(nodes, p.Rails)
	}
	least, basis, ok := leastBudget(nodes, o.MemFraction)
	for _, coll := range o.Collectives {
		maxBytes := o.MaxBytes
		if ok {
			maxBytes = capMaxBytes(coll, o.MinBytes, o.MaxBytes, ranks, least)
			if maxBytes == 0 {
				p.Refusals = append(p.Refusals, Refusal{Host: basis.host, Reason: fmt.Sprintf(
					"%s needs about %s per rank even at -b %s, more than %.0f%% of %s on %s",
					coll, human(uint64(footprint(coll, o.MinBytes, ranks))), SizeString(o.MinBytes), o.MemFraction*100, basis.what, basis.host)})
				continue
			}
			if maxBytes < o.MaxBytes {
				p.note(Note{ID: "bench.size-capped", Host: basis.host, Detail: fmt.Sprintf(
					"%s capped at -e %s (asked %s): a rank may take at most %.0f%% of %s on %s",
					coll, SizeString(maxBytes), SizeString(o.MaxBytes), o.MemFraction*100, basis.what, basis.host)})
			}
		} else {
			p.Refusals = append(p.Refusals, Refusal{Host: basis.host, Forceable: true,
				Reason: "free memory could not be read on " + basis.host + "; pass --force to run with -e " + SizeString(maxBytes) + " anyway"})
		}
		p.Steps = append(p.Steps, ncclStep(nodes, perNode, env, coll, maxBytes, o))
	}
}

type budgetBasis struct{ host, what string }

// leastBudget is the smallest per-rank budget of any node.
func leastBudget(nodes []*facts.Node, fraction float64) (uint64, budgetBasis, bool) {
	var least uint64
	var basis budgetBasis
	for i, n := range nodes {
		b, what, ok := budget(n, fraction)
		if !ok {
			return 0, budgetBasis{host: n.Host}, false
		}
		if i == 0 || b < least {
			least, basis = b, budgetBasis{host: n.Host, what: what}
		}
	}
	return least, basis, true
}

func ncclStep(nodes []*facts.Node, perNode []int, env []Var, coll string, maxBytes int64, o Options) Step {
	bin := o.Tools.Path(coll + "_perf")
	args := []string{"-b", SizeString(min(o.MinBytes, maxBytes)), "-e", SizeString(maxBytes), "-f", "2"}
	st := Step{ID: "nccl/" + coll, Kind: KindNCCL, Tool: coll + "_perf", Collective: coll, MaxBytes: maxBytes,
		Timeout: NCCLTimeout}
	var jsonFile string
	if o.NCCLJSON {
		jsonFile = path.Join(o.RunDir, coll+".json")
		args = append(args, "-J", jsonFile)
	}
	var c Cmd
	if len(nodes) > 1 && o.NativeNCCL != "" {
		st.Tool = "sparkrig-collective"
		st.Clients = nativeRanks(nodes, env, coll, maxBytes, o)
		return st
	} else if len(nodes) == 1 && o.NativeNCCL != "" {
		jsonFile = path.Join(o.RunDir, coll+".json")
		st.Tool = "sparkrig-collective"
		c = Cmd{Host: nodes[0].Host, Role: RoleLauncher, Env: []Var{{Name: "NCCL_DEBUG", Value: "INFO"}, {Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"}},
			Argv: []string{o.NativeNCCL, "bench", "gpu", "--mem-fraction", strconv.FormatFloat(o.MemFraction, 'f', -1, 64),
				"collective", "--op", coll, "-b", SizeString(min(o.MinBytes, maxBytes)), "-e", SizeString(maxBytes), "-f", "2",
				"--json-file", jsonFile}}
	} else if len(nodes) == 1 {
		c = Cmd{Host: nodes[0].Host, Role: RoleLauncher,
			Argv: append([]string{bin, "-g", strconv.Itoa(perNode[0])}, args...),
			Env:  []Var{{Name: "NCCL_DEBUG", Value: "INFO"}, {Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"}}}
	} else {
		c = Cmd{Host: nodes[0].Host, Role: RoleLauncher, Env: env,
			Argv: append(mpirunArgv(nodes, perNode, env, o), append([]string{bin, "-g", "1"}, args...)...)}
	}
	if jsonFile != "" {
		c.Fetch = []string{jsonFile}
	}
	st.Clients = []Cmd{c}
	return st
}

// mpirunArgv launches one rank per GPU on every node, exporting the derived
// environment to all of them (-x NAME=VALUE, one value for every rank).
func mpirunArgv(nodes []*facts.Node, perNode []int, env []Var, o Options) []string {
	names := o.MPIHosts
	var hosts []string
	np := 0
	for i, n := range names {
		hosts = append(hosts, n+":"+strconv.Itoa(perNode[i]))
		np += perNode[i]
	}
	// mpirun's own ssh follows the host-key policy of sparkrig's SSH.
	hostKeys := "yes"
	if o.AcceptNewHostKeys {
		hostKeys = "accept-new"
	}
	argv := []string{o.Tools.Path("mpirun"), "-np", strconv.Itoa(np), "-H", strings.Join(hosts, ","),
		"--bind-to", "none", "--mca", "plm_rsh_agent", "ssh -o BatchMode=yes -o StrictHostKeyChecking=" + hostKeys}
	for _, v := range env {
		argv = append(argv, "-x", v.Name+"="+v.Value)
	}
	return append(argv, "-x", "PATH", "-x", "LD_LIBRARY_PATH")
}

// mpiHostNames are the addresses mpirun on the first node reaches the others
// by: on two nodes the first rail's addresses (the names a laptop's SSH
// config knows mean nothing on the node), otherwise the hosts as given.
func mpiHostNames(nodes []*facts.Node, rails []Rail) []string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Host
	}
	if len(nodes) == 2 && len(rails) > 0 && rails[0].A.Host == nodes[0].Host && rails[0].B.Host == nodes[1].Host {
		names[0], names[1] = rails[0].A.Addr, rails[0].B.Addr
	}
	return names
}
