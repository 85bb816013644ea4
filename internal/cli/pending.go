package cli

import "github.com/sparkrig/sparkrig/internal/bench"

// Helpers that moved below cli, kept under their old names for the
// commands whose pipelines have not moved yet.

// replaceArg0 points a plan's probe commands at path (bench.PointProbesAt).
func replaceArg0(steps []bench.Step, path string) { bench.PointProbesAt(steps, path) }
