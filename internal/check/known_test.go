package check

import (
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
