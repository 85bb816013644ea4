package fix

import (
	"context"
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/remote"
)

// rootShell runs the script from stdin as root: directly when the login is
// root, else through `sudo -n` (never a password prompt). It passes the SSH
// client's address along, which sudo would otherwise strip, so scripts can
// work out which interface the session arrives on.
const rootShell = `f=${SSH_CONNECTION%% *}; if [ "$(id -u)" = 0 ]; then SPARKRIG_SSH_FROM="$f" exec sh -s; else exec sudo -n env SPARKRIG_SSH_FROM="$f" sh -s; fi`

// SSH is a Transport over a fresh SSH connection per call.
type SSH struct {
	Dialer *remote.Dialer
	Host   string
}

// Run implements Transport.
func (s SSH) Run(ctx context.Context, script string) ([]byte, error) {
	c, err := s.Dialer.Dial(ctx, s.Host)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stdout, stderr, exit, err := c.Run(ctx, rootShell, strings.NewReader(script))
	if err != nil {
		return nil, err
	}
	if exit != 0 {
		msg := string(stderr)
		if strings.Contains(msg, "sudo:") && strings.Contains(msg, "password") {
			msg = "sudo needs a password on " + s.Host + "; allow passwordless sudo for this user or log in as root"
		}
		return stdout, &ScriptError{Exit: exit, Stderr: msg}
	}
	return stdout, nil
}

// String names the host.
func (s SSH) String() string { return fmt.Sprintf("ssh %s", s.Host) }
