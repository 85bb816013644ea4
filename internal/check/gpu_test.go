package check

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// h200 returns the facts of the real 2× H200 snapshot, to be changed per case.
func h200(t *testing.T) *facts.Node {
	t.Helper()
	s, err := snapshot.Read(nodeTree("gpu-h200x2"))
	if err != nil {
		t.Fatal(err)
	}
	return facts.FromSnapshot(s)
}

func TestGPUChecksOnChangedH200(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	ip := func(v int) *int { return &v }
	tests := []struct {
		name   string
		change func(n *facts.Node)
		want   []string
	}{
		{"persistence off", func(n *facts.Node) { n.GPUs[1].Persistence = "Disabled" }, []string{"gpu.persistence warn GPU 1"}},
		{"MIG on", func(n *facts.Node) { n.GPUs[0].MIGMode = "Enabled" }, []string{"gpu.mig warn GPU 0"}},
		{"ECC off", func(n *facts.Node) { n.GPUs[0].ECCMode = "Disabled" }, []string{"gpu.ecc warn GPU 0"}},
		{"uncorrectable ECC", func(n *facts.Node) { n.GPUs[0].ECCUncorrectable = u(3) }, []string{"gpu.ecc warn GPU 0"}},
		{"remap pending", func(n *facts.Node) { n.GPUs[0].RemapPending = "Yes" }, []string{"gpu.remapped-rows warn GPU 0"}},
		{"remap failed", func(n *facts.Node) { n.GPUs[0].RemapFailure = "Yes" }, []string{"gpu.remapped-rows fail GPU 0"}},
		{"thermal slowdown", func(n *facts.Node) { n.GPUs[0].ThrottleReasons = []string{"hw_thermal_slowdown"} }, []string{"gpu.throttle warn GPU 0"}},
		{"Xid 79", func(n *facts.Node) {
			n.KernelLog.XIDs = []facts.XID{{Code: 79, PCIBus: "0000:18:00.0", Line: "NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus."}}
		}, []string{"gpu.xid fail kernel log"}},
		{"Xid 13", func(n *facts.Node) {
			n.KernelLog.XIDs = []facts.XID{{Code: 13, Line: "NVRM: Xid (PCI:0000:18:00): 13, Graphics SM Warp Exception"}}
		}, []string{"gpu.xid warn kernel log"}},
		{"RDMA NIC without nvidia_peermem", func(n *facts.Node) {
			n.RDMA = []facts.RDMADev{{Name: "mlx5_0", Ports: []facts.RDMAPort{{Num: 1, State: "ACTIVE", RateGbps: 400}}}}
		}, []string{"gpu.peermem warn node"}},
		{"RDMA NIC with nvidia_peermem", func(n *facts.Node) {
			n.RDMA = []facts.RDMADev{{Name: "mlx5_0", Ports: []facts.RDMAPort{{Num: 1, State: "ACTIVE", RateGbps: 400}}}}
			n.Modules = append(n.Modules, "nvidia_peermem")
		}, []string{}},
		{"NIC on a socket without GPU", func(n *facts.Node) {
			n.CPU.NUMANodes = 2
			n.GPUs[0].NUMANode, n.GPUs[1].NUMANode = ip(0), ip(0)
			n.RDMA = []facts.RDMADev{{Name: "mlx5_0", PCIAddr: "0000:c1:00.0", Ports: []facts.RDMAPort{{Num: 1, State: "ACTIVE", RateGbps: 400}}}}
			n.PCI = append(n.PCI, facts.PCIFunc{Addr: "0000:c1:00.0", NUMANode: ip(1)})
			n.Modules = append(n.Modules, "nvidia_peermem")
		}, []string{"numa.locality warn mlx5_0"}},
		{"RDMA port below its sibling", func(n *facts.Node) {
			n.RDMA = []facts.RDMADev{
				{Name: "mlx5_0", BoardID: "MT_0000000838", Ports: []facts.RDMAPort{{Num: 1, State: "ACTIVE", RateGbps: 400}}},
				{Name: "mlx5_1", BoardID: "MT_0000000838", Ports: []facts.RDMAPort{{Num: 1, State: "ACTIVE", RateGbps: 200}}},
			}
			n.Modules = append(n.Modules, "nvidia_peermem")
		}, []string{"rdma.ports warn mlx5_1/1"}},
		{"THP never", func(n *facts.Node) { n.Memory.THP = "never" }, []string{"os.thp warn memory"}},
		{"swap with swappiness 60", func(n *facts.Node) { n.Memory.SwapTotalBytes = u(8 << 30) }, []string{"os.swap warn memory"}},
		{"swap, swappiness not captured", func(n *facts.Node) {
			n.Memory.SwapTotalBytes = u(8 << 30)
			delete(n.Sysctls, "vm.swappiness")
		}, []string{"os.swap not-evaluated vm.swappiness"}},
		{"port range not captured", func(n *facts.Node) { delete(n.Sysctls, "net.ipv4.ip_local_port_range") },
			[]string{"net.port-range not-evaluated net.ipv4.ip_local_port_range"}},
		{"powersave governor", func(n *facts.Node) {
			n.CPU.Governors = []string{"powersave"}
			n.Sources[facts.SrcGovernor] = facts.SourceStatus{Status: "ok"}
		}, []string{"os.cpu-governor warn cpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := h200(t)
			n.Sources[facts.SrcGovernor] = facts.SourceStatus{Status: "ok"}
			n.CPU.Governors = []string{"performance"}
			tt.change(n)
			fs, _ := Run(n, ProfileGPU)
			if d := cmp.Diff(tt.want, problemSubjects(fs)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// problemSubjects returns "id severity subject" of every warn, fail and
// not-evaluated finding.
func problemSubjects(fs []report.Finding) []string {
	out := []string{}
	for _, f := range fs {
		if f.Severity.Rank() >= report.NotEvaluated.Rank() {
			out = append(out, f.ID+" "+string(f.Severity)+" "+f.Subject)
		}
	}
	return out
}

func TestNCCLListMatching(t *testing.T) {
	ex, exact, e := ncclList("^=docker0,lo")
	if !ex || !exact || !cmp.Equal(e, []string{"docker0", "lo"}) {
		t.Errorf("ncclList = %v %v %v", ex, exact, e)
	}
	if !ncclMatches("enp1s0f1", "enp1s0f1np1", false) || ncclMatches("enp1s0f1", "enp1s0f1np1", true) {
		t.Error("prefix vs exact matching")
	}
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
