package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// healthySparkFacts returns the facts of the healthy DGX Spark tree, to be
// changed per case.
func healthySparkFacts(t *testing.T) *facts.Node {
	t.Helper()
	s, err := snapshot.Read(nodeTree("spark-healthy"))
	if err != nil {
		t.Fatal(err)
	}
	return facts.FromSnapshot(s)
}

// TestChecksOnChangedSpark covers the problems no generated pitfall tree
// shows: each change raises exactly its finding, on its subject.
func TestChecksOnChangedSpark(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name   string
		change func(n *facts.Node)
		want   []string
	}{
		{"NCCL_IB_HCA names an absent device", func(n *facts.Node) { n.NCCL.Env["NCCL_IB_HCA"] = "mlx5_0,mlx5_1" },
			[]string{"nccl.ib-hca fail NCCL_IB_HCA"}},
		{"NCCL_IB_HCA in nccl.conf leaves out a twin", func(n *facts.Node) {
			delete(n.NCCL.Env, "NCCL_IB_HCA")
			n.NCCL.ConfFile["NCCL_IB_HCA"] = "=rocep1s0f1"
		}, []string{"nccl.ib-hca warn NCCL_IB_HCA"}},
		{"NCCL_IB_HCA exclusion list", func(n *facts.Node) { n.NCCL.Env["NCCL_IB_HCA"] = "^mlx5_9" }, []string{}},
		{"small rmem_max", func(n *facts.Node) { n.Sysctls["net.core.rmem_max"] = "212992" },
			[]string{"net.core-buffers warn net.core.rmem_max"}},
		{"small tcp_wmem maximum", func(n *facts.Node) { n.Sysctls["net.ipv4.tcp_wmem"] = "4096 16384 4194303" },
			[]string{"net.tcp-buffers warn net.ipv4.tcp_wmem"}},
		{"memlock 8 MiB", func(n *facts.Node) { n.Limits.MemlockKiB = i64(8192) },
			[]string{"os.memlock warn limits"}},
		{"addresses set by hand", func(n *facts.Node) { n.NetConfig = nil },
			[]string{"spark.addr-persisted warn enP2p1s0f1np1", "spark.addr-persisted warn enp1s0f1np1"}},
		{"configuration unreadable", func(n *facts.Node) {
			n.NetConfig = nil
			n.Sources[facts.SrcNetConfig] = facts.SourceStatus{Status: "ok", Detail: facts.NetConfigPartial + "/etc/netplan/40-cx7.yaml"}
		}, []string{"spark.addr-persisted not-evaluated enP2p1s0f1np1", "spark.addr-persisted not-evaluated enp1s0f1np1"}},
		{"Ubuntu 22.04", func(n *facts.Node) { n.OS.VersionID = "22.04" }, []string{"spark.os warn os"}},
		{"no RoCE v2 GID at all (and the pinned index 3 then points nowhere)", func(n *facts.Node) {
			p := &n.RDMA[rdmaIndex(t, n, "rocep1s0f1")].Ports[0]
			p.GIDs = p.GIDs[:3]
		}, []string{"nccl.gid-index warn NCCL_IB_GID_INDEX", "spark.roce-gid warn rocep1s0f1/1"}},
		// The field's GID drift: the RoCE v2 IPv4 GID at index 4 on one HCA
		// is not a problem by itself...
		{"RoCE v2 IPv4 GID at index 4, nothing pinned", func(n *facts.Node) {
			moveGID(t, n, "rocep1s0f1", 3, 4)
			delete(n.NCCL.Env, "NCCL_IB_GID_INDEX")
		}, []string{}},
		// ...but it is where NCCL_IB_GID_INDEX pins 3.
		{"RoCE v2 IPv4 GID at index 4, index 3 pinned", func(n *facts.Node) { moveGID(t, n, "rocep1s0f1", 3, 4) },
			[]string{"nccl.gid-index warn NCCL_IB_GID_INDEX"}},
		{"NCCL_IB_GID_INDEX set empty (parses as 0)", func(n *facts.Node) { n.NCCL.Env["NCCL_IB_GID_INDEX"] = "" },
			[]string{"nccl.gid-index warn NCCL_IB_GID_INDEX"}},
		{"twin without its RDMA device", func(n *facts.Node) { n.NetDev("enp1s0f0np0").RDMADev = "" },
			[]string{"spark.cx7-present warn enp1s0f0np0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := healthySparkFacts(t)
			tt.change(n)
			fs, _ := Run(n, ProfileSpark)
			if d := cmp.Diff(tt.want, sortedStrings(problemSubjects(fs))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func rdmaIndex(t *testing.T, n *facts.Node, name string) int {
	t.Helper()
	for i, r := range n.RDMA {
		if r.Name == name {
			return i
		}
	}
	t.Fatalf("no RDMA device %s", name)
	return -1
}

// moveGID moves a port's GID from one index to another, as an interface or
// firmware event does.
func moveGID(t *testing.T, n *facts.Node, dev string, from, to int) {
	p := &n.RDMA[rdmaIndex(t, n, dev)].Ports[0]
	for i := range p.GIDs {
		if p.GIDs[i].Index == to {
			p.GIDs[i].Type, p.GIDs[i].IPv4, p.GIDs[i].GID = "", "", "0000:0000:0000:0000:0000:0000:0000:0000"
		}
	}
	for i := range p.GIDs {
		if p.GIDs[i].Index == from {
			p.GIDs[i].Index = to
			return
		}
	}
	t.Fatalf("%s has no GID at index %d", dev, from)
}
