package fix

import (
	"context"
	"errors"
	"strings"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// Target is the host fix changes, reached through a runner: scripts run as
// root (runner.RootShell, never a password prompt). Over SSH, give it a
// runner with Fresh set, so that every call opens a connection and a call
// that succeeds proves the host answers now.
type Target struct {
	Runner runner.Runner
	Host   string
}

// Run runs script on the host as root. A script that exits non-zero is a
// *runner.ExitError with its stderr.
func (t Target) Run(ctx context.Context, script string) ([]byte, error) {
	stdout, _, err := runner.Run(ctx, t.Runner, t.Host, runner.RootShell, strings.NewReader(script))
	var ee *runner.ExitError
	if errors.As(err, &ee) {
		ee.Stderr = runner.SudoRefused(t.Host, ee.Stderr)
		return stdout, ee
	}
	if err != nil {
		return nil, err
	}
	return stdout, nil
}

// String names the host.
func (t Target) String() string { return t.Host }
