package cli

import (
	"context"
	"os"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/qualify"
	"github.com/sparkrig/sparkrig/internal/report"
)

// doctorQualify runs doctor --qualify's traffic test (qualify.Links) over
// the nodes captured and adds its directions and findings to the report.
func doctorQualify(ctx context.Context, env *Env, opts *doctorOptions, caps []hostCapture, r *report.Report) error {
	var nodes []*facts.Node
	for _, c := range caps {
		if c.Err == nil && c.Facts != nil {
			n := *c.Facts
			n.Host = c.Host
			nodes = append(nodes, &n)
		}
	}
	t, err := opts.remote.runner(env) // the capture's: each host is dialled once
	if err != nil {
		return exitf(ExitUnknown, "doctor: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return exitf(ExitUnknown, "doctor: --qualify: %v", err)
	}
	env.cleansUp.Store(true) // an interrupt waits for the nodes to be cleaned up
	res, err := qualify.Links(ctx, qualify.LinksOptions{Runner: t, Nodes: nodes, Topology: r.Cluster.Topology, Self: self,
		ToolVersion: Version, Now: env.Now, Log: env.Stderr})
	if err != nil {
		return exitf(ExitUnknown, "doctor: %v", err)
	}
	r.Cluster.Qualified = res.Qualified
	r.Cluster.Findings = append(r.Cluster.Findings, res.Findings...)
	return nil
}
