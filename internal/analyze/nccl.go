package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/topology"
)

func (a *analysis) nccl(o *results.NCCLOutput) {
	log := &o.Log
	if log.InfoLines > 0 || log.Version != "" || log.WarnCount > 0 || log.AttnCount > 0 || len(log.Diag) > 0 {
		a.res.Data.NCCLLog = log
		a.flags(log)
		a.diagFlags(log)
	}
	a.res.Data.NCCLTables = o.Tables
	for i := range o.Tables {
		a.res.Items = append(a.res.Items, a.ncclItem(&o.Tables[i], log))
	}
	a.launchCauses(o)
	for _, t := range o.Tables {
		if t.Footers > 1 {
			a.flag(report.Fail, "nccl-tests.not-built-with-mpi", fmt.Sprintf("%d 'Avg bus bandwidth' footers for one test: each process ran a test of its own, so nothing was measured between them (nccl-tests built without MPI=1, started by mpirun or srun)", t.Footers),
				fmt.Sprintf("%d footers, %d rows", t.Footers, len(t.Rows)), "rebuild nccl-tests with MPI=1 (make clean; make MPI=1 MPI_HOME=…) and run it again", "https://github.com/NVIDIA/nccl-tests/issues/182")
			break
		}
	}
	a.minBWFailed(o.Tables)
	if o.Unparsed > 0 {
		a.note("%d table rows could not be read and were skipped", o.Unparsed)
	}
	if o.Wrapped > 0 {
		a.note("%d table row%s read whole from two lines (the paste wrapped %s)", o.Wrapped, plural(o.Wrapped), map[bool]string{true: "it", false: "them"}[o.Wrapped == 1])
	}
	if o.DroppedTables > 0 {
		a.note("%d further tables were not kept (more than %d in one input)", o.DroppedTables, len(o.Tables))
	}
	if need := a.set.NCCLMin(a.res.Platform); need != "" && log.Version == "" {
		for _, t := range o.Tables {
			if t.NCCLVersion != "" && !expect.VersionAtLeast(t.NCCLVersion, need) {
				a.flag(report.Warn, "nccl.too-old", fmt.Sprintf("NCCL %s is older than %s, the minimum for %s", t.NCCLVersion, need, a.res.Platform),
					"nccl-tests header: nccl-library "+t.NCCLVersion, "install NCCL >= "+need+" ("+sparkNCCLRelease()+") and rebuild nccl-tests against it", "seed 000")
				break
			}
		}
	}
	a.res.Measured = ncclMeasured(o)
}

func ncclMeasured(o *results.NCCLOutput) string {
	if len(o.Tables) == 0 {
		l := &o.Log
		parts := []string{"NCCL_DEBUG=INFO log"}
		if l.Version != "" {
			parts = append(parts, "NCCL "+l.Version)
		}
		if l.Network != "" {
			parts = append(parts, "network "+l.Network)
		}
		if l.NRanks > 0 {
			parts = append(parts, rankNodes(l.NRanks, l.NNodes))
		}
		return strings.Join(parts, ", ")
	}
	var names []string
	for _, t := range o.Tables {
		names = append(names, collName(&t))
	}
	t := o.Tables[0]
	tool := t.Tool
	if tool == "" {
		tool = "nccl-tests"
	}
	s := fmt.Sprintf("%s %s", tool, strings.Join(uniq(names), ", "))
	if len(o.Tables) > 1 {
		s += fmt.Sprintf(" (%d tables)", len(o.Tables))
	}
	return s + ", " + rankNodes(t.Ranks, t.Nodes) + ", " + sizeRange(&t)
}

func collName(t *results.NCCLTable) string {
	if t.Collective == "" {
		return "unknown collective"
	}
	return t.Collective
}

func rankNodes(ranks, nodes int) string {
	r := "unknown ranks"
	if ranks > 0 {
		r = fmt.Sprintf("%d rank%s", ranks, plural(ranks))
	}
	if nodes > 0 {
		return fmt.Sprintf("%s on %d node%s", r, nodes, plural(nodes))
	}
	return r
}

func sizeRange(t *results.NCCLTable) string {
	if len(t.Rows) == 0 {
		return "no sizes"
	}
	lo, hi := t.Rows[0].SizeBytes, t.Rows[len(t.Rows)-1].SizeBytes
	if lo == hi {
		return results.HumanSize(lo)
	}
	return results.HumanSize(lo) + "–" + results.HumanSize(hi)
}

