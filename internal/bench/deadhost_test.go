package bench

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// deadHost runs every command on this machine, but a command for host
// "dead" never returns, whatever its context, until the test ends: what
// the SSH library's session open does once a node has lost power or its
// network (no reset comes, and no keepalive notices for many minutes).
type deadHost struct{ release chan struct{} }

func newDeadHost(t *testing.T) deadHost {
	d := deadHost{release: make(chan struct{})}
	t.Cleanup(func() { close(d.release) })
	return d
}

func (d deadHost) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	if host == "dead" {
		<-d.release
		return context.Canceled
	}
	return runner.Local{}.Exec(ctx, host, cmdline, stdin, stdout, stderr)
}

func (deadHost) String() string { return "local, one host dead" }

// within fails the test when fn has not returned after limit.
func within(t *testing.T, limit time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s still waiting after %s on a host that stopped answering", what, limit)
	}
}

// A node that stops answering mid-step holds the step to its timeout and
// no longer: stopping its command gives up on the host after the grace,
// the other commands' results stand, and the dead one says it got no
// answer.
func TestStepEndsWhenAHostStopsAnswering(t *testing.T) {
	x := &Executor{T: newDeadHost(t), RunDir: t.TempDir(), Grace: time.Second}
	var res StepResult
	within(t, 90*time.Second, "the step", func() {
		res = x.Run(context.Background(), Step{ID: "dead", Timeout: 3 * time.Second, Clients: []Cmd{
			{Host: "localhost", Role: RoleClient, Group: "a", Argv: []string{"echo", "measured"}},
			{Host: "dead", Role: RoleClient, Group: "b", Argv: []string{"echo", "never"}},
		}})
	})
	if res.Status != StatusTimeout || len(res.Commands) != 2 {
		t.Fatalf("step %s %q, %d commands", res.Status, res.Error, len(res.Commands))
	}
	if c := res.Commands[0]; c.Stdout != "measured\n" || c.Error != "" {
		t.Errorf("the live host's command: %+v", c)
	}
	if c := res.Commands[1]; c.ExitCode != -1 || !strings.Contains(c.Error, "no answer") {
		t.Errorf("the dead host's command: %+v", c)
	}
}

// Cleanup gives up on a host that stopped answering within its bound.
func TestCleanupEndsWhenAHostStopsAnswering(t *testing.T) {
	x := &Executor{T: newDeadHost(t), RunDir: t.TempDir(), Grace: time.Second}
	x.keep("dead")
	x.keep("localhost")
	within(t, 90*time.Second, "Cleanup", func() { x.Cleanup([]string{"localhost", "dead"}) })
}
