package cli

import "github.com/spf13/cobra"

// newFixCmd is a placeholder until the fix command lands.
func newFixCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "fix",
		Short: "fix (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "fix is not available in this build")
		},
	}
}