func (a *analysis) ncclItem(t *results.NCCLTable, log *results.NCCLLog) report.AnalysisItem {
	it := report.AnalysisItem{Subject: collName(t) + ", " + rankNodes(t.Ranks, t.Nodes), Metric: "busbw peak", Unit: "GB/s",
		Value: t.PeakBusBWGBs, AtSize: t.PeakSize, Verdict: report.VerdictNone}
	sizes := make([]int64, len(t.Rows))
	for i, r := range t.Rows {
		sizes[i] = r.SizeBytes
	}
	q := expect.Query{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.NCCLBusBW,
		Collective: t.Collective, Sizes: sizes, Ranks: t.Ranks}
	if exps := a.set.Find(q); len(exps) > 0 {
		e := exps[0]
		it.Value, it.AtSize = plateau(t, e.SizesIn(sizes))
		it.Metric = "busbw plateau"
		a.compare(&it, e)
	} else {
		it.NoExpectation = a.noExpectation(fmt.Sprintf("%s busbw with %s", collName(t), rankNodes(t.Ranks, t.Nodes)))
	}
	it.Summary = tableSummary(t)
	it.Notes = a.busbwNotes(t, log, &it)
	if t.WrongResults > 0 || t.OutOfBounds != nil && *t.OutOfBounds > 0 {
		it.Verdict = report.VerdictCritical
	}
	if t.CollectiveGuessed {
		it.Notes = append(it.Notes, "no line names the collective; all_reduce was told from the redop column and busbw/algbw")
	}
	if t.RanksInferred {
		it.Notes = append(it.Notes, fmt.Sprintf("no device lines; %d ranks follow from busbw/algbw", t.Ranks))
	}
	if !t.Complete {
		it.Notes = append(it.Notes, "the table ends without its footer: the output was cut or the run stopped early")
	}
	it.Causes = diagnose.Causes(diagnose.Input{Platform: a.res.Platform, Topology: a.res.Topology, Measure: expect.NCCLBusBW,
		Ratio: ratioOf(it), Verdict: it.Verdict, Table: t, Log: logOrNil(log), NCCLMin: a.set.NCCLMin(a.res.Platform)})
	return it
}

func logOrNil(l *results.NCCLLog) *results.NCCLLog {
	if l == nil || l.InfoLines == 0 && l.Version == "" {
		return nil
	}
	return l
}

func ratioOf(it report.AnalysisItem) float64 {
	if it.Ratio == nil {
		return 0
	}
	return *it.Ratio
}

// plateau is the best busbw (either placement) among the given sizes: the
// large-message plateau, not the footer average over every size.
func plateau(t *results.NCCLTable, sizes []int64) (float64, int64) {
	in := map[int64]bool{}
	for _, s := range sizes {
		in[s] = true
	}
	var best float64
	var at int64
	for _, r := range t.Rows {
		if !in[r.SizeBytes] {
			continue
		}
		for _, tm := range []results.Timing{r.OOP, r.IP} {
			if tm.BusBWGBs != nil && *tm.BusBWGBs > best {
				best, at = *tm.BusBWGBs, r.SizeBytes
			}
		}
	}
	return best, at
}

func tableSummary(t *results.NCCLTable) string {
	var parts []string
	last := t.Rows[len(t.Rows)-1]
	if last.OOP.BusBWGBs != nil && last.IP.BusBWGBs != nil {
		parts = append(parts, fmt.Sprintf("at %s busbw %.2f out-of-place, %.2f in-place", results.HumanSize(last.SizeBytes), *last.OOP.BusBWGBs, *last.IP.BusBWGBs))
	}
	if t.PeakBusBWGBs > 0 {
		parts = append(parts, fmt.Sprintf("peak %.2f GB/s at %s", t.PeakBusBWGBs, results.HumanSize(t.PeakSize)))
	} else if t.Ranks == 1 {
		parts = append(parts, "busbw is 0 with one rank (nothing moves between ranks): algbw is the figure")
	}
	if t.AvgBusBWGBs != nil {
		parts = append(parts, fmt.Sprintf("footer average %.2f GB/s (over every size, not judged)", *t.AvgBusBWGBs))
	}
	parts = append(parts, fmt.Sprintf("%d size%s %s", len(t.Rows), plural(len(t.Rows)), sizeRange(t)))
	if t.WrongResults > 0 {
		parts = append(parts, fmt.Sprintf("%d WRONG elements", t.WrongResults))
	}
	if t.NCCLVersion != "" {
		parts = append(parts, "NCCL "+t.NCCLVersion)
	}
	return strings.Join(parts, "; ")
}

// busbwNotes says how to read busbw for this run, and states it as a
// fraction of the wire where the wire is known.
func (a *analysis) busbwNotes(t *results.NCCLTable, log *results.NCCLLog, it *report.AnalysisItem) []string {
	var notes []string
	k, n := t.Nodes, t.Ranks
	if k == 0 && log != nil {
		k = log.NNodes
	}
	if k == 0 {
		k = nodesOf(a.res.Topology)
	}
	switch {
	case k >= 2 && n >= k:
		share := it.Value
		if n > k {
			share = it.Value * float64(k-1) / float64(n-1)
			notes = append(notes, fmt.Sprintf("per-GPU network share = busbw·(k−1)/(n−1) = %.2f·%d/%d = %.2f GB/s (k=%d nodes, n=%d GPUs)", it.Value, k-1, n-1, share, k, n))
		} else {
			notes = append(notes, "one GPU per node: busbw is the per-GPU network share")
		}
		if t.Collective == "all_reduce" && k == 2 {
			notes = append(notes, "busbw equals a wire speed only for ring; on 2 nodes NCCL may choose tree for all_reduce, whose busbw can exceed the NIC rate")
		} else {
			notes = append(notes, "ring algorithm: busbw ≈ the per-GPU wire speed at large sizes")
		}
		a.wire(it, share, a.networkWire(log))
	case n == 1:
		// One rank moves nothing between ranks: no wire to compare with.
	case k == 1:
		notes = append(notes, "single node: busbw is bounded by the GPU-to-GPU fabric (NVLink/NVSwitch or PCIe), not the network")
		if w, ok := a.set.Wire(a.res.Platform, "nvlink"); ok {
			a.wire(it, it.Value, &w)
		}
	}
	return notes
}

