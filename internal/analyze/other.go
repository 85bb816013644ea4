package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

func (a *analysis) perftest(runs []results.PerftestRun) {
	a.res.Data.Perftest = runs
	var names []string
	for i := range runs {
		r := &runs[i]
		names = append(names, strings.TrimPrefix(perftestName(r), "perftest ")) // "perftest bw", not "perftest perftest bw"
		switch {
		case r.Kind == "lat" && len(r.Lat) > 0:
			a.res.Items = append(a.res.Items, a.latItem(r))
		case len(r.BW) > 0:
			a.res.Items = append(a.res.Items, a.bwItem(r))
		}
		if r.MTU > 0 && r.MTU < 4096 && len(r.BW) > 0 {
			// Said, not judged: NVIDIA's own reference runs (92.57 and 97.28
			// Gb/s) show "Mtu : 1024[B]" too; the NCCL diagnosis names a short
			// path MTU only as a possible cause of a shortfall.
			a.flag(report.Info, "rdma.path-mtu", fmt.Sprintf("%s ran at an RDMA path MTU of %d B, not 4096: fine when the rate is as expected, a suspect when it is short", perftestName(r), r.MTU),
				fmt.Sprintf("Mtu : %d[B]", r.MTU),
				"for 4096: netdev MTU 9000 on both ends (RoCE's active MTU 4096 needs at least 4200)",
				"docs/dgx-spark.md (MTU 9000; RoCE active_mtu 4096 needs MTU >= 4200)")
		}
	}
	a.res.Measured = "perftest " + strings.Join(uniq(names), ", ")
	if agg, ok := a.aggregate(runs); ok {
		a.res.Items = append(a.res.Items, agg)
	}
}

func perftestName(r *results.PerftestRun) string {
	s := r.Tool()
	if r.Device != "" {
		s += " on " + r.Device
	}
	return s
}

// perftestSummary says what the run's header showed: rows, MTU, connection
// and QPs, each only where the header was in the text.
func perftestSummary(r *results.PerftestRun) string {
	parts := []string{fmt.Sprintf("%d row%s", len(r.BW), plural(len(r.BW)))}
	if r.MTU > 0 {
		parts = append(parts, fmt.Sprintf("MTU %d B", r.MTU))
	}
	if r.Connection != "" {
		parts = append(parts, r.Connection)
	}
	if r.QPs > 0 {
		parts = append(parts, fmt.Sprintf("%d QP%s", r.QPs, plural(r.QPs)))
	}
	if r.MTU == 0 && r.Connection == "" && r.QPs == 0 {
		parts = append(parts, "the run's header is not in the text")
	}
	return strings.Join(parts, "; ")
}

func (a *analysis) bwItem(r *results.PerftestRun) report.AnalysisItem {
	best, size := r.SteadyAvgGbps()
	it := report.AnalysisItem{Subject: perftestName(r), Metric: "BW average", Value: round2(best), Unit: "Gb/s", AtSize: size, Verdict: report.VerdictNone}
	it.Summary = perftestSummary(r)
	if r.Unit != "" && r.Unit != "Gb/sec" {
		it.Summary += fmt.Sprintf("; printed in %s (2^20 B/s), converted", r.Unit)
	}
	if r.RunInfinitely {
		it.Notes = append(it.Notes, "--run_infinitely: one row per interval, peak not measured; the median interval is judged")
	}
	if r.Duration {
		it.Notes = append(it.Notes, "duration mode: iterations are counted, not set")
	}
	q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMABW, Verb: r.Verb}
	if e := a.set.Find(q); len(e) > 0 {
		a.compare(&it, e[0])
	} else {
		it.NoExpectation = a.noExpectation(r.Tool())
	}
	if w, ok := a.set.Wire(a.res.Platform, "network"); ok {
		a.wire(&it, best/8, &w)
		if a.res.Platform == "dgx-spark" {
			it.Notes = append(it.Notes, "one RoCE device is one PCIe Gen5 x4 twin, good for ~100 Gb/s: a single run reaches about half the 200 Gb/s port")
		}
	}
	it.Causes = diagnose.Causes(diagnose.Input{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMABW,
		Ratio: ratioOf(it), Verdict: it.Verdict, Perftest: r})
	return it
}

