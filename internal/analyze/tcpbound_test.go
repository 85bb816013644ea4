package analyze

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// fieldTrain reads a case of the field corpus's training set.
func fieldTrain(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/field/train/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The GKE A3 paste (rank 0's log of a 16-GPU two-node all-reduce, cut
// before its NET channels and its "comm … nNodes" line): the "NVLS Head
// 0: 0 8" line says two nodes, so the socket network carries data between
// them and the run is TCP-bound.
func TestNVLSHeadTwoNodesSocketFails(t *testing.T) {
	a := analyseText(fieldTrain(t, "306_gke_a3_high_no_tcpx_nccl_net_socket_eth0_transport.txt"))
	if got := topCause(a); got != "nccl.net-socket" {
		t.Fatalf("first %q: %+v", got, a.Flags)
	}
	for _, f := range a.Flags {
		if f.ID == "nccl.net-socket" && (f.Severity != report.Fail || !strings.Contains(f.Evidence, `"NET/IB : No device found."`)) {
			t.Errorf("%+v", f)
		}
	}
}

// socketLog writes one host's NCCL startup on the socket network with
// local ranks, its ring over nodes*local ranks, its P2P connections, and
// where heads is true NCCL's "NVLS Head" line (one head rank per node).
func socketLog(nodes, local int, heads bool) []string {
	p := "gpu-node-0:1596:2150 [0] NCCL INFO "
	out := []string{
		p + "NCCL version 2.22.3+cuda12.6",
		p + "NET/IB : No device found.",
		p + "NET/Socket : Using [0]eth0:10.128.0.52<0>",
		p + "Using network Socket",
	}
	ring := make([]string, 0, nodes*local)
	for r := range nodes * local {
		ring = append(ring, fmt.Sprint(r))
	}
	out = append(out, p+"Channel 00/02 :    "+strings.Join(ring, " "))
	if heads {
		h := make([]string, nodes)
		for n := range nodes {
			h[n] = fmt.Sprintf("%2d", n*local)
		}
		out = append(out, p+"NVLS Head  0: "+strings.Join(h, " "))
	}
	for r := 1; r < local; r++ {
		out = append(out, fmt.Sprintf("%sChannel 00/0 : %d[%d] -> %d[%d] via P2P/CUMEM", p, r-1, r-1, r, r))
	}
	return out
}

// On one host's socket log, the NVLS Head line of any node count from 2 to
// 19, behind any prefix, makes the socket network a failure: inter-node
// traffic over TCP. Without it (one host, no NET channel) the choice is
// only noted; a "comm … nNodes 1" line wins over nothing, and a line of 20
// heads (NCCL prints at most 20) gives no count.
func TestNVLSHeadNodesAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(306, 2))
	for range 40 {
		nodes, local := 2+r.IntN(18), 2+r.IntN(7)
		pre := anyPrefix(r)
		a := analyseText(prefixLines(strings.Join(socketLog(nodes, local, true), "\n")+"\n", pre))
		if got := firstFail(a); got != "nccl.net-socket" {
			t.Errorf("%d nodes of %d behind %q: first fail %q", nodes, local, pre, got)
		}
		if one := analyseText(prefixLines(strings.Join(socketLog(nodes, local, false), "\n")+"\n", pre)); hasFlag(one, "nccl.net-socket") {
			t.Errorf("no NVLS Head, %d ranks behind %q: raised", nodes*local, pre)
		}
	}
	if a := analyseText(strings.Join(socketLog(20, 2, true), "\n") + "\n"); hasFlag(a, "nccl.net-socket") {
		t.Errorf("20 heads read as a count: %+v", a.Flags)
	}
}

// The ROCm/aws-ofi-nccl paste whose plugin printed its fallback as WARN
// lines: the tcp provider is named, ahead of the count of WARN lines.
func TestOFITCPProviderWarnLines(t *testing.T) {
	a := analyseText(fieldTrain(t, "316_rccl_aws_ofi_nccl_libfabric_without_verbs_tcp_provider.txt"))
	if got := topCause(a); got != "nccl.ofi-tcp-provider" {
		t.Fatalf("first %q: %+v", got, a.Flags)
	}
	for _, f := range a.Flags {
		if f.ID == "nccl.ofi-tcp-provider" && f.Evidence != `"NET/OFI Selected provider is tcp, fabric is 10.224.0.0/12 (found 8 nics)"` {
			t.Errorf("evidence %q", f.Evidence)
		}
	}
}

