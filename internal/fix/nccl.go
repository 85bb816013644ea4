package fix

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// clusterEnv is the environment fabric derives (as bench does) for the
// planned rails. Each end is read from the node's facts as bench reads it;
// where the facts do not show the RDMA device yet (a port down, a twin
// without its address) the plan's device stands in, since the plan is what
// the cluster will be.
func clusterEnv(nodes []Node, rails [][]Rail, opt Options) ([]fabric.Var, []fabric.Note) {
	fs := make([]*facts.Node, len(nodes))
	index := map[string]int{}
	for i, n := range nodes {
		fs[i] = n.Facts
		index[n.Facts.Host] = i
	}
	end := func(node int, r Rail) fabric.Endpoint {
		e := fabric.EndpointFor(fs[node], r.NetDev, fabric.StripPrefix(r.Addr))
		if e.RDMADev == "" && r.RDMADev != "" {
			e.RDMADev, e.Port = r.RDMADev, 1
		}
		return e
	}
	var rs []fabric.Rail
	planned := false
	for i := range rails {
		for _, r := range rails[i] {
			for _, p := range r.Peers {
				host, netdev, _ := strings.Cut(p, ":")
				j, ok := index[host]
				if !ok || j <= i {
					continue
				}
				for _, o := range rails[j] {
					if o.NetDev == netdev {
						rs = append(rs, fabric.Rail{Name: fmt.Sprintf("rail%d", len(rs)), A: end(i, r), B: end(j, o), Subnet: r.Subnet})
						planned = planned || r.Change != "" && !strings.HasPrefix(r.Change, "keep ") || o.Change != "" && !strings.HasPrefix(o.Change, "keep ")
					}
				}
			}
		}
	}
	env, notes := fabric.NCCLEnv(fs, rs, fabric.EnvOptions{BootstrapIf: opt.SocketIfname})
	if planned {
		// A GID appears with its address: one the plan adds has none yet.
		notes = slices.DeleteFunc(notes, func(n fabric.Note) bool { return n.ID == "bench.gid-missing" })
	}
	return env, notes
}

// envWhy explains each setting in the launcher environment file.
var envWhy = map[string]string{
	"NCCL_SOCKET_IFNAME":           "NCCL's bootstrap sockets: an interface every node has on one shared subnet (the nodes' own choice when it works); never eth0, which a Spark does not have",
	"NCCL_IB_HCA":                  "every addressed twin, in PCI order, the same list on every node: one twin alone gives about half the bandwidth",
	"NCCL_IB_GID_INDEX":            "the RoCE v2 IPv4 GID index every rail device shares (left out when it differs between devices, so NCCL picks per device)",
	"NCCL_IB_SUBNET_AWARE_ROUTING": "the cabling joins different ports (or a ring), so only subnet-aware routing pairs each HCA with the peer on its own subnet",
	"UCX_NET_DEVICES":              "UCX (MPI, vLLM/Ray) on the same RDMA devices as NCCL",
	"OMPI_MCA_btl_tcp_if_include":  "Open MPI's TCP transport on the bootstrap interface",
	"OMPI_MCA_oob_tcp_if_include":  "Open MPI's out-of-band channel on the bootstrap interface",
	"GLOO_SOCKET_IFNAME":           "PyTorch's Gloo rendezvous on the bootstrap interface",
}

// requiredNCCL lists the NCCL settings of env that /etc/nccl.conf must carry
// on this node: those whose value the node does not have yet and whose
// absence the doctor flags (warn or fail).
func requiredNCCL(n *facts.Node, env []fabric.Var) []fabric.Var {
	var out []fabric.Var
	base := severe(flagged(n))
	for _, v := range env {
		if !strings.HasPrefix(v.Name, "NCCL_") {
			continue
		}
		have, ok := n.NCCL.Env[v.Name]
		if !ok {
			have = n.NCCL.ConfFile[v.Name]
		}
		if have == v.Value {
			continue
		}
		if _, inEnv := n.NCCL.Env[v.Name]; inEnv {
			// The environment overrides /etc/nccl.conf: writing it there
			// changes nothing, and the finding's remedy is where it is set.
			continue
		}
		sim := cloneNode(n)
		sim.NCCL.ConfFile[v.Name] = v.Value
		if len(resolved(base, severe(flagged(sim)))) > 0 {
			out = append(out, v)
		}
	}
	return out
}

// renderEnv writes the launcher environment file: KEY=VALUE lines that
// `docker run --env-file`, `set -a; . FILE` and systemd EnvironmentFile= all read.
func renderEnv(env []fabric.Var) []byte {
	var b strings.Builder
	b.WriteString("# Written by sparkrig fix: cluster settings for launchers.\n")
	b.WriteString("#   docker run --env-file /etc/sparkrig/cluster.env ...\n")
	b.WriteString("#   set -a; . /etc/sparkrig/cluster.env; set +a\n")
	b.WriteString("#   (then mpirun -x NCCL_IB_HCA ..., torchrun, vllm)\n")
	for _, e := range env {
		// Values are single-quoted: the file is meant to be sourced by sh.
		fmt.Fprintf(&b, "\n%s%s=%s\n", commentWrap(envWhy[e.Name], 78), e.Name, shell.QuoteIfNeeded(e.Value))
	}
	return []byte(b.String())
}

// mergeNCCLConf sets fix's NCCL_* keys in /etc/nccl.conf, keeping every other
// line as it is: existing keys are replaced in place, missing ones appended.
func mergeNCCLConf(cur []byte, env []fabric.Var) []byte {
	want := map[string]string{}
	var order []string
	for _, e := range env {
		if strings.HasPrefix(e.Name, "NCCL_") {
			want[e.Name] = e.Value
			order = append(order, e.Name)
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
		out = append(out, "# Set by sparkrig fix (sparkrig doctor says why).")
		out = append(out, missing...)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}