// nodesOf is the node count a topology implies (0 for a switch).
func nodesOf(t string) int { return topology.Kind(t).Nodes() }

func (a *analysis) networkWire(log *results.NCCLLog) *expect.Wire {
	applies := "network"
	if a.res.Topology == "two-nodes-two-cables" {
		applies = "network-2-cables"
	}
	if w, ok := a.set.Wire(a.res.Platform, applies); ok {
		return &w
	}
	if log != nil && len(log.IBDevices) > 0 && log.IBDevices[0].SpeedMbps > 0 {
		if w, ok := a.set.Wire("any", fmt.Sprintf("nic-%d", log.IBDevices[0].SpeedMbps/1000)); ok {
			return &w
		}
	}
	return nil
}

func (a *analysis) wire(it *report.AnalysisItem, compared float64, w *expect.Wire) {
	if w == nil || w.Value <= 0 {
		return
	}
	it.Wire = &report.WireRef{Name: w.Name, Compared: round2(compared), Value: w.Value, Unit: w.Unit,
		Fraction: round3(compared / w.Value), Source: w.Source}
}

// compare fills the expectation, ratio and verdict of an item.
func (a *analysis) compare(it *report.AnalysisItem, e expect.Expectation) {
	it.Expectation = &report.ExpectationRef{ID: e.ID, Value: e.Value, Unit: e.Unit, Better: e.Better,
		Warn: e.Warn, Pass: e.Pass, Conditions: conditions(e), Source: e.Source}
	r := round3(it.Value / e.Value)
	it.Ratio = &r
	it.Verdict = report.Verdict(e.Verdict(it.Value))
}

func conditions(e expect.Expectation) string {
	c := e.Conditions
	parts := []string{e.Platform, e.Topology}
	if c.Collective != "" {
		parts = append(parts, c.Collective)
	}
	if c.Ranks > 0 {
		parts = append(parts, fmt.Sprintf("%d ranks", c.Ranks))
	}
	switch {
	case c.MinSize > 0 && c.MaxSize > 0:
		parts = append(parts, "sizes "+results.HumanSize(c.MinSize)+"–"+results.HumanSize(c.MaxSize))
	case c.MinSize > 0:
		parts = append(parts, "sizes ≥ "+results.HumanSize(c.MinSize))
	}
	if c.Verb != "" {
		parts = append(parts, c.Verb)
	}
	if c.Devices > 0 {
		parts = append(parts, fmt.Sprintf("%d devices", c.Devices))
	}
	if c.NCCLMin != "" {
		parts = append(parts, "NCCL ≥ "+c.NCCLMin)
	}
	return strings.Join(parts, ", ")
}

// noExpectation explains why nothing was compared.
func (a *analysis) noExpectation(what string) string {
	switch {
	case a.res.Platform == "":
		return "no expectation: the platform is not in the file (give --platform " + strings.Join(expect.Platforms, "|") + ")"
	case a.res.Topology == "":
		return "no expectation: the topology is not in the file (give --topology " + strings.Join(expect.Topologies, "|") + ")"
	}
	return fmt.Sprintf("no expectation for %s on %s, %s", what, a.res.Platform, a.res.Topology)
}

func (a *analysis) note(format string, args ...any) {
	a.res.Notes = append(a.res.Notes, fmt.Sprintf(format, args...))
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// minBWFailed flags nccl-tests' own bandwidth check failing: with
// NCCL_TESTS_MIN_BW set, the footer's average (over every size) below 90 %
// of it ends in FAILED and the process exits non-zero.
func (a *analysis) minBWFailed(tables []results.NCCLTable) {
	for _, t := range tables {
		if !t.MinBWFailed {
			continue
		}
		seen := "# Avg bus bandwidth : FAILED"
		if t.AvgBusBWGBs != nil {
			seen = fmt.Sprintf("# Avg bus bandwidth : %g FAILED", *t.AvgBusBWGBs)
		}
		a.flag(report.Warn, "nccl-tests.min-bw-failed", fmt.Sprintf("nccl-tests' own bandwidth check failed for %s: the average bus bandwidth over every size is below 90 %% of NCCL_TESTS_MIN_BW, so the test exits non-zero", collName(&t)),
			seen, "judge the large-message rows against the link (the average counts the small sizes too); set NCCL_TESTS_MIN_BW from a healthy run of the same sizes, or measure only large sizes (-b 1G)",
			"https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/src/common.cu (NCCL_TESTS_MIN_BW read as check_avg_bw; the run fails when bw[0] < check_avg_bw*0.9) and src/util.cu (writeResultFooter: \"Avg bus bandwidth\" followed by FAILED or OK)")
		return
	}
}
