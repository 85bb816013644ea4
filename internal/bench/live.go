package bench

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/results"
)

// liveScript prints two lines: MemAvailable in kB, and how many compute
// processes the GPUs run ("-" where nvidia-smi cannot say).
const liveScript = `awk '/^MemAvailable:/{print $2}' /proc/meminfo
if n=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null); then printf '%s\n' "$n" | awk 'NF{c++} END{print c+0}'; else echo -; fi`

// Live is what may have changed on a node since its facts were captured.
// Nil fields could not be read.
type Live struct {
	AvailableBytes *uint64
	GPUProcesses   *int
}

// ParseLive reads liveScript's output.
func ParseLive(out string) Live {
	var l Live
	lines := strings.Split(out, "\n") // line by line: the first may be empty
	if kb, err := strconv.ParseUint(strings.TrimSpace(lines[0]), 10, 64); err == nil && kb < 1<<50 {
		b := kb << 10
		l.AvailableBytes = &b
	}
	if len(lines) > 1 {
		if n, err := strconv.Atoi(strings.TrimSpace(lines[1])); err == nil && n >= 0 {
			l.GPUProcesses = &n
		}
	}
	return l
}

// ReadLive reads every node's Live state; a node that cannot be read keeps
// what its facts say.
func ReadLive(ctx context.Context, t runner.Runner, nodes []*facts.Node) []Live {
	out := make([]Live, len(nodes))
	for i, n := range nodes {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		got, err := run(cctx, t, n.Host, liveScript)
		cancel()
		if err == nil {
			out[i] = ParseLive(got)
		}
	}
	return out
}

// Recheck looks at the nodes again just before an NCCL step allocates its
// buffers: a GPU process started since the plan refuses the step (unless
// force), and less free memory lowers its largest message (-e), or
// refuses the step when not even -b fits. It returns the step to run, a
// note when the size was lowered, and why not to run it.
func Recheck(st Step, nodes []*facts.Node, live []Live, fraction float64, force bool) (Step, *Note, string) {
	now := make([]*facts.Node, len(nodes))
	var busy []string
	for i, n := range nodes {
		c := *n
		if l := live[i]; l.AvailableBytes != nil {
			c.Memory.AvailableBytes = l.AvailableBytes
		}
		if l := live[i]; l.GPUProcesses != nil && *l.GPUProcesses > 0 && !force {
			busy = append(busy, fmt.Sprintf("%s: the GPUs now run %d compute process(es); stop them or pass --force", n.Host, *l.GPUProcesses))
		}
		now[i] = &c
	}
	if len(busy) > 0 {
		return st, nil, strings.Join(busy, "; ")
	}
	least, basis, ok := leastBudget(now, fraction)
	minB, err := results.ParseSize(argAfter(st.Clients[0].Argv, "-b"))
	if !ok || err != nil || st.MaxBytes <= 0 {
		return st, nil, ""
	}
	ranks := 0
	for _, n := range now {
		ranks += max(1, len(n.GPUs))
	}
	if n, err := strconv.Atoi(argAfter(st.Clients[0].Argv, "--nranks")); err == nil {
		ranks = n // sparkrig's own collectives: one rank per node
	}
	size := capMaxBytes(st.Collective, minB, st.MaxBytes, ranks, least)
	switch {
	case size == 0:
		return st, nil, fmt.Sprintf("%s needs about %s per rank even at -b %s, more than %.0f%% of %s on %s now",
			st.Collective, human(uint64(footprint(st.Collective, minB, ranks))), SizeString(minB), fraction*100, basis.what, basis.host)
	case size < st.MaxBytes:
		n := &Note{ID: "bench.size-capped", Host: basis.host, Detail: fmt.Sprintf(
			"%s lowered to -e %s (planned %s): free memory fell to %s on %s since the facts were captured",
			st.Collective, SizeString(size), SizeString(st.MaxBytes), basis.what, basis.host)}
		return withMaxBytes(st, size), n, ""
	}
	return st, nil, ""
}

// argAfter is the value after the last flag in argv, "" without one.
func argAfter(argv []string, flag string) string {
	for i := len(argv) - 2; i >= 0; i-- {
		if argv[i] == flag {
			return argv[i+1]
		}
	}
	return ""
}

// withMaxBytes returns st with -e lowered to size in its launcher, or in
// every rank of sparkrig's own collectives (they must run the same sweep).
func withMaxBytes(st Step, size int64) Step {
	clients := make([]Cmd, len(st.Clients))
	for j, c := range st.Clients {
		c.Argv = append([]string{}, c.Argv...)
		for i := len(c.Argv) - 2; i >= 0; i-- {
			if c.Argv[i] == "-e" {
				c.Argv[i+1] = SizeString(size)
				break
			}
		}
		clients[j] = c
	}
	st.Clients = clients
	st.MaxBytes = size
	return st
}
