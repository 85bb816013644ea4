package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// shareMinBytes is the least a host's rails must carry before their shares
// are judged: a step that hardly used the network says nothing about them.
const shareMinBytes = 16 << 20

// trafficShare works out each rail's share of a step's traffic per host
// from the counters read before and after it. RoCE traffic bypasses the
// netdev's own counters, so a port's RDMA counters (4-byte words) are taken
// where they moved more.
func trafficShare(plan *Plan, res *StepResult) []report.RailTraffic {
	type key struct{ host, dev, name string }
	delta := map[key]uint64{}
	for _, c := range res.Counters {
		delta[key{c.Host, c.Dev, c.Name}] = c.Delta()
	}
	var out []report.RailTraffic
	seen := map[string]bool{}
	for _, r := range plan.Rails {
		for _, e := range []Endpoint{r.A, r.B} {
			if seen[e.Host+" "+e.NetDev] {
				continue
			}
			seen[e.Host+" "+e.NetDev] = true
			s := report.RailTraffic{Host: e.Host, NetDev: e.NetDev, Source: "netdev",
				TxBytes: delta[key{e.Host, e.NetDev, "tx_bytes"}], RxBytes: delta[key{e.Host, e.NetDev, "rx_bytes"}]}
			if e.RDMADev != "" {
				port := fmt.Sprintf("%s/%d", e.RDMADev, max(e.Port, 1))
				tx, rx := delta[key{e.Host, port, "port_xmit_data"}]*4, delta[key{e.Host, port, "port_rcv_data"}]*4
				if tx+rx > s.TxBytes+s.RxBytes {
					s.TxBytes, s.RxBytes, s.Source = tx, rx, "rdma"
				}
			}
			out = append(out, s)
		}
	}
	totals := map[string][2]uint64{}
	for _, s := range out {
		t := totals[s.Host]
		totals[s.Host] = [2]uint64{t[0] + s.TxBytes, t[1] + s.RxBytes}
	}
	for i := range out {
		t := totals[out[i].Host]
		if t[0] > 0 {
			out[i].TxShare = float64(out[i].TxBytes) / float64(t[0])
		}
		if t[1] > 0 {
			out[i].RxShare = float64(out[i].RxBytes) / float64(t[1])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// shareFlags flags a rail that carried less than a tenth of its fair share
// of a host's traffic in a step meant to use them all (NCCL, and the
// aggregate RDMA run): one twin or one direction idle.
func shareFlags(st Step, shares []report.RailTraffic) []report.AnalysisFlag {
	if st.Kind != KindNCCL && !(st.Kind == KindRDMA && len(st.Rails) > 1) {
		return nil
	}
	perHost := map[string][]report.RailTraffic{}
	for _, s := range shares {
		perHost[s.Host] = append(perHost[s.Host], s)
	}
	var hosts []string
	for h := range perHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []report.AnalysisFlag
	for _, h := range hosts {
		ss := perHost[h]
		if len(ss) < 2 {
			continue
		}
		fair := 1 / float64(len(ss))
		for dir, name := range []string{"sent", "received"} {
			var total uint64
			for _, s := range ss {
				total += [2]uint64{s.TxBytes, s.RxBytes}[dir]
			}
			if total < shareMinBytes {
				continue
			}
			for _, s := range ss {
				share := [2]float64{s.TxShare, s.RxShare}[dir]
				if share >= fair/10 {
					continue
				}
				var parts []string
				for _, o := range ss {
					parts = append(parts, fmt.Sprintf("%s %.1f %%", o.NetDev, 100*[2]float64{o.TxShare, o.RxShare}[dir]))
				}
				out = append(out, report.AnalysisFlag{ID: "bench.traffic-share", Severity: report.Warn,
					Message:  fmt.Sprintf("%s %s %.1f %% of %s's bytes: NCCL used the other rail(s), not this one", s.NetDev, name, 100*share, h),
					Evidence: fmt.Sprintf("%s of %s by rail: %s (%s counters)", name, h, strings.Join(parts, ", "), s.Source),
					Fix:      "list every addressed twin in NCCL_IB_HCA, in the same order on every node, and check NCCL_IB_SUBNET_AWARE_ROUTING on rings (sparkrig fix writes both)",
					Source:   "christopherowen/dgx-spark-networking docs/nccl.md (a stock 4-node ring measured ~99.5 % / 0.5 % of RDMA bytes on its two directions); DGX Spark platform notes, pitfall 18"})
			}
		}
	}
	return out
}
