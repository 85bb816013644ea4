package cli

import (
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// auditCluster runs the checks only several nodes together can show. It
// returns nil for fewer than two nodes.
func auditCluster(nodes []*facts.Node) *report.Cluster { return nil }
