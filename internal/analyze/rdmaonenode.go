package analyze

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/results"
)

// rdmaOnlySignatures are the error signatures that say only that NCCL
// cannot use the RDMA NICs. A job whose ranks all run on one host moves
// its data over P2P and shared memory and needs no network transport, so
// for it they explain nothing.
var rdmaOnlySignatures = map[string]bool{"ibverbs-missing": true}

// rdmaUnneededOneNode takes the RDMA-only signatures out of the hits of a
// job shown to run on one host, and says so in a note. Shown: NCCL's
// nNodes 1 or one host with no channel via NET (results.SingleNode), or
// nccl-tests' device list naming every rank of the job on one host (a
// count that equals NCCL's nranks when the log prints it). Against:
// another host in any line, a channel via NET/IB.
func (a *analysis) rdmaUnneededOneNode(o *results.NCCLOutput, hits []diagnose.ErrorHit) []diagnose.ErrorHit {
	idx := -1
	for i, h := range hits {
		if rdmaOnlySignatures[h.Signature.ID] {
			idx = i
			break
		}
	}
	if idx < 0 {
		return hits
	}
	why, ok := oneHostJob(o)
	if !ok {
		return hits
	}
	kept := make([]diagnose.ErrorHit, 0, len(hits))
	for _, h := range hits {
		if rdmaOnlySignatures[h.Signature.ID] {
			a.note("line %d: %s — NCCL cannot use the RDMA NICs, which this job does not need: %s, and a job on one host moves its data over P2P and shared memory (not read as a cause)", h.Line, h.First, why)
			continue
		}
		kept = append(kept, h)
	}
	return kept
}

// oneHostJob says whether the lines show every rank of the job on one
// host, and how.
func oneHostJob(o *results.NCCLOutput) (string, bool) {
	l := &o.Log
	if kinds, _ := l.TransportKinds(); kinds["NET/IB"] > 0 || l.NNodes > 1 || len(l.Hosts) > 1 {
		return "", false
	}
	if ok, why := l.SingleNode(); ok {
		return why, true
	}
	host, ranks := "", 0
	add := func(h string) bool {
		if h == "" || host != "" && h != host {
			return false
		}
		host = h
		return true
	}
	switch {
	case len(o.Tables) > 0 && len(o.Tables[0].Devices) > 0:
		for _, d := range o.Tables[0].Devices {
			if !add(d.Host) {
				return "", false
			}
		}
		ranks = len(o.Tables[0].Devices)
	case o.Launch.NoRows != nil:
		for _, h := range o.Launch.NoRows.Hosts {
			if !add(h) {
				return "", false
			}
		}
		ranks = o.Launch.NoRows.Ranks
	}
	if host == "" || ranks == 0 || l.NRanks > 0 && l.NRanks != ranks {
		return "", false
	}
	for _, h := range l.Hosts {
		if h != host {
			return "", false
		}
	}
	return fmt.Sprintf("nccl-tests lists all %d rank%s on %s", ranks, plural(ranks), host), true
}
