package cli

import "github.com/spf13/cobra"

// newAnalyzeCmd is a placeholder until the analyze command lands.
func newAnalyzeCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "analyze",
		Short: "analyze (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "analyze is not available in this build")
		},
	}
}
