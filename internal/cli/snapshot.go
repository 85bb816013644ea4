package cli

import "github.com/spf13/cobra"

// newSnapshotCmd is a placeholder until the snapshot command lands.
func newSnapshotCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot",
		Short: "snapshot (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "snapshot is not available in this build")
		},
	}
}
