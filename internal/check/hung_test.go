package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// hungSMI is the real 2× H200 snapshot with nvidia-smi -q -x recorded as a
// command the capture killed at its deadline (status, as the capture
// records it, or the "error" snapshots taken before timed-out existed).
func hungSMI(t *testing.T, status string) *facts.Node {
	t.Helper()
	s, err := snapshot.Read(nodeTree("gpu-h200x2"))
	if err != nil {
		t.Fatal(err)
	}
	delete(s.Data, snapshot.CmdKey("nvidia-smi-q", "stdout"))
	delete(s.Data, snapshot.CmdKey("nvidia-smi-q", "stderr"))
	s.Manifest.Items = slices.DeleteFunc(s.Manifest.Items, func(it snapshot.Item) bool {
		return it.Kind == snapshot.KindCmd && it.Name == "nvidia-smi-q"
	})
	s.AddCmd(snapshot.Item{Name: "nvidia-smi-q", Argv: []string{"nvidia-smi", "-q", "-x"}, Status: status, Error: "timed out after 20s"}, nil, nil)
	return facts.FromSnapshot(s)
}

// A GPU node whose nvidia-smi hangs (the driver loaded) is not a node
// without GPUs: every GPU check it runs is not evaluated, timed out, and
// none is skipped as "nvidia-smi lists no GPU".
func TestHungNvidiaSMIIsNotEvaluated(t *testing.T) {
	for _, status := range []string{snapshot.StatusTimedOut, snapshot.StatusError} {
		n := hungSMI(t, status)
		if st := n.Sources[facts.SrcNvidiaSMI]; st.Status != snapshot.StatusTimedOut || st.Detail != "timed out after 20s" {
			t.Errorf("%s: source %+v, want timed-out", status, st)
		}
		p := DetectProfile(n)
		fs, skipped := Run(n, p)
		if p != ProfileGPU {
			t.Fatalf("%s: profile %s, want gpu-server (the driver is loaded)", status, p)
		}
		for _, sk := range skipped {
			if strings.Contains(sk.Reason, "nvidia-smi") {
				t.Errorf("%s: %s skipped: %s", status, sk.ID, sk.Reason)
			}
		}
		var gpu []string
		for _, f := range fs {
			if !strings.HasPrefix(f.ID, "gpu.") || f.ID == "gpu.xid" { // Xid is read from the kernel log
				continue
			}
			gpu = append(gpu, f.ID)
			if f.Severity != report.NotEvaluated || f.Observed != "nvidia-smi timed out after 20s" ||
				!strings.Contains(remedyText(f), "did not answer in time") {
				t.Errorf("%s: %s %s %q, fix %q", status, f.ID, f.Severity, f.Observed, remedyText(f))
			}
		}
		want := []string{"gpu.driver", "gpu.persistence", "gpu.mig", "gpu.ecc", "gpu.remapped-rows", "gpu.throttle"}
		if !slices.Equal(gpu, want) {
			t.Errorf("%s: GPU findings %v, want %v (each not evaluated)", status, gpu, want)
		}
	}
}
