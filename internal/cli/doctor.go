package cli

import "github.com/spf13/cobra"

// newDoctorCmd is a placeholder until the doctor command lands.
func newDoctorCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "doctor (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "doctor is not available in this build")
		},
	}
}
