package check

import (
	"fmt"
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
		for _, k := range ks {
			if k.Match.RingNodesMin > 0 {
				continue
			}
			if seen, ok := KnownIssueSeen(n, k); ok {
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
	if m.Arch != "" {
		if n.OS.Arch != m.Arch {
			return "", false
		}
		seen = append(seen, "on "+n.OS.Arch)
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
	return strings.Join(seen, ", "), len(seen) > 0
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
	return report.Finding{ID: "known.issue", Severity: sev, Subject: k.ID, Title: k.Title, Observed: seen, Expected: exp,
		Why: k.Symptom, Remedy: report.Manual(report.ActionRun, k.Fix), Source: src}
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
