package check

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// problems returns "id severity" of every warn, fail and not-evaluated finding.
func problems(fs []report.Finding) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, f := range fs {
		if f.Severity.Rank() < report.NotEvaluated.Rank() {
			continue
		}
		k := f.ID + " " + string(f.Severity)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func auditTree(t *testing.T, dir string) (Profile, []report.Finding) {
	t.Helper()
	s, err := snapshot.Read(nodeTree(dir))
	if err != nil {
		t.Fatal(err)
	}
	n := facts.FromSnapshot(s)
	p := DetectProfile(n)
	fs, _ := Run(n, p)
	return p, fs
}

// TestSparkTrees: the healthy Spark raises no problem; each pitfall tree
// raises exactly its finding at its severity.
func TestSparkTrees(t *testing.T) {
	for _, c := range sparkCases {
		t.Run(c.dir, func(t *testing.T) {
			p, fs := auditTree(t, c.dir)
			if p != ProfileSpark {
				t.Fatalf("profile %q, want dgx-spark", p)
			}
			want := []string{}
			if c.wantID != "" {
				want = []string{c.wantID + " " + string(c.wantSev)}
			}
			if c.dir == "spark-nccl-2.27" { // older than 2.29.3 as well
				want = append([]string{"known.issue warn"}, want...)
			}
			if d := cmp.Diff(want, problems(fs)); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// TestRealTrees audits snapshots captured by sparkrig on real machines.
func TestRealTrees(t *testing.T) {
	tests := []struct {
		dir     string
		profile Profile
		want    []string
	}{
		// 2× H200 VM: no cpufreq driver, so the governor check does not
		// apply (skipped, with why), neither passed nor a gap in the evidence.
		{"gpu-h200x2", ProfileGPU, []string{}},
		// The CI machine: no GPU, no RDMA; nothing GPU-specific applies.
		{"no-gpu-vm", ProfileNoGPU, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			p, fs := auditTree(t, tt.dir)
			if p != tt.profile {
				t.Errorf("profile %q, want %q", p, tt.profile)
			}
			if d := cmp.Diff(tt.want, problems(fs)); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// TestGPUTreeFacts pins what the real H200 snapshot says, so a parser change
// that loses a GPU field fails here.
func TestGPUTreeFacts(t *testing.T) {
	s, err := snapshot.Read(nodeTree("gpu-h200x2"))
	if err != nil {
		t.Fatal(err)
	}
	n := facts.FromSnapshot(s)
	if n.Driver.Version != "580.159.04" || n.Driver.CUDAVersion != "13.0" || n.NCCL.Version != "2.28.3" {
		t.Errorf("driver %+v, NCCL %q", n.Driver, n.NCCL.Version)
	}
	if len(n.GPUs) != 2 {
		t.Fatalf("%d GPUs, want 2", len(n.GPUs))
	}
	g := n.GPUs[0]
	if g.Name != "NVIDIA H200" || g.Persistence != "Enabled" || g.MIGMode != "Disabled" || g.ECCMode != "Enabled" || g.RemapPending != "No" {
		t.Errorf("GPU 0 = %+v", g)
	}
	if g.MemoryTotalMiB == nil || *g.MemoryTotalMiB < 140000 {
		t.Errorf("GPU 0 memory %v MiB, want about 143771", g.MemoryTotalMiB)
	}
}

// TestProfileOverride: --profile dgx-spark on a non-Spark says what is missing.
func TestProfileOverride(t *testing.T) {
	s, err := snapshot.Read(nodeTree("gpu-h200x2"))
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := Run(facts.FromSnapshot(s), ProfileSpark)
	var absent int
	for _, f := range fs {
		if f.ID == "spark.cx7-present" && f.Severity == report.Fail {
			absent++
		}
	}
	if absent != 4 {
		t.Errorf("%d absent CX-7 netdevs reported, want 4", absent)
	}
}

// TestProfileWithoutNvidiaSMI: a GPU server whose nvidia-smi is missing is
// still a gpu-server, says what it was detected from, and its GPU checks are
// not evaluated rather than passed.
func TestProfileWithoutNvidiaSMI(t *testing.T) {
	n := h200(t)
	n.GPUs = []facts.GPU{}
	n.Driver.CUDAVersion = ""
	n.Sources[facts.SrcNvidiaSMI] = facts.SourceStatus{Status: "missing", Detail: "nvidia-smi not found"}
	p := DetectProfile(n)
	fs, _ := Run(n, p)
	if p != ProfileGPU || fs[0].Observed != "gpu-server (NVIDIA driver 580.159.04 loaded; nvidia-smi lists no GPU)" {
		t.Errorf("profile %q: %q", p, fs[0].Observed)
	}
	n.Driver.Version = ""
	if fs, _ := Run(n, DetectProfile(n)); fs[0].Observed != "gpu-server (an NVIDIA display function on PCI; nvidia-smi lists no GPU)" {
		t.Errorf("profile from PCI: %q", fs[0].Observed)
	}
	if d := cmp.Diff([]string{"gpu.driver not-evaluated"}, problems(fs)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// TestMissingEvidenceAdvice: a node that has no /proc/modules (a kernel
// without module support) is told so, and a snapshot that never captured it
// is told to capture again; neither passes the module checks.
func TestMissingEvidenceAdvice(t *testing.T) {
	withModules := func(add func(s *snapshot.Snapshot)) report.Finding {
		t.Helper()
		s, err := snapshot.Read(nodeTree("spark-healthy"))
		if err != nil {
			t.Fatal(err)
		}
		delete(s.Data, snapshot.FileKey("/proc/modules"))
		s.Manifest.Items = slices.DeleteFunc(s.Manifest.Items, func(it snapshot.Item) bool { return it.Name == "/proc/modules" })
		add(s)
		fs, _ := Run(facts.FromSnapshot(s), ProfileSpark)
		for _, f := range fs {
			if f.ID == "spark.gpudirect" {
				return f
			}
		}
		t.Fatal("no module finding")
		return report.Finding{}
	}
	absent := withModules(func(s *snapshot.Snapshot) {
		s.AddMissing(snapshot.KindFile, "/proc/modules", snapshot.StatusMissing, "open /proc/modules: no such file or directory")
	})
	if absent.Severity != report.NotEvaluated || absent.Observed != "modules absent on the node: /proc/modules: open /proc/modules: no such file or directory" ||
		!strings.Contains(remedyText(absent), "CONFIG_MODULES=n") || strings.Contains(remedyText(absent), "snapshot") {
		t.Errorf("a node without /proc/modules: %s %q, fix %q", absent.Severity, absent.Observed, remedyText(absent))
	}
	old := withModules(func(*snapshot.Snapshot) {})
	if old.Severity != report.NotEvaluated || old.Observed != "modules not captured: /proc/modules" ||
		!strings.HasPrefix(remedyText(old), "this snapshot was taken without it") {
		t.Errorf("a snapshot without /proc/modules: %s %q, fix %q", old.Severity, old.Observed, remedyText(old))
	}
}

// remedyText is the text of a finding's manual steps.
func remedyText(f report.Finding) string {
	if f.Remedy == nil {
		return ""
	}
	var parts []string
	for _, s := range f.Remedy.Steps {
		parts = append(parts, s.Text)
	}
	return strings.Join(parts, "\n")
}

func TestAbsentCpufreqDoesNotApply(t *testing.T) {
	s, err := snapshot.Read(nodeTree("gpu-h200x2"))
	if err != nil {
		t.Fatal(err)
	}
	_, skipped := Run(facts.FromSnapshot(s), ProfileGPU)
	for _, s := range skipped {
		if s.ID == "os.cpu-governor" {
			if !strings.HasPrefix(s.Reason, "the node has no cpufreq") {
				t.Errorf("reason %q", s.Reason)
			}
			return
		}
	}
	t.Error("os.cpu-governor not skipped on a node without cpufreq")
}
