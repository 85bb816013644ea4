package cli

import "github.com/spf13/cobra"

// newReportCmd is a placeholder until the report command lands.
func newReportCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "report (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "report is not available in this build")
		},
	}
}
