package fix

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// envVar is one launcher setting and why it has its value.
type envVar struct {
	Key, Value, Why string
}

// launchEnv derives the NCCL, UCX, Open MPI and Gloo settings from a node's rails.
func launchEnv(n Node, rails []Rail, opt Options) ([]envVar, error) {
	boot, why, err := bootstrapIface(n, rails, opt)
	if err != nil {
		return nil, err
	}
	hcas := make([]string, 0, len(rails))
	for _, r := range rails {
		if r.RDMADev != "" && !slices.Contains(hcas, r.RDMADev) {
			hcas = append(hcas, r.RDMADev)
		}
	}
	env := []envVar{
		{"NCCL_SOCKET_IFNAME", boot, why},
		{"NCCL_IB_HCA", strings.Join(hcas, ","), "every addressed twin, in port then twin order on every node: one twin alone gives about half the bandwidth"},
		{"NCCL_IB_GID_INDEX", "3", "GID 3 is RoCEv2 over the IPv4 address (0/1 are the fe80 link-local GIDs, 2 is RoCEv1)"},
	}
	if needsSubnetAwareRouting(opt, rails) {
		env = append(env, envVar{"NCCL_IB_SUBNET_AWARE_ROUTING", "1", "the cabling joins different ports, so only subnet-aware routing pairs each HCA with the peer on its own subnet"})
	}
	env = append(env,
		envVar{"UCX_NET_DEVICES", boot, "UCX (MPI out-of-band, vLLM/Ray) on the same interface as NCCL's bootstrap"},
		envVar{"OMPI_MCA_btl_tcp_if_include", boot, "Open MPI's TCP transport on the same interface"},
		envVar{"GLOO_SOCKET_IFNAME", boot, "PyTorch's Gloo rendezvous on the same interface"},
	)
	return env, nil
}

// bootstrapIface picks the interface for NCCL's bootstrap and the launchers'
// sockets: a rail that reaches every peer, or in the ring (where no rail
// does) the management interface.
func bootstrapIface(n Node, rails []Rail, opt Options) (string, string, error) {
	if opt.SocketIfname != "" {
		return opt.SocketIfname, "given with --socket-ifname", nil
	}
	if opt.Topology != Ring && len(rails) > 0 {
		return rails[0].NetDev, "bootstrap sockets on a CX-7 rail that reaches every peer (as NVIDIA's NCCL playbook does); never eth0, which a Spark does not have", nil
	}
	for _, p := range protected(n) {
		if p == ManagementIface {
			return p, "in the ring no CX-7 netdev reaches both peers, so bootstrap goes over the management network", nil
		}
	}
	if n.SSHIface != "" {
		return n.SSHIface, "in the ring no CX-7 netdev reaches both peers, so bootstrap goes over the interface SSH arrives on", nil
	}
	return "", "", fmt.Errorf("in the ring no CX-7 netdev reaches both peers and no management interface is known; give --socket-ifname")
}

// needsSubnetAwareRouting is true when some rail faces a differently named
// netdev (the ring's p0-p1 cables, or a pair cabled port 0 to port 1): NCCL
// would otherwise pair HCAs by index and connect across subnets.
func needsSubnetAwareRouting(opt Options, rails []Rail) bool {
	if opt.Topology == Ring {
		return true
	}
	for _, r := range rails {
		for _, p := range r.Peers {
			if _, dev, _ := strings.Cut(p, ":"); dev != r.NetDev {
				return true
			}
		}
	}
	return false
}

// renderEnv writes the launcher environment file: KEY=VALUE lines that
// `docker run --env-file`, `set -a; . FILE` and systemd EnvironmentFile= all read.
func renderEnv(env []envVar) []byte {
	var b strings.Builder
	b.WriteString("# Written by sparkrig fix: cluster settings for launchers.\n")
	b.WriteString("#   docker run --env-file /etc/sparkrig/cluster.env ...\n")
	b.WriteString("#   set -a; . /etc/sparkrig/cluster.env; set +a   (then mpirun -x NCCL_IB_HCA ..., torchrun, vllm)\n")
	for _, e := range env {
		fmt.Fprintf(&b, "\n%s%s=%s\n", commentWrap(e.Why, 78), e.Key, e.Value)
	}
	return []byte(b.String())
}

// mergeNCCLConf sets fix's NCCL_* keys in /etc/nccl.conf, keeping every other
// line as it is: existing keys are replaced in place, missing ones appended.
func mergeNCCLConf(cur []byte, env []envVar) []byte {
	want := map[string]string{}
	var order []string
	for _, e := range env {
		if strings.HasPrefix(e.Key, "NCCL_") {
			want[e.Key] = e.Value
			order = append(order, e.Key)
		}
	}
	var out []string
	done := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(cur))
	for sc.Scan() {
		line := sc.Text()
		k, _, ok := strings.Cut(strings.TrimSpace(line), "=")
		k = strings.TrimSpace(k)
		if v, mine := want[k]; ok && mine {
			if !done[k] {
				out = append(out, k+"="+v)
				done[k] = true
			}
			continue
		}
		out = append(out, line)
	}
	var missing []string
	for _, k := range order {
		if !done[k] {
			missing = append(missing, k+"="+want[k])
		}
	}
	if len(missing) > 0 {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
		out = append(out, "# Set by sparkrig fix (see /etc/sparkrig/cluster.env for why).")
		out = append(out, missing...)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// parseNCCLConf reads KEY=VALUE lines of /etc/nccl.conf.
func parseNCCLConf(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
