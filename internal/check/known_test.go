package check

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
)

func TestKnownIssuesOnANode(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	tests := []struct {
		name   string
		change func(n *facts.Node)
		want   []string
	}{
		{"NCCL 2.28.9 on aarch64", func(n *facts.Node) { n.NCCL.Version = "2.28.9" },
			[]string{"warn nccl-aarch64-proxy-op-leak: NCCL 2.28.9, on aarch64"}},
		{"NCCL 2.28.9 on x86_64: not affected", func(n *facts.Node) { n.NCCL.Version, n.OS.Arch = "2.28.9", "x86_64" }, nil},
		{"NCCL 2.29.3: fixed", func(n *facts.Node) { n.NCCL.Version = "2.29.3" }, nil},
		// /proc/meminfo as MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark #259 quotes it
		{"KHO scratch counted as CMA", func(n *facts.Node) { n.Memory.CmaTotalBytes, n.Memory.CmaFreeBytes = u(0), u(940604<<10) },
			[]string{"fail kernel-kho-cma: CmaTotal 0 kB, CmaFree 940604 kB"}},
		// the kernel's AER line format (drivers/pci/pcie/aer.c), as in
		// MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark #146
		{"fatal AER", func(n *facts.Node) {
			n.KernelLog.AER = []facts.LogLine{{Line: "[ 8123.456789] pcieport 0000:00:00.0: AER: Uncorrectable (Fatal) error message received from 0000:00:00.0"}}
		}, []string{"fail cx7-aer-fatal: kernel log: [ 8123.456789] pcieport 0000:00:00.0: AER: Uncorrectable (Fatal) error message received from 0000:00:00.0"}},
		// kernel releases as the reports give them (MiaAI-Lab GLM-5.3 #152:
		// "6.17.0-1031-nvidia #31-Ubuntu"; luxingcom #1: "7.0.0-1019-nvidia")
		{"6.17.0-1031", func(n *facts.Node) { n.OS.Kernel = "6.17.0-1031-nvidia" },
			[]string{"warn kernel-6.17.0-1031-host-reset: kernel 6.17.0-1031-nvidia"}},
		{"7.0.0-1019 without kho=off", func(n *facts.Node) { n.OS.Kernel, n.OS.Cmdline = "7.0.0-1019-nvidia", "ro quiet splash" },
			[]string{"fail kernel-7.0-kho-enomem: kernel 7.0.0-1019-nvidia, no kho=off on the kernel command line"}},
		{"7.0.0-1019 with kho=off", func(n *facts.Node) { n.OS.Kernel, n.OS.Cmdline = "7.0.0-1019-nvidia", "ro quiet kho=off" }, nil},
		{"7.0.0-31 and its tell: one finding", func(n *facts.Node) {
			n.OS.Kernel, n.OS.Cmdline = "7.0.0-31-generic", "ro quiet splash"
			n.Memory.CmaTotalBytes, n.Memory.CmaFreeBytes = u(32768<<10), u(9751552<<10)
		}, []string{"fail kernel-kho-cma: CmaTotal 32768 kB, CmaFree 9751552 kB"}},
		{"7.0.0-30: not listed", func(n *facts.Node) { n.OS.Kernel, n.OS.Cmdline = "7.0.0-30-generic", "ro quiet splash" }, nil},
		{"no command line captured: not judged", func(n *facts.Node) { n.OS.Kernel = "7.0.0-1019-nvidia" }, nil},
		{"NCCL 2.30.4 without the workaround", func(n *facts.Node) { n.NCCL.Version = "2.30.4" },
			[]string{"warn nccl-2.30.4-nvls-no-nvlink: NCCL 2.30.4, on aarch64, NCCL_NVLS_ENABLE unset"}},
		{"NCCL 2.30.4 with NCCL_NVLS_ENABLE=0", func(n *facts.Node) { n.NCCL.Version, n.NCCL.Env["NCCL_NVLS_ENABLE"] = "2.30.4", "0" }, nil},
		{"NCCL 2.30.4 with NVLS on in nccl.conf", func(n *facts.Node) { n.NCCL.Version, n.NCCL.ConfFile["NCCL_NVLS_ENABLE"] = "2.30.4", "1" },
			[]string{"warn nccl-2.30.4-nvls-no-nvlink: NCCL 2.30.4, on aarch64, NCCL_NVLS_ENABLE=1 (/etc/nccl.conf)"}},
		// sparkrun #135: the head's port-0 devices on a node cabled on port 1
		{"NCCL_IB_HCA from another node", func(n *facts.Node) {
			n.NCCL.Env["NCCL_IB_HCA"] = "rocep1s0f0,roceP2p1s0f0"
			n.RDMA = sparkRDMA("rocep1s0f1", "roceP2p1s0f1")
		}, []string{"fail nccl-env-from-another-node: NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0 (environment) lists only devices that are down; active here: rocep1s0f1, roceP2p1s0f1"}},
		{"NCCL_IB_HCA of this node", func(n *facts.Node) {
			n.NCCL.Env["NCCL_IB_HCA"] = "rocep1s0f1,roceP2p1s0f1"
			n.RDMA = sparkRDMA("rocep1s0f1", "roceP2p1s0f1")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &facts.Node{OS: facts.OSInfo{Arch: "aarch64"}, NCCL: facts.NCCL{Version: "2.30.7", Env: map[string]string{}, ConfFile: map[string]string{}}}
			tt.change(n)
			var got []string
			for _, f := range knownIssues.Run(n) {
				got = append(got, string(f.Severity)+" "+f.Subject+": "+f.Observed)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// sparkRDMA is a DGX Spark's four RoCE functions, the named ones ACTIVE.
func sparkRDMA(active ...string) []facts.RDMADev {
	var out []facts.RDMADev
	for _, name := range []string{"rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"} {
		st := "DOWN"
		if slices.Contains(active, name) {
			st = "ACTIVE"
		}
		out = append(out, facts.RDMADev{Name: name, Ports: []facts.RDMAPort{{Num: 1, State: st}}})
	}
	return out
}
