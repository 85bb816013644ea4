package cli

import "github.com/spf13/cobra"

// newBenchCmd is a placeholder until the bench command lands.
func newBenchCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "bench (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "bench is not available in this build")
		},
	}
}
