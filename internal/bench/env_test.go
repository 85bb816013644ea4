package bench

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
)

func noteIDs(ns []Note) []string {
	ids := []string{}
	for _, n := range ns {
		ids = append(ids, n.ID+"@"+n.Host)
	}
	return ids
}

func TestNCCLEnv(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*facts.Node
		want  []Var
		notes []string
	}{{
		name:  "healthy pair: both twins of port 1, same order, GID 3",
		nodes: healthyPair(),
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "NCCL_IB_HCA", Value: "rocep1s0f1,roceP2p1s0f1"},
			{Name: "UCX_NET_DEVICES", Value: "rocep1s0f1:1,roceP2p1s0f1:1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{},
	}, {
		name: "only one twin addressed: half bandwidth, the other twin left out and named",
		nodes: []*facts.Node{
			sparkNode("spark-1", []int{0}, map[string]string{"enp1s0f0np0": "192.168.100.10/24"}),
			sparkNode("spark-2", []int{0}, map[string]string{"enp1s0f0np0": "192.168.100.11/24"}),
		},
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f0np0"},
			{Name: "NCCL_IB_HCA", Value: "rocep1s0f0"},
			{Name: "UCX_NET_DEVICES", Value: "rocep1s0f0:1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enp1s0f0np0"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enp1s0f0np0"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enp1s0f0np0"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{"bench.twin-unused@spark-1", "bench.twin-unused@spark-2"},
	}, {
		name: "different ports cabled: every device named in PCI order, subnet-aware routing",
		nodes: []*facts.Node{
			sparkNode("spark-1", []int{0}, map[string]string{"enp1s0f0np0": "192.168.100.10/24", "enP2p1s0f0np0": "192.168.101.10/24"}),
			sparkNode("spark-2", []int{1}, map[string]string{"enp1s0f1np1": "192.168.100.11/24", "enP2p1s0f1np1": "192.168.101.11/24"}),
		},
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f0np0,enp1s0f1np1"},
			{Name: "NCCL_IB_HCA", Value: "rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1"},
			{Name: "UCX_NET_DEVICES", Value: "rocep1s0f0:1,rocep1s0f1:1,roceP2p1s0f0:1,roceP2p1s0f1:1"},
			{Name: "NCCL_IB_SUBNET_AWARE_ROUTING", Value: "1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enp1s0f0np0,enp1s0f1np1"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enp1s0f0np0,enp1s0f1np1"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enp1s0f0np0"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{"bench.hca-differs@"},
	}, {
		name: "three-node ring: bootstrap on the shared management network, subnet-aware routing",
		nodes: []*facts.Node{
			sparkNode("spark-1", []int{0, 1}, map[string]string{"enp1s0f0np0": "192.168.10.1/24", "enP2p1s0f0np0": "192.168.11.1/24", "enp1s0f1np1": "192.168.30.1/24", "enP2p1s0f1np1": "192.168.31.1/24"}),
			sparkNode("spark-2", []int{0, 1}, map[string]string{"enp1s0f1np1": "192.168.10.2/24", "enP2p1s0f1np1": "192.168.11.2/24", "enp1s0f0np0": "192.168.20.2/24", "enP2p1s0f0np0": "192.168.21.2/24"}),
			sparkNode("spark-3", []int{0, 1}, map[string]string{"enp1s0f1np1": "192.168.20.3/24", "enP2p1s0f1np1": "192.168.21.3/24", "enp1s0f0np0": "192.168.30.3/24", "enP2p1s0f0np0": "192.168.31.3/24"}),
		},
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enP7s7"},
			{Name: "NCCL_IB_HCA", Value: "rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1"},
			{Name: "UCX_NET_DEVICES", Value: "rocep1s0f0:1,rocep1s0f1:1,roceP2p1s0f0:1,roceP2p1s0f1:1"},
			{Name: "NCCL_IB_SUBNET_AWARE_ROUTING", Value: "1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enP7s7"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enP7s7"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enP7s7"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{},
	}, {
		name: "second twin without its IPv4 GID: NCCL would use GID 0 there",
		nodes: func() []*facts.Node {
			ns := healthyPair()
			ns[1].RDMA[3].Ports[0].GIDs = ns[1].RDMA[3].Ports[0].GIDs[:2]
			return ns
		}(),
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "NCCL_IB_HCA", Value: "rocep1s0f1,roceP2p1s0f1"},
			{Name: "UCX_NET_DEVICES", Value: "rocep1s0f1:1,roceP2p1s0f1:1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{"bench.gid-missing@"},
	}, {
		name: "no RDMA port active: sockets, and the run says so",
		nodes: []*facts.Node{
			sparkNode("spark-1", nil, map[string]string{"enp1s0f1np1": "192.168.100.10/24"}),
			sparkNode("spark-2", nil, map[string]string{"enp1s0f1np1": "192.168.100.11/24"}),
		},
		want: []Var{
			{Name: "NCCL_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "UCX_NET_DEVICES", Value: "enp1s0f1np1"},
			{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enp1s0f1np1"},
			{Name: "GLOO_SOCKET_IFNAME", Value: "enp1s0f1np1"},
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
		},
		notes: []string{"bench.no-rdma-rail@"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rails, _ := Rails(tt.nodes, nil)
			got, notes := NCCLEnv(tt.nodes, dataRails(rails), EnvOptions{})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.notes, noteIDs(notes)); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

func TestNCCLEnvBootstrapOverride(t *testing.T) {
	nodes := healthyPair()
	rails, _ := Rails(nodes, nil)
	env, _ := NCCLEnv(nodes, dataRails(rails), EnvOptions{BootstrapIf: "enP7s7"})
	want := []Var{
		{Name: "NCCL_SOCKET_IFNAME", Value: "enP7s7"},
		{Name: "NCCL_IB_HCA", Value: "rocep1s0f1,roceP2p1s0f1"},
		{Name: "UCX_NET_DEVICES", Value: "rocep1s0f1:1,roceP2p1s0f1:1"},
		{Name: "OMPI_MCA_btl_tcp_if_include", Value: "enP7s7"},
		{Name: "OMPI_MCA_oob_tcp_if_include", Value: "enP7s7"},
		{Name: "GLOO_SOCKET_IFNAME", Value: "enP7s7"},
		{Name: "NCCL_DEBUG", Value: "INFO"},
		{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"},
	}
	if d := cmp.Diff(want, env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
}

func TestRailsHealthyPair(t *testing.T) {
	rails, notes := Rails(healthyPair(), nil)
	rails = dataRails(rails)
	want := []Rail{
		{Name: "rail0", Subnet: "192.168.100.0/24",
			A: Endpoint{Host: "spark-1", NetDev: "enp1s0f1np1", Addr: "192.168.100.10", RDMADev: "rocep1s0f1", Port: 1, GIDIndex: 3, PCIAddr: "0000:01:00.1", SpeedMbps: 200000},
			B: Endpoint{Host: "spark-2", NetDev: "enp1s0f1np1", Addr: "192.168.100.11", RDMADev: "rocep1s0f1", Port: 1, GIDIndex: 3, PCIAddr: "0000:01:00.1", SpeedMbps: 200000}},
		{Name: "rail1", Subnet: "192.168.101.0/24",
			A: Endpoint{Host: "spark-1", NetDev: "enP2p1s0f1np1", Addr: "192.168.101.10", RDMADev: "roceP2p1s0f1", Port: 1, GIDIndex: 3, PCIAddr: "0002:01:00.1", SpeedMbps: 200000},
			B: Endpoint{Host: "spark-2", NetDev: "enP2p1s0f1np1", Addr: "192.168.101.11", RDMADev: "roceP2p1s0f1", Port: 1, GIDIndex: 3, PCIAddr: "0002:01:00.1", SpeedMbps: 200000}},
	}
	if d := cmp.Diff(want, rails); d != "" {
		t.Errorf("rails (-want +got):\n%s", d)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
}

// NCCL_IB_GID_INDEX is pinned only where a node's NCCL is older than 2.21
// (which picks the RoCE v2 GID itself), and then only when every device
// has it at the same index.
func TestGIDIndexPinnedOnlyForOldNCCL(t *testing.T) {
	nodes := healthyPair()
	nodes[1].NCCL.Version = "2.19.3"
	rails, _ := Rails(nodes, nil)
	env, _ := NCCLEnv(nodes, dataRails(rails), EnvOptions{})
	if !slices.Contains(env, Var{Name: "NCCL_IB_GID_INDEX", Value: "3"}) {
		t.Errorf("NCCL 2.19.3 on spark-2: env lacks NCCL_IB_GID_INDEX=3: %v", env)
	}
	nodes[1].NCCL.Version = "2.28.9"
	env, _ = NCCLEnv(nodes, dataRails(rails), EnvOptions{})
	if slices.ContainsFunc(env, func(v Var) bool { return v.Name == "NCCL_IB_GID_INDEX" }) {
		t.Errorf("NCCL 2.28.9: env pins the GID index: %v", env)
	}
}
