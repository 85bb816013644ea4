package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// Grouped clients are independent tests: one that fails stops its own
// group at once (a peer that would wait for it for ever) and no other;
// the step waits for the other groups and says what failed.
func TestGroupedClientFailsAlone(t *testing.T) {
	x := &Executor{T: runner.Local{}, RunDir: t.TempDir(), Grace: time.Second}
	st := Step{ID: "groups", Timeout: 60 * time.Second, Clients: []Cmd{
		{Host: "localhost", Role: RoleClient, Group: "a", Argv: []string{"sh", "-c", "echo no GPU >&2; exit 3"}},
		{Host: "localhost", Role: RolePeer, Group: "a", Argv: []string{"sleep", "40"}},
		{Host: "localhost", Role: RoleClient, Group: "b", Argv: []string{"sh", "-c", "sleep 1; echo measured"}},
	}}
	start := time.Now()
	res := x.Run(context.Background(), st)
	took := time.Since(start)
	if took > 20*time.Second {
		t.Errorf("took %s: the failed client's peer was not stopped", took)
	}
	byGroup := map[string]CmdResult{}
	for _, c := range res.Commands {
		byGroup[c.Group+" "+c.Role] = c
	}
	if c := byGroup["b client"]; c.Stdout != "measured\n" || c.Error != "" {
		t.Errorf("group b: %+v", c)
	}
	if c := byGroup["a client"]; c.ExitCode != 3 || c.ElapsedMS > byGroup["a peer"].ElapsedMS {
		t.Errorf("group a's client: %+v (its peer ended after %d ms)", c, byGroup["a peer"].ElapsedMS)
	}
	if res.Status != StatusFailed || !strings.Contains(res.Error, "no GPU") {
		t.Errorf("step %s: %q", res.Status, res.Error)
	}
}
