//go:build !unix

package analyze

import "time"

// processCPU is not measured here; the benchmark then reports no CPU rate.
func processCPU() time.Duration { return 0 }
