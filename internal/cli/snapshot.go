package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// snapshotOptions are the snapshot command's flags.
type snapshotOptions struct {
	output string
	remote remoteOptions
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
receives one <host>.tar.gz per node.

` + exitHelp,
		Example: `  sparkrig snapshot -o node1.tar.gz
  sparkrig doctor --snapshot node1.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.output == "" {
				return exitf(ExitUnknown, "snapshot: -o PATH is required")
			}
			if opts.remote.enabled() {
				return snapshotRemote(cmd.Context(), env, opts)
			}
			return snapshotLocal(cmd.Context(), env, opts.output)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "where to write: NAME.tar.gz for an archive, else a directory")
	addRemoteFlags(cmd.Flags(), &opts.remote)
	return cmd
}

func snapshotLocal(ctx context.Context, env *Env, out string) error {
	s := capture.Local(ctx, capture.Options{ToolVersion: Version, Now: env.Now})
	if err := s.Write(out); err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	fmt.Fprintf(env.Stderr, "wrote %s: %s\n", out, snapshotSummary(s))
	return nil
}

// snapshotSummary is "312 items (41 missing, 2 denied) in 24 ms".
func snapshotSummary(s *snapshot.Snapshot) string {
	by := map[string]int{}
	for _, it := range s.Manifest.Items {
		by[it.Status]++
	}
	return fmt.Sprintf("%d items (%d missing, %d denied, %d errors) in %d ms",
		len(s.Manifest.Items), by[snapshot.StatusMissing], by[snapshot.StatusDenied], by[snapshot.StatusError], s.Manifest.DurationMS)
}

// snapshotRemote writes one archive per host into the directory out; a host
// that could not be captured is reported and does not stop the others.
func snapshotRemote(ctx context.Context, env *Env, opts *snapshotOptions) error {
	caps, err := captureRemote(ctx, env, &opts.remote)
	if err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	if err := os.MkdirAll(opts.output, 0o700); err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	failed := 0
	for _, c := range caps {
		if c.Err != nil || c.Snap == nil {
			failed++
			fmt.Fprintf(env.Stderr, "sparkrig: %s: %s\n", c.Host, errLine(c.Err))
			continue
		}
		dst := filepath.Join(opts.output, snapshot.SafeName(c.Host)+".tar.gz")
		if err := c.Snap.Write(dst); err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "sparkrig: %s: %v\n", c.Host, err)
			continue
		}
		fmt.Fprintf(env.Stderr, "wrote %s: %s\n", dst, snapshotSummary(c.Snap))
	}
	if failed > 0 {
		return statusError(ExitUnknown)
	}
	return nil
}
