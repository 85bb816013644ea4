package analyze

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Run reads each file, stdin for "-", and keeps a file it cannot read as
// an unknown result without losing the others.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "spark.log")
	if err := os.WriteFile(log, verbatim(t, sparkLog), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	stdin := bytes.NewReader(verbatim(t, "pasted/08_shm_segment_failed.txt"))
	r, err := Run(context.Background(), Inputs{Files: []string{log, filepath.Join(dir, "missing"), "-", dir, "/dev/zero"}, Stdin: stdin, ToolVersion: "v0", Now: now}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Analyses) != 5 || r.Command != "analyze" || !r.GeneratedAt.Equal(now) {
		t.Fatalf("%d analyses, command %q at %v", len(r.Analyses), r.Command, r.GeneratedAt)
	}
	want := []struct {
		file   string
		status report.Verdict
		err    string
	}{
		{log, report.VerdictWarning, ""},
		{filepath.Join(dir, "missing"), report.VerdictUnknown, "open: no such file or directory"},
		{"(stdin)", report.VerdictCritical, ""},
		{dir, report.VerdictUnknown, "open: is a directory"},
		// refused by type at once: read, it never ends
		{"/dev/zero", report.VerdictUnknown, "open: is a character device, not a file"},
	}
	for i, w := range want {
		a := r.Analyses[i]
		if a.File != w.file || a.Status != w.status || a.Error != w.err {
			t.Errorf("analysis %d: %s %s %q, want %s %s %q", i, a.File, a.Status, a.Error, w.file, w.status, w.err)
		}
	}
	// the one ranking: critical (stdin's paste) before unknown
	if r.Status != report.VerdictCritical {
		t.Errorf("report status %s", r.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Inputs{Files: []string{log}}, Options{}); err == nil {
		t.Error("an interrupted run reported no error")
	}
}

// An NCCL remedy on DGX Spark names the release NVIDIA's playbook builds
// (v2.31.2-1, its setup.sh in 2026-11), which no known issue rules out.
func TestSparkNCCLRelease(t *testing.T) {
	if got := sparkNCCLRelease(); got != "v2.31.2-1 for DGX Spark, the release NVIDIA's DGX Spark NCCL playbook builds" {
		t.Errorf("got %q", got)
	}
}

// XLA's wrapper line is named, and the NCCL warning it quotes is told by
// where NCCL raises it (pasted/54, jax-ml/jax #22747).
func TestXLAWrapperQuotedWarning(t *testing.T) {
	a := analyseFixture(t, "pasted/54_xla_comm_init_last_warning.txt", Options{})
	for _, f := range a.Flags {
		if f.ID == "error.xla-nccl-failure" {
			if !strings.Contains(f.Message, `the quoted warning "socketTryAccept: Accept failed: Bad file descriptor" comes from sockets and bootstrap`) {
				t.Errorf("message %q", f.Message)
			}
			return
		}
	}
	t.Errorf("no error.xla-nccl-failure in %+v", a.Flags)
}
