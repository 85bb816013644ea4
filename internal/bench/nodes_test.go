package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// The repository's node snapshot trees (testdata/nodes) are single Sparks,
// each showing one pitfall. peerOf makes the other end of the cable from
// the same tree: the same node with the next address on every subnet (and
// the GIDs that carry them), so a pair shows the pitfall on both ends.
var peerAddrs = strings.NewReplacer("192.168.1.50", "192.168.1.51",
	"192.168.100.11", "192.168.100.12", "c0a8:640b", "c0a8:640c",
	"192.168.100.17", "192.168.100.18", "c0a8:6411", "c0a8:6412",
	"192.168.200.17", "192.168.200.18", "c0a8:c811", "c0a8:c812",
)

func snapshotPair(t *testing.T, tree string) []*facts.Node {
	t.Helper()
	s, err := snapshot.Read(filepath.Join("..", "..", "testdata", "nodes", tree+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	a := facts.FromSnapshot(s)
	a.Host = "spark-a"
	peer := &snapshot.Snapshot{Manifest: s.Manifest, Data: map[string][]byte{}}
	for k, v := range s.Data {
		peer.Data[k] = []byte(peerAddrs.Replace(string(v)))
	}
	b := facts.FromSnapshot(peer)
	b.Host = "spark-b"
	return []*facts.Node{a, b}
}

func envMap(env []Var) map[string]string {
	m := map[string]string{}
	for _, v := range env {
		m[v.Name] = v.Value
	}
	return m
}

func TestNCCLEnvFromNodeTrees(t *testing.T) {
	// The healthy tree bootstraps over its management port (its environment
	// says NCCL_SOCKET_IFNAME=enP7s7, which both nodes have on one subnet):
	// the bench keeps that choice.
	healthy := map[string]string{
		"NCCL_SOCKET_IFNAME": "enP7s7", "NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1",
		"UCX_NET_DEVICES": "rocep1s0f1:1,roceP2p1s0f1:1", "OMPI_MCA_btl_tcp_if_include": "enP7s7",
		"OMPI_MCA_oob_tcp_if_include": "enP7s7", "GLOO_SOCKET_IFNAME": "enP7s7", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range healthy {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		tree  string
		env   map[string]string
		rails int
		notes []string
	}{
		{"spark-healthy", healthy, 2, []string{}},
		{"spark-twin-unaddressed", with("NCCL_IB_HCA", "rocep1s0f1"), 1,
			// The nodes' environment still names the unaddressed twin in
			// NCCL_IB_HCA: their own jobs would run it on GID 0.
			[]string{"bench.twin-unused@spark-a", "bench.twin-unused@spark-b", "bench.node-nccl-setting@spark-a", "bench.node-nccl-setting@spark-b"}},
		{"spark-twins-same-subnet", healthy, 2, []string{"bench.twins-same-subnet@spark-a"}},
		// eth0 does not exist on a Spark: the bench bootstraps over the
		// first rail instead, and says what the nodes' own jobs will hit.
		{"spark-socket-ifname-eth0", map[string]string{
			"NCCL_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1",
			"UCX_NET_DEVICES": "rocep1s0f1:1,roceP2p1s0f1:1", "OMPI_MCA_btl_tcp_if_include": "enp1s0f1np1",
			"OMPI_MCA_oob_tcp_if_include": "enp1s0f1np1", "GLOO_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
		}, 2, []string{"bench.node-nccl-setting@spark-a", "bench.node-nccl-setting@spark-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			nodes := snapshotPair(t, tt.tree)
			rails, railNotes := Rails(nodes, nil)
			rails = dataRails(rails)
			env, notes := NCCLEnv(nodes, rails, EnvOptions{})
			if tt.tree == "spark-twin-unaddressed" {
				delete(tt.env, "UCX_NET_DEVICES")
				tt.env["UCX_NET_DEVICES"] = "rocep1s0f1:1"
			}
			if d := cmp.Diff(tt.env, envMap(env)); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
			if len(rails) != tt.rails {
				t.Errorf("%d rails, want %d: %v", len(rails), tt.rails, rails)
			}
			if d := cmp.Diff(tt.notes, noteIDs(append(railNotes, notes...))); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestNoNCCLWithoutGPU plans bench on two copies of the real GPU-less VM
// snapshot: NCCL is left out with a note naming the nodes, not planned to fail.
func TestNoNCCLWithoutGPU(t *testing.T) {
	nodes := snapshotPair(t, "no-gpu-vm")
	p, err := NewPlan(nodes, Options{Kinds: []string{KindNCCL}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 0 {
		t.Errorf("planned %d steps on nodes without a GPU", len(p.Steps))
	}
	var got string
	for _, n := range p.Notes {
		if n.ID == "bench.no-gpu" {
			got = n.Detail
		}
	}
	if want := "NCCL left out: spark-a, spark-b has no NVIDIA GPU (the doctor's no-gpu profile), and a collective needs one on every node"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
