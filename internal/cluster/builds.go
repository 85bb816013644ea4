package cluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// ncclBuilds compares the NCCL library each node's loader finds: nodes
// that report one version from binaries of different ELF build IDs run
// different NCCLs (known issue nccl-same-version-other-build).
func ncclBuilds(nodes []*facts.Node) []report.Finding {
	var issue *expect.KnownIssue
	ks, _ := expect.KnownIssues()
	for i := range ks {
		if ks[i].Match.NCCLBuildDiffers {
			issue = &ks[i]
		}
	}
	if issue == nil {
		return nil
	}
	// version -> build ID -> hosts
	byVersion := map[string]map[string][]string{}
	for _, n := range nodes {
		b, ok := loadedNCCL(n)
		if !ok {
			continue
		}
		v := n.NCCL.Version
		if v == "" {
			v = b.Version
		}
		if v == "" {
			continue
		}
		if byVersion[v] == nil {
			byVersion[v] = map[string][]string{}
		}
		byVersion[v][b.BuildID] = append(byVersion[v][b.BuildID], n.Host)
	}
	var versions []string
	for v, ids := range byVersion {
		if len(ids) > 1 {
			versions = append(versions, v)
		}
	}
	sort.Strings(versions)
	var out []report.Finding
	for _, v := range versions {
		var parts []string
		for id, hosts := range byVersion[v] {
			parts = append(parts, fmt.Sprintf("build ID %s on %s", id, strings.Join(hosts, ", ")))
		}
		sort.Strings(parts)
		f := check.KnownFinding(*issue, fmt.Sprintf("NCCL %s from %d builds: %s", v, len(parts), strings.Join(parts, "; ")))
		f.Subject = issue.ID
		out = append(out, f)
	}
	return out
}

// loadedNCCL is the libnccl.so.2 the node's loader finds (ldconfig's
// path), with its build ID.
func loadedNCCL(n *facts.Node) (facts.NCCLBuild, bool) {
	for _, b := range n.NCCL.Builds {
		if b.BuildID != "" && n.NCCL.Library != "" && (b.Path == n.NCCL.Library || b.Resolved == n.NCCL.Library) {
			return b, true
		}
	}
	return facts.NCCLBuild{}, false
}
