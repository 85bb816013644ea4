package fix

import (
	"github.com/sparkrig/sparkrig/internal/cluster"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// AttributePings adds to the plan the don't-fragment ping findings its MTU
// changes resolve. The mesh is a measurement, so no simulation of the
// planned state can rerun it; but a probe that lost every full-size frame
// while 1500-byte frames passed shows an MTU mismatch between its two ends,
// and a plan that leaves both ends on one MTU, changing either, removes it.
// The finding goes with the change of each end whose MTU the plan changes.
func AttributePings(p *Plan, pings []facts.PingResult) {
	if p == nil {
		return
	}
	type end struct{ host, netdev string }
	planned := map[end]int{}
	for _, h := range p.Hosts {
		for _, r := range h.Rails {
			planned[end{h.Host, r.NetDev}] = r.MTU
		}
	}
	for _, r := range pings {
		if r.ErrText != "" || !r.FullOK || r.Full.Received > 0 || r.Small == nil || r.Small.Received == 0 {
			continue
		}
		from, okFrom := planned[end{r.From.Host, r.From.NetDev}]
		to, okTo := planned[end{r.To.Host, r.To.NetDev}]
		if !okFrom || !okTo || from != to {
			continue
		}
		f := cluster.PingFindings([]facts.PingResult{r})[0]
		if f.Severity != report.Warn && f.Severity != report.Fail {
			continue
		}
		if from != r.From.MTU {
			addResolves(p, r.From.Host, f.Key())
		}
		if to != r.To.MTU {
			addResolves(p, r.To.Host, f.Key())
		}
	}
}

// addResolves records k on the host's rail change: its netplan file, or
// the activation of the files it already has.
func addResolves(p *Plan, host string, k report.Key) {
	for i := range p.Hosts {
		hp := &p.Hosts[i]
		if hp.Host != host {
			continue
		}
		for j := range hp.Files {
			if c := &hp.Files[j]; c.Path == NetplanPath && c.Changed() {
				c.Resolves = appendKey(c.Resolves, k)
				return
			}
		}
		if hp.Reactivate != nil {
			hp.Reactivate.Resolves = appendKey(hp.Reactivate.Resolves, k)
		}
	}
}

func appendKey(ks []report.Key, k report.Key) []report.Key {
	for _, have := range ks {
		if have == k {
			return ks
		}
	}
	ks = append(ks, k)
	sortKeys(ks)
	return ks
}
