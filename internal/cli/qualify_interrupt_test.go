package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

// TestRigQualifyInterrupted: Ctrl-C in the middle of the first round. qualify
// stops what it started on the nodes, removes its scratch directories
// (each host's /tmp is its own), and still writes the report of what it
// measured (none of it judged from the stopped tests) and of what it did
// not (never an all-clear), with exit status 130.
func TestRigQualifyInterrupted(t *testing.T) {
	r, _ := switchRig(t, 4, "200mbit")
	cmd, _ := sparkrigProcess(t, "qualify", "--all-pairs", "--format", "json", "--ssh-config", r.SSHConfig,
		"--host-timeout", "60s", "--hosts", strings.Join(r.Names(), ","), "--test-time", "5s", "--subnet", "10.77.0.0/24")
	var stdout bytes.Buffer
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "set up in"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("qualify did not start its rounds within 60 s: %s", stderr.String())
		}
	}
	time.Sleep(2 * time.Second) // inside the first round's 5 s tests
	cmd.Process.Signal(syscall.SIGINT)
	code := waitExit(t, cmd)
	t.Logf("stderr: %s", stderr.String())
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.AllPairs == nil {
		t.Fatalf("no report of what was measured: %v\n%s", err, stdout.String())
	}
	if rep.Status != report.VerdictUnknown || len(rep.AllPairs.Suspects) != 0 {
		t.Errorf("status %s, suspects %+v: the stopped tests were judged", rep.Status, rep.AllPairs.Suspects)
	}
	// what was not measured is said, and the text is no all-clear
	if u := rep.AllPairs.Unjudged; len(u) != 1 || !strings.HasPrefix(u[0], "interrupted: ") || !strings.Contains(u[0], " of 12 directions were not measured (") {
		t.Errorf("unjudged %q", u)
	}
	if text := rigText(&rep); strings.Contains(text, "no suspect") || !strings.Contains(text, "not judged: interrupted: ") {
		t.Errorf("text after an interrupt:\n%s", text)
	}
	for _, h := range r.Names() {
		if out, err := r.Host(h).Exec(t.Context(), "sh", "-c", "ls -d /tmp/sparkrig-qualify-* 2>/dev/null || true"); err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s after the interrupt: %v %s", h, err, out)
		}
	}
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
