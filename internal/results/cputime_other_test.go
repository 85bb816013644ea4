//go:build !unix

package results

import "time"

// processCPU is not measured here; the benchmark then reports no CPU rate.
func processCPU() time.Duration { return 0 }
