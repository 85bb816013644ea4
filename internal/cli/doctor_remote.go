package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// hostCapture is one node's evidence, or why it could not be had.
type hostCapture struct {
	Host   string
	Source string // "live", a snapshot path, or "ssh"
	Snap   *snapshot.Snapshot
	Err    error
	// Status is a report.Host* status when Err is set.
	Status string
}

// remoteOptions selects nodes to capture over SSH (--hosts, --hostfile, ...).
type remoteOptions struct{}

// addRemoteFlags registers the SSH host-selection flags.
func addRemoteFlags(fs *pflag.FlagSet, o *remoteOptions) {}

// enabled reports whether any remote host was asked for.
func (o *remoteOptions) enabled() bool { return false }

// captureRemote captures every selected host in parallel, in input order.
func captureRemote(ctx context.Context, env *Env, o *remoteOptions) ([]hostCapture, error) {
	return nil, nil
}
