package cli

import (
	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/render"
)

func newBenchCompareCmd(env *Env) *cobra.Command {
	format := "text"
	cmd := &cobra.Command{
		Use:   "compare RUN1 RUN2",
		Short: "show what changed between two bench runs",
		Long: `compare matches the results of two bench runs (JSON documents from --results)
by step and measure, and shows each number before and after, the change in
percent and the verdicts; then what differed in the setup (environment, NCCL and
driver versions, rails, addresses).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchCompare(env, args[0], args[1], format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output: text or json")
	return cmd
}

func runBenchCompare(env *Env, a, b, format string) error {
	if _, err := checkFormat("bench compare", format, render.TextAndJSON); err != nil {
		return err
	}
	ra, err := loadRecord(a)
	if err != nil {
		return err
	}
	rb, err := loadRecord(b)
	if err != nil {
		return err
	}
	c := bench.Compare(ra, rb)
	r := newDocument(env, "bench compare")
	r.Comparison = &c
	return writeDocument(env, r, format)
}

func loadRecord(path string) (*bench.Record, error) {
	b, err := capped.ReadFile(path, 256<<20)
	if err != nil {
		return nil, exitf(ExitUnknown, "bench compare: %v", err)
	}
	r, err := bench.Load(b)
	if err != nil {
		return nil, exitf(ExitUnknown, "bench compare: %s: %v", path, err)
	}
	return r, nil
}
