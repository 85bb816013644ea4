package cli

import (
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// auditCluster runs the checks only several nodes together can show: links,
// topology, consistency, and the DF-ping mesh's results from caps (when the
// nodes were captured over SSH). It returns nil for fewer than two nodes.
func auditCluster(nodes []*facts.Node, caps []hostCapture) *report.Cluster {
	if len(nodes) < 2 {
		return nil
	}
	var pings []cluster.PingResult
	meshed := false
	for _, c := range caps {
		pings = append(pings, c.Pings...)
		meshed = meshed || c.Meshed
	}
	return cluster.Analyze(nodes).Report(pings, meshed)
}
