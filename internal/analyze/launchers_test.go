package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Public NCCL logs as users paste them: wrapped by their launcher, from one
// node, with RDMA turned off, healthy across nodes. Each file is read whole,
// framing included (its SOURCE header is a header, not evidence).
func TestNCCLLogsAsUsersPasteThem(t *testing.T) {
	tests := []struct {
		file     string
		hosts    []string
		flags    []string // analysis flags raised
		notFlags []string // flags that must not be raised
		shows    []string // parts of "what this log shows"
	}{
		{"pdsh-prefix_ibext-plugin.txt", []string{"rdma-gpu-train-worker-0"}, nil, []string{"nccl.net-socket"},
			[]string{"network IBext (NVIDIA's IB net plugin, RDMA) on mlx5_9:1/IB"}},
		{"cloudwatch-prefix_single-node-p2p.txt", []string{"algo-1"}, nil, []string{"nccl.net-socket"},
			[]string{"connections P2P 9", "one node (one host, algo-1, and no channel via NET): no network carries collective data"}},
		{"timestamp-label-prefix_ibext-v10-gdr.txt", nil, []string{"nccl.warn"}, []string{"nccl.net-socket"},
			[]string{"network IB (RDMA)", "GPUDirect RDMA in use", "connections NET/IB 2, P2P 1"}},
		{"ray-prefix_rxe.txt", []string{"master"}, []string{"nccl.warn"}, []string{"nccl.net-socket"},
			[]string{"NCCL 2.20.5+cuda12.4", "NET/IB devices rxe0:1/RoCE"}},
		{"ib-disabled-by-environment.txt", []string{"user"}, []string{"nccl.net-socket"}, nil,
			[]string{"network Socket (TCP)", "RDMA turned off by NCCL_IB_DISABLE=1"}},
		{"multi-node-ib-healthy.txt", []string{"dgxh100-4", "dgxh100-3"}, nil, []string{"nccl.net-socket", "nccl.warn"},
			[]string{"NCCL 2.19.3+cuda12.3", "network IB (RDMA) on mlx5_10:1/RoCE, mlx5_11:1/RoCE"}},
		{"ibext-v8-three-nodes.txt", []string{"bigo"}, nil, []string{"nccl.net-socket"},
			[]string{"network IBext_v8 (NVIDIA's IB net plugin, RDMA) on mlx5_2:1/RoCE, mlx5_3:1/RoCE, mlx5_0:1/RoCE, mlx5_1:1/RoCE", "3 ranks on 3 nodes"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata/nccl-logs-launchers", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res := Reader(tt.file, f, Options{})
			if res.Error != "" {
				t.Fatal(res.Error)
			}
			l := res.Data.NCCLLog
			if l == nil {
				t.Fatal("no NCCL log read")
			}
			if !slices.Equal(l.Hosts, tt.hosts) {
				t.Errorf("hosts %q, want %q", l.Hosts, tt.hosts)
			}
			var ids []string
			for _, fl := range res.Flags {
				ids = append(ids, fl.ID)
			}
			for _, id := range tt.flags {
				if !slices.Contains(ids, id) {
					t.Errorf("flags %q lack %s", ids, id)
				}
			}
			for _, id := range tt.notFlags {
				if slices.Contains(ids, id) {
					t.Errorf("flags %q include %s", ids, id)
				}
			}
			summary := ""
			for _, n := range res.Notes {
				if strings.HasPrefix(n, "what this log shows: ") {
					summary = n
				}
			}
			for _, s := range tt.shows {
				if !strings.Contains(summary, s) {
					t.Errorf("summary %q lacks %q", summary, s)
				}
			}
			for _, n := range res.Notes {
				if strings.Contains(n, "map[") || strings.Contains(n, "SOURCE") {
					t.Errorf("note shows a Go value or the framing: %q", n)
				}
			}
		})
	}
}

// A single-node log never gets "NCCL fell back to NET/Socket" as a cause:
// no network carries its data.
func TestSingleNodeLogRulesOutTheNetwork(t *testing.T) {
	p := parseFile(t, "testdata/nccl-logs-launchers/cloudwatch-prefix_single-node-p2p.txt")
	l := &p.NCCL.Log
	l.Network = "Socket" // even were it named
	causes := diagnose.Causes(diagnose.Input{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: "nccl-busbw", Ratio: 0.1,
		Verdict: report.VerdictCritical, Log: l})
	for _, c := range causes {
		if c.ID == "net-socket" && c.Likelihood != "ruled-out" {
			t.Errorf("net-socket %s: %q", c.Likelihood, c.Evidence)
		}
	}
}

// parseFile parses one input file whole, detecting its format.
func parseFile(t *testing.T, path string) Parsed {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Parse(f, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
