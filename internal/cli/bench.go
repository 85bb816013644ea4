package cli

import "github.com/spf13/cobra"

// newBenchCmd is the parent of the benchmark commands.
func newBenchCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "run network and NCCL benchmarks and judge the results",
	}
	cmd.AddCommand(newBenchGPUCmd(env))
	return cmd
}
