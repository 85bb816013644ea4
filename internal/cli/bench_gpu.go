package cli

import "github.com/spf13/cobra"

// newBenchGPUCmd is a placeholder until bench gpu lands.
func newBenchGPUCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "gpu",
		Short: "GPU benchmarks through the node's CUDA libraries (not yet available)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitf(ExitUnknown, "bench gpu is not available in this build")
		},
	}
}
