package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/results"
)

// reconcile settles the node and rank counts when the lines of one input
// disagree (a PDF or a paste that lost device lines, NCCL's own counts,
// the hosts in the prefixes): any line naming a distinct host proves a
// node, so the largest count is taken, and the disagreement is said once
// instead of printing both.
func reconcile(o *results.NCCLOutput) []string {
	var notes []string
	l := &o.Log
	hosts := len(l.Hosts)
	for i := range o.Tables {
		t := &o.Tables[i]
		devHosts := t.Nodes
		switch {
		case hosts > t.Nodes && len(t.Devices) > 0:
			notes = append(notes, fmt.Sprintf("the device lines name %d host%s but NCCL's lines come from %d (%s): %d nodes are used; device lines are missing from the input",
				devHosts, plural(devHosts), hosts, strings.Join(l.Hosts, ", "), hosts))
			t.Nodes = hosts
		case l.NNodes > t.Nodes && t.Nodes > 0:
			notes = append(notes, fmt.Sprintf("the device lines name %d host%s but NCCL reports nNodes %d: %d nodes are used", devHosts, plural(devHosts), l.NNodes, l.NNodes))
			t.Nodes = l.NNodes
		case t.Nodes == 0 && l.NNodes > 0:
			t.Nodes = l.NNodes
		}
		switch {
		case l.NRanks > t.Ranks && len(t.Devices) > 0:
			notes = append(notes, fmt.Sprintf("the device lines list %d rank%s but NCCL reports nRanks %d: %d ranks are used", len(t.Devices), plural(len(t.Devices)), l.NRanks, l.NRanks))
			t.Ranks = l.NRanks
		case t.Ranks > 0 && t.Ranks < t.Nodes:
			// fewer ranks than nodes cannot be: the device lines are incomplete
			notes = append(notes, fmt.Sprintf("the device lines list %d rank%s on %d nodes: the rank count is unknown", t.Ranks, plural(t.Ranks), t.Nodes))
			t.Ranks, t.RanksInferred = 0, false
		}
	}
	if l.NNodes > 0 && hosts > l.NNodes {
		notes = append(notes, fmt.Sprintf("NCCL reports nNodes %d but its lines come from %d hosts (%s): the log holds several communicators or jobs", l.NNodes, hosts, strings.Join(l.Hosts, ", ")))
	}
	return notes
}
