package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// knownIssues matches the node against the known-issues data file: its
// NCCL version and architecture, its kernel log, its memory accounting.
// Cluster-wide entries (rings) are the cluster's to match.
var knownIssues = Check{
	ID: "known.issue", Title: "known issues of what the node runs",
	Run: func(n *facts.Node) []report.Finding {
		ks, err := expect.KnownIssues()
		if err != nil {
			return []report.Finding{{Severity: report.NotEvaluated, Subject: "known-issues", Observed: err.Error()}}
		}
		var out []report.Finding
		fixes := map[string]bool{}
		for _, k := range ks {
			if k.Match.NCCLBuildDiffers {
				if seen, ok := nodeNCCLBuildsDiffer(n); ok {
					out = append(out, KnownFinding(k, seen))
				}
				continue
			}
			if k.Match.ClusterOnly() {
				continue
			}
			// Two entries of one cause (a kernel release and its tell in
			// /proc/meminfo) share their fix: the first seen says it.
			if seen, ok := KnownIssueSeen(n, k); ok && !fixes[k.Fix] {
				fixes[k.Fix] = true
				out = append(out, KnownFinding(k, seen))
			}
		}
		return out
	},
}

// KnownIssueSeen reports whether a node shows a known issue, and what it saw.
func KnownIssueSeen(n *facts.Node, k expect.KnownIssue) (string, bool) {
	m := k.Match
	var seen []string
	if m.NCCLBelow != "" {
		v := n.NCCL.Version
		if v == "" || facts.CompareVersions(v, m.NCCLBelow) >= 0 {
			return "", false
		}
		seen = append(seen, "NCCL "+v)
	}
	if m.NCCLVersion != "" {
		if n.NCCL.Version != m.NCCLVersion {
			return "", false
		}
		seen = append(seen, "NCCL "+n.NCCL.Version)
	}
	if m.Arch != "" {
		if n.OS.Arch != m.Arch {
			return "", false
		}
		seen = append(seen, "on "+n.OS.Arch)
	}
	if len(m.Kernels) > 0 {
		if !m.KernelMatches(n.OS.Kernel) {
			return "", false
		}
		seen = append(seen, "kernel "+n.OS.Kernel)
	}
	if m.CmdlineLacks != "" {
		if n.OS.Cmdline == "" || slices.Contains(strings.Fields(n.OS.Cmdline), m.CmdlineLacks) {
			return "", false
		}
		seen = append(seen, "no "+m.CmdlineLacks+" on the kernel command line")
	}
	if m.HCAListedDown {
		hcas, ok := hcaListedDown(n)
		if !ok {
			return "", false
		}
		seen = append(seen, hcas)
	}
	if m.CmaFreeAboveTotal {
		t, f := n.Memory.CmaTotalBytes, n.Memory.CmaFreeBytes
		if t == nil || f == nil || *f <= *t {
			return "", false
		}
		seen = append(seen, fmt.Sprintf("CmaTotal %d kB, CmaFree %d kB", *t>>10, *f>>10))
	}
	if k.Log != nil {
		line := ""
		for _, l := range kernelLines(n) {
			if k.Log.MatchString(l) {
				line = l
				break
			}
		}
		if line == "" {
			return "", false
		}
		seen = append(seen, "kernel log: "+line)
	}
	if m.Env != "" {
		name, want, _ := strings.Cut(m.Env, "=")
		v, where, ok := ncclSetting(n, name)
		if !ok || strings.TrimSpace(v) != want {
			return "", false
		}
		seen = append(seen, m.Env+" ("+where+")")
	}
	if m.EnvNot != "" {
		name, want, _ := strings.Cut(m.EnvNot, "=")
		v, where, ok := ncclSetting(n, name)
		if ok && strings.TrimSpace(v) == want {
			return "", false
		}
		if ok {
			seen = append(seen, name+"="+v+" ("+where+")")
		} else {
			seen = append(seen, name+" unset")
		}
	}
	return strings.Join(seen, ", "), len(seen) > 0
}

// hcaListedDown reports a node whose NCCL_IB_HCA lists present devices
// none of which is active while another RDMA device is: the list was made
// for another node's cabling.
func hcaListedDown(n *facts.Node) (string, bool) {
	v, where, ok := ncclSetting(n, "NCCL_IB_HCA")
	if !ok {
		return "", false
	}
	exclude, exact, entries := ncclList(v)
	active := activeRDMA(n)
	if exclude || len(entries) == 0 || len(active) == 0 {
		return "", false
	}
	for _, e := range entries {
		dev, _, _ := strings.Cut(e, ":")
		found := false
		for _, r := range n.RDMA {
			if ncclMatches(dev, r.Name, exact) {
				found = true
				if slices.Contains(active, r.Name) {
					return "", false
				}
			}
		}
		if !found {
			return "", false // an absent device is nccl.ib-hca's to report
		}
	}
	return "NCCL_IB_HCA=" + v + " (" + where + ") lists only devices that are down; active here: " + strings.Join(active, ", "), true
}

// KnownFinding is the finding for a known issue seen on a node.
func KnownFinding(k expect.KnownIssue, seen string) report.Finding {
	sev := report.Warn
	if k.Severity == "fail" {
		sev = report.Fail
	}
	exp := "not affected"
	if k.Fixed != "" {
		exp = "the fix, in " + k.Fixed + " or later"
	}
	src := strings.Join(k.Sources, "; ")
	if k.Status == "reported" {
		src = "reported: " + src
	}
	action := report.ActionRun
	if k.Action != "" {
		action = report.Action(k.Action)
	}
	return report.Finding{ID: "known.issue", Severity: sev, Subject: k.ID, Title: k.Title, Observed: seen, Expected: exp,
		Why: k.Symptom, Remedy: report.Manual(action, k.Fix), Source: src}
}

func kernelLines(n *facts.Node) []string {
	var out []string
	for _, x := range n.KernelLog.XIDs {
		out = append(out, x.Line)
	}
	for _, l := range n.KernelLog.AER {
		out = append(out, l.Line)
	}
	for _, l := range n.KernelLog.MLX5 {
		out = append(out, l.Line)
	}
	return out
}

// nodeNCCLBuildsDiffer reports a node holding libnccl.so.2 files of
// different ELF build IDs (a distribution package and a pip wheel): which
// one a job loads depends on its environment, and equal version strings
// do not make them the same binary.
func nodeNCCLBuildsDiffer(n *facts.Node) (string, bool) {
	ids := map[string]bool{}
	var seen []string
	for _, b := range n.NCCL.Builds {
		if b.BuildID == "" {
			continue
		}
		ids[b.BuildID] = true
		v := b.Version
		if v == "" {
			v = "version not in its name"
		}
		seen = append(seen, fmt.Sprintf("%s (%s) build ID %s", b.Path, v, b.BuildID))
	}
	if len(ids) < 2 {
		return "", false
	}
	return fmt.Sprintf("%d libnccl.so.2 builds: %s", len(ids), strings.Join(seen, "; ")), true
}
