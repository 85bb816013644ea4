package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// hungSMISnapshot writes the real 2× H200 snapshot with nvidia-smi -q -x
// recorded as the capture records a command it killed at its deadline.
func hungSMISnapshot(t *testing.T, status string) string {
	t.Helper()
	s, err := snapshot.Read("../../testdata/nodes/gpu-h200x2.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	delete(s.Data, snapshot.CmdKey("nvidia-smi-q", "stdout"))
	s.Manifest.Items = slices.DeleteFunc(s.Manifest.Items, func(it snapshot.Item) bool {
		return it.Kind == snapshot.KindCmd && it.Name == "nvidia-smi-q"
	})
	s.AddCmd(snapshot.Item{Name: "nvidia-smi-q", Argv: []string{"nvidia-smi", "-q", "-x"}, Status: status, Error: "timed out after 20s"}, nil, nil)
	p := filepath.Join(t.TempDir(), "hung.tar.gz")
	if err := s.Write(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A GPU node whose nvidia-smi hung is unknown to the GPU condition (exit 3,
// saying what could not be read), never "ok".
func TestNPDHungNvidiaSMIIsUnknown(t *testing.T) {
	for _, status := range []string{snapshot.StatusTimedOut, snapshot.StatusError} {
		code, out, errOut := runMain(t, "doctor", "--npd", "--npd-checks", "gpu.*", "--snapshot", hungSMISnapshot(t, status))
		const want = "sparkrig: not evaluated: gpu.driver: nvidia-smi timed out after 20s (+5 more)\n"
		if code != ExitUnknown || out != want || errOut != "" {
			t.Errorf("%s: exit %d, %q, %q; want 3, %q", status, code, out, errOut, want)
		}
	}
	// The same node's other conditions are judged on their own evidence.
	code, out, _ := runMain(t, "doctor", "--npd", "--npd-checks", "os.*", "--snapshot", hungSMISnapshot(t, snapshot.StatusTimedOut))
	if code != 0 || out != "sparkrig: ok: no problem in these checks\n" {
		t.Errorf("os.* on the hung node: exit %d, %q", code, out)
	}
}

// With nvidia-smi hanging on this machine, doctor --npd answers unknown
// within node-problem-detector's rule timeout (25 s in the shipped configs)
// instead of passing the GPU checks: the hung tool is killed at
// --npd-timeout and not evaluated.
func TestNPDAnswersUnknownWhenNvidiaSMIHangs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	code, out, errOut := runMain(t, "doctor", "--npd", "--profile", "gpu-server", "--npd-checks", "gpu.*", "--npd-timeout", "8s")
	took := time.Since(start)
	if code != ExitUnknown || !strings.HasPrefix(out, "sparkrig: not evaluated: gpu.driver: nvidia-smi timed out after ") || errOut != "" {
		t.Errorf("exit %d, %q, %q; want 3, not evaluated", code, out, errOut)
	}
	if took > 25*time.Second {
		t.Errorf("answered after %s, past node-problem-detector's 25 s", took)
	}
	t.Logf("answered in %s", took.Round(time.Millisecond))
}
