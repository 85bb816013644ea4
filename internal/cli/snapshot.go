package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/sanitize"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// snapshotOptions are the snapshot command's flags.
type snapshotOptions struct {
	output    string
	force     bool
	anonymize bool
	remote    remoteOptions
}

func newSnapshotCmd(env *Env) *cobra.Command {
	opts := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "snapshot -o PATH",
		Short: "capture a node's evidence to a directory or .tar.gz",
		Long: `snapshot captures this machine's evidence (files under /sys, /proc and /etc and the
outputs of a fixed command list) without judging it. "sparkrig doctor --snapshot PATH"
audits it later, anywhere. A name ending in .tar.gz or .tgz writes an archive,
anything else a directory. With SSH hosts selected, PATH is a directory that
receives one <host>.tar.gz per node. An existing snapshot is replaced only with
--force; a directory that holds anything else is never written into.

Snapshots carry no secrets (Wi-Fi and VPN keys, passwords are redacted at
capture). --anonymize also replaces host names, MAC addresses and public IP
addresses with stand-ins, the same on every node of the run.

` + exitHelp,
		Example: `  sparkrig snapshot -o node1.tar.gz
  sparkrig doctor --snapshot node1.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.output == "" {
				return exitf(ExitUnknown, "snapshot: -o PATH is required")
			}
			return runSnapshot(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "where to write: NAME.tar.gz for an archive, else a directory")
	cmd.Flags().BoolVar(&opts.force, "force", false, "replace existing snapshots at PATH")
	cmd.Flags().BoolVar(&opts.anonymize, "anonymize", false, "replace host names, MACs and public IP addresses with stand-ins")
	addRemoteFlags(cmd.Flags(), &opts.remote)
	return cmd
}

func runSnapshot(ctx context.Context, env *Env, opts *snapshotOptions) error {
	defer opts.remote.closeRunner()
	failed, err := snapshot.Run(ctx, snapshot.RunOptions{Output: opts.output, PerHost: opts.remote.enabled(), Force: opts.force,
		Capture: func(ctx context.Context, write snapshot.WriteFunc) ([]snapshot.Node, error) {
			return snapshotCapture(ctx, env, opts, write)
		},
		Wrote: func(path, summary string) { fmt.Fprintf(env.Stderr, "wrote %s: %s\n", sanitize.Line(path), summary) },
		Failed: func(host string, err error) {
			fmt.Fprintf(env.Stderr, "sparkrig: snapshot: %s\n", sanitize.Line(doctor.HostLine(host, err)))
		}})
	if err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	if failed > 0 {
		return statusError(ExitUnknown)
	}
	return nil
}

// snapshotCapture captures this machine, or every host over the command's
// runner, with host names, MACs and public addresses replaced the same way
// on every node when --anonymize is given. Over the runner, each node's
// snapshot is written as it arrives (write), unless --anonymize holds them
// all until every node's identities are known.
func snapshotCapture(ctx context.Context, env *Env, opts *snapshotOptions, write snapshot.WriteFunc) ([]snapshot.Node, error) {
	if opts.remote.enabled() && write != nil && !opts.anonymize {
		return streamSnapshots(ctx, env, opts, write)
	}
	var caps []hostCapture
	if opts.remote.enabled() {
		var err error
		opts.remote.keepAll = true // every node's whole evidence is written
		if caps, err = captureRemote(ctx, env, &opts.remote); err != nil {
			return nil, err
		}
	} else {
		s := capture.Local(ctx, capture.Options{ToolVersion: Version, Now: env.Now})
		caps = []hostCapture{{Host: s.Manifest.Host, Snap: s}}
	}
	if opts.anonymize {
		a := capture.NewAnonymizer()
		for _, c := range caps {
			if c.Snap != nil && c.Facts == nil {
				c.Facts = facts.FromSnapshot(c.Snap)
			}
			if c.Snap != nil {
				a.Learn(c.Host, c.Snap, c.Facts)
			}
		}
		for _, c := range caps {
			if c.Snap != nil {
				a.Rewrite(c.Snap)
			}
		}
	}
	out := make([]snapshot.Node, len(caps))
	for i, c := range caps {
		out[i] = snapshot.Node{Host: c.Host, Snap: c.Snap, Err: c.Err}
	}
	return out, nil
}

// streamSnapshots captures every host, writing each node's snapshot as it
// arrives and releasing its evidence: the run holds facts (for the ping
// mesh's plan), not captures. The mesh's results, known once every node
// has arrived, are appended to the archives already written. The nodes
// the run gave up on before they answered come back to be reported.
func streamSnapshots(ctx context.Context, env *Env, opts *snapshotOptions, write snapshot.WriteFunc) ([]snapshot.Node, error) {
	var mu sync.Mutex
	written := map[string]snapshot.Written{}
	heard := map[string]bool{}
	opts.remote.keepAll = true
	opts.remote.arrived = func(n *hostCapture) {
		w, ok := write(snapshot.Node{Host: n.Host, Snap: n.Snap, Err: n.Err})
		n.Snap = nil
		mu.Lock()
		defer mu.Unlock()
		heard[n.Host] = true
		if ok {
			written[n.Host] = w
		}
	}
	caps, err := captureRemote(ctx, env, &opts.remote)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	var rest []snapshot.Node
	for _, c := range caps {
		if !heard[c.Host] {
			rest = append(rest, snapshot.Node{Host: c.Host, Snap: c.Snap, Err: c.Err})
			continue
		}
		if w, ok := written[c.Host]; ok && c.Meshed {
			it := snapshot.Item{Name: facts.PingEvidence, Argv: []string{"sparkrig", "ping-mesh"}}
			if _, err := snapshot.AppendCmd(w, it, facts.EncodePings(c.Pings)); err != nil {
				fmt.Fprintf(env.Stderr, "sparkrig: snapshot: %s: the ping mesh's results were not added: %s\n", sanitize.Line(c.Host), sanitize.Line(err.Error()))
			}
		}
	}
	return rest, nil
}