// aggregate sums concurrent bandwidth runs on distinct devices in one file
// (NVIDIA's guide runs one ib_write_bw per twin and adds them).
func (a *analysis) aggregate(runs []results.PerftestRun) (report.AnalysisItem, bool) {
	devs := map[string]float64{}
	verb := ""
	for i := range runs {
		r := &runs[i]
		if r.Kind != "bw" || r.Device == "" || len(r.BW) == 0 {
			continue
		}
		best, _ := r.SteadyAvgGbps()
		devs[r.Device] = max(devs[r.Device], best)
		verb = r.Verb
	}
	if len(devs) < 2 {
		return report.AnalysisItem{}, false
	}
	var sum float64
	for _, v := range devs {
		sum += v
	}
	it := report.AnalysisItem{Subject: fmt.Sprintf("ib_%s_bw summed over %d devices", verb, len(devs)), Metric: "sum of BW averages",
		Value: round2(sum), Unit: "Gb/s", Verdict: report.VerdictNone,
		Notes: []string{"assumes the runs in this file ran at the same time, one per device (as in NVIDIA's twin benchmark)"}}
	q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMABWAggr, Verb: verb, Devices: len(devs)}
	if e := a.set.Find(q); len(e) > 0 {
		a.compare(&it, e[0])
	} else {
		it.NoExpectation = a.noExpectation(fmt.Sprintf("ib_%s_bw over %d devices", verb, len(devs)))
	}
	if w, ok := a.set.Wire(a.res.Platform, "network"); ok {
		a.wire(&it, sum/8, &w)
	}
	// rails judged against each other by the rule NCCL's diagnostics use
	names := make([]string, 0, len(devs))
	for d := range devs {
		names = append(names, d)
	}
	sort.Strings(names)
	vals := make([]float64, len(names))
	for i, d := range names {
		vals[i] = devs[d]
	}
	if med, out := diagnose.OffMedian(vals, diagnose.OffMedianFraction); len(out) > 0 {
		for _, i := range out {
			a.flag(report.Warn, "rdma.rail-off-median", fmt.Sprintf("%s: %.2f Gb/s is more than %.0f %% below the median of the %d devices (%.2f Gb/s)", names[i], vals[i], diagnose.OffMedianFraction*100, len(names), med),
				fmt.Sprintf("ib_%s_bw on %s", verb, names[i]), "check that device's link (speed, MTU, errors) and cable", "diagnose.OffMedian (NCCL diagnostics' 30 % rule)")
		}
	}
	return it, true
}

func (a *analysis) latItem(r *results.PerftestRun) report.AnalysisItem {
	row := r.Lat[0]
	it := report.AnalysisItem{Subject: perftestName(r), Metric: "t_avg", Unit: "us", AtSize: row.Bytes, Verdict: report.VerdictNone}
	if row.AvgUS != nil {
		it.Value = *row.AvgUS
	}
	it.Summary = fmt.Sprintf("t_min %s, t_typical %s, t_max %s, 99%% %s, 99.9%% %s us over %d iterations; MTU %d B",
		fmtp(row.MinUS), fmtp(row.TypicalUS), fmtp(row.MaxUS), fmtp(row.P99US), fmtp(row.P999US), row.Iterations, r.MTU)
	q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMALat, Verb: r.Verb}
	if e := a.set.Find(q); len(e) > 0 {
		a.compare(&it, e[0])
	} else {
		it.NoExpectation = a.noExpectation(r.Tool())
	}
	it.Causes = diagnose.Causes(diagnose.Input{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.RDMALat,
		Ratio: ratioOf(it), Verdict: it.Verdict, Perftest: r})
	return it
}

func fmtp(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

func (a *analysis) iperf3(r *results.Iperf3Result) {
	a.res.Data.Iperf3 = r
	if r.Error != "" {
		a.res.Measured = "iperf3 " + r.Role
		a.res.Error = "iperf3 reported an error: " + r.Error
		return
	}
	a.res.Measured = strings.TrimSpace("iperf3 " + r.Protocol + " " + r.Role)
	if r.Streams > 0 {
		a.res.Measured += fmt.Sprintf(", %d stream%s", r.Streams, plural(r.Streams))
	}
	it := report.AnalysisItem{Subject: "iperf3 " + r.Protocol, Metric: "received", Value: round3(r.ReceivedGbps), Unit: "Gb/s", Verdict: report.VerdictNone}
	switch {
	case r.Role == "server":
		it.Subject = strings.TrimSpace(fmt.Sprintf("iperf3 %s from %s", r.Protocol, r.Remote)) + " (server side)"
	case r.Remote != "":
		it.Subject = fmt.Sprintf("iperf3 %s to %s", r.Protocol, r.Remote)
	}
	it.Summary = fmt.Sprintf("sent %.3f Gb/s, received %.3f Gb/s; %d intervals (%d omitted) from %.3f to %.3f Gb/s", r.SentGbps, r.ReceivedGbps,
		r.Intervals, r.OmittedIntervals, r.MinIntervalGbps, r.MaxIntervalGbps)
	switch a.iperfText {
	case "sender":
		it.Summary = fmt.Sprintf("sent %.3f Gb/s (the receiver's rate is not in the text); %d intervals (%d omitted) from %.3f to %.3f Gb/s", r.SentGbps,
			r.Intervals, r.OmittedIntervals, r.MinIntervalGbps, r.MaxIntervalGbps)
	case "intervals":
		it.Summary = fmt.Sprintf("mean of %d intervals %.3f Gb/s (%d omitted), from %.3f to %.3f Gb/s; no summary rate in the text", r.Intervals, r.ReceivedGbps,
			r.OmittedIntervals, r.MinIntervalGbps, r.MaxIntervalGbps)
	}
	if r.Retransmits != nil {
		it.Summary += fmt.Sprintf("; %d retransmits", *r.Retransmits)
	}
	if r.LostPercent != nil {
		it.Summary += fmt.Sprintf("; %.2f %% lost, jitter %.3f ms", *r.LostPercent, *r.JitterMS)
	}
	q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.TCPBW, Protocol: r.Protocol}
	e := a.set.Find(q)
	if len(e) > 0 {
		a.compare(&it, e[0])
	} else {
		it.NoExpectation = a.noExpectation("iperf3 " + r.Protocol)
	}
	a.iperf3SingleStream(r, len(e) > 0)
	if w, ok := a.set.Wire(a.res.Platform, "network"); ok {
		a.wire(&it, r.ReceivedGbps/8, &w)
	}
	it.Notes = append(it.Notes, r.Protocol+" goes through the kernel network stack; NCCL and perftest use RDMA and reach more on the same link")
	switch a.iperfText {
	case "sender":
		it.Notes = append(it.Notes, "text output without the receiver's summary line: the sender's rate is judged")
	case "intervals":
		it.Notes = append(it.Notes, "text output without a receiver or sender rate in its summary: the mean of the interval rates is judged")
	}
	it.Causes = diagnose.Causes(diagnose.Input{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.TCPBW,
		Ratio: ratioOf(it), Verdict: it.Verdict})
	a.res.Items = append(a.res.Items, it)
}

