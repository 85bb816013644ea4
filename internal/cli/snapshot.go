package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/doctor"
	"github.com/sparkrig/sparkrig/internal/facts"
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
			if opts.remote.enabled() {
				return snapshotRemote(cmd.Context(), env, opts)
			}
			return snapshotLocal(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "where to write: NAME.tar.gz for an archive, else a directory")
	cmd.Flags().BoolVar(&opts.force, "force", false, "replace existing snapshots at PATH")
	cmd.Flags().BoolVar(&opts.anonymize, "anonymize", false, "replace host names, MACs and public IP addresses with stand-ins")
	addRemoteFlags(cmd.Flags(), &opts.remote)
	return cmd
}

func snapshotLocal(ctx context.Context, env *Env, opts *snapshotOptions) error {
	if err := checkSnapshotTarget(opts.output, opts.force); err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	s := capture.Local(ctx, capture.Options{ToolVersion: Version, Now: env.Now})
	if opts.anonymize {
		a := capture.NewAnonymizer()
		a.Learn(s.Manifest.Host, s, facts.FromSnapshot(s))
		a.Rewrite(s)
	}
	if err := s.Write(opts.output); err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	fmt.Fprintf(env.Stderr, "wrote %s: %s\n", opts.output, snapshotSummary(s))
	return nil
}

// checkSnapshotTarget refuses to overwrite a snapshot without force, and to
// write a directory snapshot into a directory that holds anything else.
func checkSnapshotTarget(p string, force bool) error {
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	isSnap := false
	if st.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return nil
		}
		_, err = os.Stat(filepath.Join(p, "manifest.json"))
		isSnap = err == nil
		if !isSnap {
			return fmt.Errorf("%s is a directory that is not a snapshot; name a new or empty one", p)
		}
	} else {
		isSnap = st.Mode().IsRegular()
		if !isSnap {
			return fmt.Errorf("%s exists and is not a regular file", p)
		}
	}
	if !force {
		return fmt.Errorf("%s exists; add --force to replace it", p)
	}
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
	if snapshot.IsArchiveName(opts.output) {
		return exitf(ExitUnknown, "snapshot: with --hosts, -o names a directory for one HOST.tar.gz per node, not an archive (%s)", opts.output)
	}
	if st, err := os.Stat(opts.output); err == nil && !st.IsDir() {
		return exitf(ExitUnknown, "snapshot: %s exists and is not a directory", opts.output)
	}
	defer opts.remote.closeRunner()
	opts.remote.keepAll = true
	caps, err := captureRemote(ctx, env, &opts.remote)
	if err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	if err := os.MkdirAll(opts.output, 0o700); err != nil {
		return exitf(ExitUnknown, "snapshot: %v", err)
	}
	if opts.anonymize {
		a := capture.NewAnonymizer()
		for _, c := range caps {
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
	failed := 0
	for _, c := range caps {
		if c.Err != nil || c.Snap == nil {
			failed++
			fmt.Fprintf(env.Stderr, "sparkrig: snapshot: %s\n", doctor.HostLine(c.Host, c.Err))
			continue
		}
		dst := filepath.Join(opts.output, snapshot.SafeName(c.Snap.Manifest.Host)+".tar.gz")
		if err := checkSnapshotTarget(dst, opts.force); err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "sparkrig: snapshot: %s: %v\n", c.Host, err)
			continue
		}
		if err := c.Snap.Write(dst); err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "sparkrig: snapshot: %s: %v\n", c.Host, err)
			continue
		}
		fmt.Fprintf(env.Stderr, "wrote %s: %s\n", dst, snapshotSummary(c.Snap))
	}
	if failed > 0 {
		return statusError(ExitUnknown)
	}
	return nil
}
