package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestEveryRemedyAgrees audits every node snapshot of testdata/nodes on its
// own and every pair of them, as `doctor --snapshot A --snapshot B` and
// `fix --plan --snapshot A --snapshot B` do, and holds the two to one
// answer: the same exit status; "nothing to change" exactly when the doctor
// has no warn or fail; every warn or fail finding's remedy in the plan
// (its manual steps word for word, or the change resolving it); and no
// remedy recommending what the known-issues data marks bad for that node.
func TestEveryRemedyAgrees(t *testing.T) {
	t.Setenv("COLUMNS", "100000") // no wrapping: remedies compare word for word
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "nodes", "*.tar.gz"))
	if err != nil || len(paths) < 10 {
		t.Fatalf("node snapshots: %v %v", paths, err)
	}
	var sets [][]string
	for i, a := range paths {
		sets = append(sets, []string{a})
		for _, b := range paths[i+1:] {
			sets = append(sets, []string{a, b})
		}
	}
	manual, changes := 0, 0
	for _, set := range sets {
		var args []string
		for _, p := range set {
			args = append(args, "--snapshot", p)
		}
		name := strings.ReplaceAll(strings.Join(baseNames(set), "+"), ".tar.gz", "")
		t.Run(name, func(t *testing.T) {
			var nodes []*facts.Node
			for _, c := range readSnapshots(set) {
				nodes = append(nodes, c.Facts)
			}
			dcode, dout, derr := runMain(t, append([]string{"doctor", "--format", "json"}, args...)...)
			var rep report.Report
			if err := json.Unmarshal([]byte(dout), &rep); err != nil {
				t.Fatalf("doctor JSON: %v\n%s", err, derr)
			}
			fcode, fout, ferr := runMain(t, append([]string{"fix", "--plan"}, args...)...)
			if fcode == ExitUnknown && strings.Contains(ferr, "cannot tell the topology") {
				// No plan for nodes whose cabling cannot be told: said, exit 3.
				return
			}
			if fcode != dcode {
				t.Errorf("doctor exits %d, fix --plan %d\n%s%s", dcode, fcode, fout, ferr)
			}
			m, c := planMatches(t, &rep, nodes, fout)
			manual += m
			changes += c
		})
	}
	if manual == 0 || changes == 0 {
		t.Errorf("the scenarios hold %d manual and %d change remedies; both kinds must be exercised", manual, changes)
	}
}

// each calls fn on every finding of r, hosts then cluster.
func each(r *report.Report, fn func(report.Finding)) {
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			fn(f)
		}
	}
	if r.Cluster != nil {
		for _, f := range r.Cluster.Findings {
			fn(f)
		}
	}
}

var ncclVersionIn = regexp.MustCompile(`(?:NCCL |v)(2\.\d+\.\d+)`)

// kernelIn finds kernel releases ("6.17.0-1031-nvidia", "7.0.0-31") in a remedy.
var kernelIn = regexp.MustCompile(`\b\d+\.\d+\.\d+-\d+(?:-[a-z0-9]+)?\b`)

// checkKnownIssues fails a remedy that names an NCCL version the
// known-issues data marks bad on any audited node's architecture, or
// kho=off for a node whose kernel it does not apply to.
func checkKnownIssues(t *testing.T, nodes []*facts.Node, f report.Finding) {
	t.Helper()
	var text []string
	for _, s := range f.Remedy.Steps {
		text = append(text, s.Text)
	}
	all := strings.Join(text, "\n")
	for _, m := range ncclVersionIn.FindAllStringSubmatch(all, -1) {
		for _, n := range nodes {
			if want, ids := expect.NCCLFor(m[1], n.OS.Arch, 0); want != m[1] {
				t.Errorf("%s %s recommends NCCL %s; on %s (%s) the known issues %v need %s", f.Host, f.ID, m[1], n.Host, n.OS.Arch, ids, want)
			}
		}
	}
	// Two captures of one host audit as one node: kho=off is wrong only
	// where none of the host's captures runs a kernel it applies to.
	var kernels []string
	kho := false
	for _, n := range nodes {
		if n.Host == f.Host {
			kernels = append(kernels, n.OS.Kernel)
			kho = kho || check.KHOKernel(n.OS.Kernel)
		}
	}
	if strings.Contains(all, "kho=off") && len(kernels) > 0 && !kho {
		t.Errorf("%s %s recommends kho=off on kernel %s", f.Host, f.ID, strings.Join(kernels, ", "))
	}
	// Nor may a remedy name a kernel release the known issues mark bad.
	for _, m := range kernelIn.FindAllString(all, -1) {
		if ids := expect.KernelsMarkedBad(m); len(ids) > 0 {
			t.Errorf("%s %s names kernel %s, which the known issues %v mark bad", f.Host, f.ID, m, ids)
		}
	}
}

// planMatches holds fix --plan's text to the doctor's report on the same
// nodes: every warn or fail finding's manual steps word for word, or a
// change that names it; "nothing to change" exactly when there is none; no
// remedy against the known-issues data. It returns the number of manual
// and change remedies seen.
func planMatches(t *testing.T, rep *report.Report, nodes []*facts.Node, fout string) (manual, changes int) {
	t.Helper()
	flat := flatten(fout)
	problems := 0
	each(rep, func(f report.Finding) {
		if f.Severity != report.Warn && f.Severity != report.Fail {
			return
		}
		problems++
		if f.Remedy == nil {
			t.Errorf("%s %s %s has no remedy", f.Host, f.ID, f.Subject)
			return
		}
		switch f.Remedy.Kind {
		case report.RemedyManual:
			manual++
			for _, s := range f.Remedy.Steps {
				if !strings.Contains(flat, flatten(s.Text)) {
					t.Errorf("%s %s: fix --plan lacks the doctor's step %q", f.Host, f.ID, s.Text)
				}
			}
		case report.RemedyChange:
			changes++
			if !strings.Contains(fout, f.ID) || !strings.HasPrefix(f.Remedy.Command, "sparkrig fix --apply --hosts ") {
				t.Errorf("%s %s: a change remedy (%s) the plan does not name", f.Host, f.ID, f.Remedy.Command)
			}
		}
		checkKnownIssues(t, nodes, f)
	})
	if nothing := strings.Contains(fout, "\nnothing to change\n"); nothing != (problems == 0) {
		t.Errorf("fix --plan says nothing to change: %v; the doctor has %d warn/fail finding(s)\n%s", nothing, problems, fout)
	}
	return manual, changes
}

// flatten joins text wrapped to a terminal's width back into words: shell
// continuations and runs of white space (line breaks and indents) become
// one space, so a remedy compares word for word at any width.
func flatten(text string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(text, " \\\n", " ")), " ")
}