// tcpProbe judges sparkrig's own TCP probe like iperf3: throughput against
// the TCP expectation and the wire; round trips are reported, not judged.
func (a *analysis) tcpProbe(rs []results.TCPProbeResult) {
	a.res.Measured = fmt.Sprintf("sparkrig TCP probe, %d run%s", len(rs), plural(len(rs)))
	for _, r := range rs {
		it := report.AnalysisItem{Subject: "TCP probe", Metric: "received", Value: round2(r.Gbps), Unit: "Gb/s", Verdict: report.VerdictNone,
			Summary: fmt.Sprintf("%d streams over %.1f s", r.Streams, r.DurationS)}
		q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.TCPBW, Protocol: "TCP"}
		if e := a.set.Find(q); len(e) > 0 {
			a.compare(&it, e[0])
		} else {
			it.NoExpectation = a.noExpectation("TCP")
		}
		if w, ok := a.set.Wire(a.res.Platform, "network"); ok {
			a.wire(&it, r.Gbps/8, &w)
		}
		it.Causes = diagnose.Causes(diagnose.Input{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.TCPBW,
			Ratio: ratioOf(it), Verdict: it.Verdict})
		rtt := report.AnalysisItem{Subject: "TCP probe", Metric: "round trip", Value: round2(r.RTTAvgUS), Unit: "us", Verdict: report.VerdictNone,
			NoExpectation: "no expectation for a TCP round trip",
			Summary:       fmt.Sprintf("min %.1f, p99 %.1f us over %d round trips", r.RTTMinUS, r.RTTP99US, r.RTTSamples)}
		a.res.Items = append(a.res.Items, it, rtt)
	}
}

func (a *analysis) nvbandwidth(run *results.NVBandwidthRun) {
	a.res.Data.NVBandwidth = run
	var names []string
	for i := range run.Tests {
		m := &run.Tests[i]
		names = append(names, m.Name)
		it := report.AnalysisItem{Subject: m.Name, Metric: "max", Value: m.Max, Unit: "GB/s", Verdict: report.VerdictNone}
		it.Summary = fmt.Sprintf("%dx%d matrix; min %.2f, mean %.2f, max %.2f GB/s", len(m.Rows), len(m.Columns), m.Min, m.Mean, m.Max)
		if m.Sum != nil {
			it.Summary += fmt.Sprintf("; SUM %.2f", *m.Sum)
		}
		it.NoExpectation = a.noExpectation(m.Name)
		applies := "nvlink"
		if strings.HasPrefix(m.Name, "host_to_device") || strings.HasPrefix(m.Name, "device_to_host") {
			applies = "host-link"
		}
		if w, ok := a.set.Wire(a.res.Platform, applies); ok {
			a.wire(&it, m.Max, &w)
		}
		if m.Min > 0 && m.Min < 0.9*m.Mean {
			it.Notes = append(it.Notes, fmt.Sprintf("the slowest pair (%.2f GB/s) is more than 10 %% below the mean (%.2f)", m.Min, m.Mean))
		}
		a.res.Items = append(a.res.Items, it)
	}
	a.res.Measured = "nvbandwidth " + strings.Join(names, ", ")
}
