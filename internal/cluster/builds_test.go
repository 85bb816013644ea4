package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Two DGX Sparks that both report NCCL 2.28.9: the build IDs are the
// prefixes vllm-project/vllm #41725 quotes for DGX OS's apt libnccl2
// (c0db9360) and the pip wheel nvidia-nccl-cu13 (a7f420a1).
func TestNCCLBuildsAcrossNodes(t *testing.T) {
	node := func(host, lib, id string) *facts.Node {
		return &facts.Node{Host: host, NCCL: facts.NCCL{Version: "2.28.9", Library: lib,
			Builds: []facts.NCCLBuild{{Path: lib, Resolved: lib + ".2.28.9", Version: "2.28.9", BuildID: id}}}}
	}
	const apt = "/usr/lib/aarch64-linux-gnu/libnccl.so.2"
	tests := []struct {
		name  string
		nodes []*facts.Node
		want  []string
	}{
		{"same build", []*facts.Node{node("spark1", apt, "c0db9360"), node("spark2", apt, "c0db9360")}, nil},
		{"one version, two builds", []*facts.Node{node("spark1", apt, "c0db9360"), node("spark2", apt, "a7f420a1")},
			[]string{"warn nccl-same-version-other-build: NCCL 2.28.9 from 2 builds: build ID a7f420a1 on spark2; build ID c0db9360 on spark1"}},
		{"build ID unknown on one node", []*facts.Node{node("spark1", apt, "c0db9360"), node("spark2", apt, "")}, nil},
		{"different versions", []*facts.Node{node("spark1", apt, "c0db9360"), func() *facts.Node {
			n := node("spark2", apt, "a7f420a1")
			n.NCCL.Version = "2.29.7"
			return n
		}()}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, f := range ncclBuilds(tt.nodes) {
			got = append(got, string(f.Severity)+" "+f.Subject+": "+f.Observed)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}