// Any rank count, any prefix: the plugin's WARN lines naming a socket
// provider rank it first, a fail once the log shows other hosts; an RDMA
// provider in the same lines raises nothing of it.
func TestOFITCPProviderWarnAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(316, 8))
	for range 30 {
		hosts := 1 + r.IntN(3)
		ranks := hosts * (1 + r.IntN(8))
		pre := anyPrefix(r)
		prov := []string{"tcp", "tcp;ofi_rxm", "sockets"}[r.IntN(3)]
		text := func(prov string) string {
			var b strings.Builder
			for i := range ranks {
				p := fmt.Sprintf("node-%d:%d:%d [%d] NCCL WARN ", i%hosts, 1000+i, 1100+i, i%8)
				b.WriteString(p + "NET/OFI No eligible providers were found\n")
				fmt.Fprintf(&b, "%sNET/OFI Selected provider is %s, fabric is 10.224.0.0/12 (found %d nics)\n", p, prov, 1+r.IntN(8))
			}
			return prefixLines(b.String(), pre)
		}
		a := analyseText(text(prov))
		if got := topCause(a); got != "nccl.ofi-tcp-provider" {
			t.Errorf("%s, %d hosts, %d ranks behind %q: first %q", prov, hosts, ranks, pre, got)
		}
		want := report.Warn
		if hosts > 1 {
			want = report.Fail
		}
		for _, f := range a.Flags {
			if f.ID == "nccl.ofi-tcp-provider" && f.Severity != want {
				t.Errorf("%d hosts: %s, want %s", hosts, f.Severity, want)
			}
		}
		if a := analyseText(text("verbs;ofi_rxm")); hasFlag(a, "nccl.ofi-tcp-provider") {
			t.Errorf("verbs raised it behind %q", pre)
		}
	}
}

// The TCP-bound findings are raised on the fixtures that show a socket
// network or provider between nodes, and on no other.
func TestTCPBoundNoneRaisedOnOtherFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.net-socket", "nccl.ofi-tcp-provider"}, map[string]bool{
		"field/train/160_p4d_docker_efa_not_passed_ofi_tcp_provider.txt":                        true,
		"field/train/184_eks_p5_bad_ami_gdr_unavailable_socket_fallback.txt":                    true,
		"field/train/215_ungrouped_send_recv_socket_af_unix_internal_error.txt":                 true,
		"field/train/22_ansi_residue_prefix_veth_in_socket_list.txt":                            true,
		"field/train/280_spark_pair_three_nics_same_subnet_socket_allreduce_hang.txt":           true,
		"field/train/283_ib_hca_set_to_netdev_name_falls_back_to_socket.txt":                    true,
		"field/train/306_gke_a3_high_no_tcpx_nccl_net_socket_eth0_transport.txt":                true,
		"field/train/328_aws_g5_ena_instead_of_efa_libfabric_tcp_provider.txt":                  true,
		"field/train/329_polaris_128node_aws_ofi_nccl_silent_tcp_provider_fallback_gdr_off.txt": true,
		"field/train/316_rccl_aws_ofi_nccl_libfabric_without_verbs_tcp_provider.txt":            true,
		"field/train/69_dgxa100_net_socket_channels_bridge_ifaces.txt":                          true,
		"field-cases/160_p4d_docker_efa_not_passed_ofi_tcp_provider.txt":                        true,
		"field-cases/69_dgxa100_net_socket_channels_bridge_ifaces.txt":                          true,
		"nccl-logs/03_net-socket_fallback_hpcx-ibext_p2p-ipc-read.txt":                          true,
		"nccl-logs-launchers/ib-disabled-by-environment.txt":                                    true,
		"pasted/51_indented_launcher_tags_socket_2nodes.txt":                                    true,
		"field/train/380_gke_a3high_3node_no_tcpx_nccl_socket_gvnic_24gpu.txt":                  true,
	})
}
