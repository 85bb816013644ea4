package triage

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// Verdicts, worst first.
const (
	VerdictRankMissing = "rank-missing" // a rank's process or node died or stopped answering
	VerdictOutOfSync   = "out-of-sync"  // counts frozen but different: the lagging rank is the suspect
	VerdictStuck       = "stuck"        // counts frozen and equal: a stuck kernel or host
	VerdictSpinning    = "spinning"     // GPUs busy at idle power while nothing moves
	VerdictProgressing = "progressing"  // operation counts moved between the samples
	VerdictNoJob       = "no-job"       // no process maps a libnccl
	VerdictUnknown     = "unknown"      // not enough evidence (one sample, no RAS answer)
)

// Source of the rules, cited on every finding.
const rulesSource = "NVIDIA/nccl #2213 (RAS op counts frozen and equal: a stuck kernel or host; frozen but different: collectives out of sync; " +
	"~96 % GPU utilisation at 18-21 W: a spinning kernel); NVIDIA/nccl docs ras.rst (missing ranks, dead processes); " +
	"two samples tens of seconds apart: operators' practice"

// SpinUtil is the GPU utilisation (%) at or above which a GPU counts as busy.
const SpinUtil = 90

// SpinPowerShare is the share of its power limit under which a busy GPU
// draws idle power: GB10's 18-21 W spinning (NVIDIA/nccl #2213) is under
// a quarter of any limit it runs at.
const SpinPowerShare = 0.25

// SpinPowerGB10 is the idle-power ceiling on GB10 (DGX Spark), whose
// nvidia-smi gives no power limit: the spinning kernel of NVIDIA/nccl
// #2213 drew 18-21 W.
const SpinPowerGB10 = 30.0

// RankView is one rank as triage saw it over both samples.
type RankView struct {
	Rank    int
	Node    string // the sparkrig host it runs on ("" when not found)
	Addr    string // RAS's name for its node
	PID     int
	Ops     [2]int64 // operations launched at each sample (-1: not known)
	Missing bool
	Stopped bool // its process is stopped (state T or t)
	Error   string
}

// Diagnosis is triage's verdict over the samples.
type Diagnosis struct {
	Verdict   string
	FirstRank int    // the first failing rank (-1: none named)
	FirstNode string // its node
	Evidence  []string
	Findings  []report.Finding
	Ranks     []RankView
	Version   string
	Interval  time.Duration
	Libraries []LibraryView
}

// LibraryView is one libnccl build in use, and where.
type LibraryView struct {
	Path, BuildID, Version string
	Nodes                  []string
	PIDs                   []int
}

// Diagnose applies the rules to two samples of every node (second may be
// nil: one sample, which cannot tell frozen from slow).
func Diagnose(first, second []Sample, interval time.Duration) Diagnosis {
	d := Diagnosis{FirstRank: -1, Interval: interval}
	st1, at1 := jobStatus(first)
	var st2 *results.NCCLRAS
	at2 := ""
	if second != nil {
		st2, at2 = jobStatus(second)
	}
	d.Libraries = libraries(first)
	d.libraryFindings()
	procs := 0
	for _, s := range first {
		procs += len(s.Procs)
	}
	last := st2
	lastAt := at2
	if last == nil {
		last, lastAt = st1, at1
	}
	stopped := stoppedProcs(first1(second, first))
	if last == nil {
		if procs == 0 {
			d.Verdict = VerdictNoJob
			d.Evidence = append(d.Evidence, "no process on any node maps a libnccl")
			d.rasProblems(first1(second, first))
			return d
		}
		d.Evidence = append(d.Evidence, fmt.Sprintf("%d NCCL process(es) found, but NCCL's RAS service answered on no node", procs))
		if len(stopped) == 0 {
			d.Verdict = VerdictUnknown
			d.Evidence = append(d.Evidence, "RAS is off (NCCL_RAS_ENABLE=0), older than NCCL 2.24, listening elsewhere (NCCL_RAS_ADDR), or the process holding port 28028 is itself stopped")
			d.rasProblems(first1(second, first))
			d.Findings = append(d.Findings, report.Finding{ID: "triage.ras-silent", Severity: report.NotEvaluated, Subject: "RAS",
				Title: "NCCL's RAS service answers", Observed: d.Evidence[0], Expected: "an answer on localhost:28028 of a node of the job",
				Why: "without RAS the ranks' operation counts are unknown", Remedy: report.Manual(report.ActionConfigure, "run the job with NCCL_RAS_ENABLE=1 (the default from NCCL 2.24); check `ncclras` on a node of the job"), Source: rulesSource})
			return d
		}
		d.rasProblems(first1(second, first))
	} else {
		d.Version = last.Version
		d.Ranks = ranks(st1, st2, first, second, at1, lastAt)
		if st2 == nil {
			d.Evidence = append(d.Evidence, "one sample only: frozen and slow cannot be told apart")
		}
	}
	d.markStopped(stopped)

	// a rank missing: its process or node died or stopped answering
	var missing []RankView
	for _, r := range d.Ranks {
		if r.Missing {
			missing = append(missing, r)
		}
	}
	for _, r := range d.Ranks {
		if r.Error != "" {
			d.Findings = append(d.Findings, report.Finding{ID: "triage.rank-error", Severity: report.Warn, Host: r.Node, Subject: fmt.Sprintf("rank %d", r.Rank),
				Title: "no rank reports an asynchronous error", Observed: fmt.Sprintf("rank %d (pid %d) reports %s", r.Rank, r.PID, r.Error),
				Expected: "none", Why: "a rank reports the error it sees, often caused by another rank (a dead peer shows as a remote error)",
				Remedy: report.Manual(report.ActionInspect, "look first at the rank named as failing"), Source: rulesSource})
		}
	}
	if len(missing) > 0 {
		m := missing[0]
		for _, r := range missing {
			if r.Stopped { // the cause the others' absence follows
				m = r
				break
			}
		}
		d.Verdict, d.FirstRank, d.FirstNode = VerdictRankMissing, m.Rank, m.Node
		for _, r := range missing {
			if r.Stopped {
				d.Evidence = append(d.Evidence, fmt.Sprintf("%s is stopped (state T in /proc: SIGSTOP, or a debugger holds it)", rankName(r)))
			} else {
				d.Evidence = append(d.Evidence, fmt.Sprintf("%s is missing from RAS's answer", rankName(r)))
			}
		}
		d.Findings = append(d.Findings, report.Finding{ID: "triage.rank-missing", Severity: report.Fail, Host: m.Node, Subject: strings.SplitN(rankName(m), " (", 2)[0],
			Title: "every rank of the job answers", Observed: strings.Join(d.Evidence, "; "), Expected: "every rank present",
			Why:    "a rank missing from RAS's answer means its process died, was stopped, or its node is unreachable: the others wait for it forever",
			Remedy: report.Manual(report.ActionInspect, fmt.Sprintf("on %s: is pid %d alive (ps -o stat= -p %d: T is stopped), the node's kernel log (OOM killer, Xid), its network", where(m), m.PID, m.PID)),
			Source: rulesSource})
		d.spinning(first1(second, first))
		return d
	}

	// operation counts
	if st2 == nil {
		d.Verdict = VerdictUnknown
		if bs := last.Behind(); len(bs) > 0 {
			d.Evidence = append(d.Evidence, "behind at this one sample: "+behindLine(bs[0], d.Ranks))
		}
	} else {
		d.counts(st1, st2, interval)
	}
	if d.spinning(first1(second, first)) && (d.Verdict == VerdictUnknown) {
		d.Verdict = VerdictSpinning
	}
	return d
}

// stoppedProcs are the NCCL processes stopped (state T) or held by a
// tracer (t) in the samples, with the rank their launcher gave them.
func stoppedProcs(samples []Sample) []RankView {
	var out []RankView
	for _, s := range samples {
		for _, p := range s.Procs {
			if p.State == "T" || p.State == "t" {
				out = append(out, RankView{Rank: p.Rank, PID: p.PID, Node: s.Host, Missing: true, Stopped: true, Ops: [2]int64{-1, -1}})
			}
		}
	}
	return out
}

// markStopped marks the ranks whose process is stopped, adding those
// RAS does not name.
func (d *Diagnosis) markStopped(stopped []RankView) {
	for _, p := range stopped {
		found := false
		for i := range d.Ranks {
			v := &d.Ranks[i]
			if v.PID == p.PID && (v.Node == p.Node || v.Node == "") {
				v.Missing, v.Stopped, found = true, true, true
				if v.Node == "" {
					v.Node = p.Node
				}
			}
		}
		if !found {
			d.Ranks = append(d.Ranks, p)
		}
	}
}

// rasProblems adds, per node, why its RAS answer could not be read.
func (d *Diagnosis) rasProblems(samples []Sample) {
	for _, s := range samples {
		if p := s.RASProblem(); p != "" && p != rasProblem(RASAnswer{Exit: rasExitRefused}) {
			d.Evidence = append(d.Evidence, s.Host+": "+p)
		}
	}
}

// counts judges the operation counts of two samples: moving, frozen and
// equal (stuck), or frozen with ranks behind (out of sync). A rank is
// behind when it launched fewer operations of a collective than others of
// its communicator, whatever the order RAS lists ranks in; a job whose
// ranks agree names nobody.
func (d *Diagnosis) counts(st1, st2 *results.NCCLRAS, interval time.Duration) {
	known, frozen := len(d.Ranks) > 0, true
	for _, r := range d.Ranks {
		if r.Ops[0] < 0 || r.Ops[1] < 0 {
			known = false
			break
		}
		if r.Ops[0] != r.Ops[1] {
			frozen = false
		}
	}
	b1, b2 := st1.Behind(), st2.Behind()
	iv := interval.Round(time.Second)
	switch {
	case known && !frozen:
		d.Verdict = VerdictProgressing
		d.Evidence = append(d.Evidence, fmt.Sprintf("operation counts moved in %s (%s)", iv, opsLine(d.Ranks)))
	case known && len(b2) == 0:
		d.Verdict = VerdictStuck
		d.Evidence = append(d.Evidence, fmt.Sprintf("every rank frozen at operation %d for %s", d.Ranks[0].Ops[1], iv))
		d.Findings = append(d.Findings, report.Finding{ID: "triage.stuck", Severity: report.Fail, Subject: "job",
			Title: "the job's operation counts move", Observed: d.Evidence[len(d.Evidence)-1], Expected: "counts that grow between samples",
			Why:    "frozen and equal counts on every rank mean all ranks entered the same collective and none leaves it: a stuck kernel or host (a hang in NCCL, the driver or the network)",
			Remedy: report.Manual(report.ActionInspect, "look at the GPUs' state (a busy GPU at idle power is a spinning kernel), the kernel log (Xid), and the NCCL log with NCCL_DEBUG=INFO"), Source: rulesSource})
	case known || sameBehind(b1, b2):
		// frozen with ranks behind: JSON's every count, or the same ranks
		// at the same counts in both text answers
		d.outOfSync(b2, iv)
	case len(b1) > 0 || len(b2) > 0:
		d.Verdict = VerdictProgressing
		d.Evidence = append(d.Evidence, fmt.Sprintf("the ranks RAS reports behind changed in %s: the counts move", iv))
	default:
		d.Verdict = VerdictUnknown
		d.Evidence = append(d.Evidence, "RAS's text answer lists no ranks behind and gives no per-rank counts: frozen and moving cannot be told apart (per-rank counts need RAS's JSON form, NCCL 2.28.7 or later)")
	}
}

// outOfSync names the ranks behind: every rank of the first group where
// RAS named them all, else those it named, with how many it did not.
func (d *Diagnosis) outOfSync(bs []results.RASBehind, iv time.Duration) {
	d.Verdict = VerdictOutOfSync
	for _, b := range bs {
		d.Evidence = append(d.Evidence, fmt.Sprintf("counts frozen for %s but different: %s", iv, behindLine(b, d.Ranks)))
	}
	b := bs[0]
	subject := fmt.Sprintf("%d ranks", b.Count)
	lag := RankView{Rank: -1, PID: -1}
	if len(b.Ranks) > 0 {
		lag = d.view(b.Ranks[0])
		d.FirstRank, d.FirstNode = lag.Rank, lag.Node
		subject = fmt.Sprintf("rank %d", lag.Rank)
	}
	remedy := "ask RAS for every rank's counts (ncclras -v, or -f json on NCCL 2.28.7 and later): it names a large group's ranks only in its verbose or JSON form"
	if lag.Rank >= 0 {
		remedy = fmt.Sprintf("look at the lagging rank's host thread (py-spy dump --pid %d, or its log) and what it waits for", lag.PID)
	}
	d.Findings = append(d.Findings, report.Finding{ID: "triage.out-of-sync", Severity: report.Fail, Host: lag.Node, Subject: subject,
		Title: "every rank launches the same collectives", Observed: d.Evidence[len(d.Evidence)-len(bs)], Expected: "equal counts, or counts that move",
		Why:    "counts frozen but different mean the ranks are out of sync: the others wait in a collective the lagging rank never launched (its host thread is stuck, or the ranks' code paths diverged)",
		Remedy: report.Manual(report.ActionInspect, remedy), Source: rulesSource})
}

// view is the rank as d.Ranks holds it, or as RAS named it.
func (d *Diagnosis) view(r results.RASRank) RankView {
	for _, v := range d.Ranks {
		if v.Rank == r.Rank {
			return v
		}
	}
	return RankView{Rank: r.Rank, PID: r.PID, Addr: r.Host, Ops: [2]int64{-1, -1}}
}

// behindLine says who is behind in words.
func behindLine(b results.RASBehind, views []RankView) string {
	op := b.Op
	if op == "" {
		op = "collective"
	}
	var names []string
	for _, r := range b.Ranks {
		v := RankView{Rank: r.Rank, PID: r.PID, Addr: r.Host}
		for _, x := range views {
			if x.Rank == r.Rank && x.Node != "" {
				v.Node = x.Node
			}
		}
		names = append(names, fmt.Sprintf("rank %d (pid %d on %s)", v.Rank, v.PID, where(v)))
	}
	who := strings.Join(names, ", ")
	switch {
	case len(names) == 0:
		who = fmt.Sprintf("%d ranks (RAS did not name them)", b.Count)
	case len(names) < b.Count:
		who = fmt.Sprintf("%s and %d more RAS did not name", who, b.Count-len(names))
	}
	return fmt.Sprintf("%s launched %s operations up to %d, others up to %d (communicator %s)", who, op, b.Launched, b.Ahead, b.Comm)
}

// sameBehind reports two samples naming the same ranks behind at the same
// counts: frozen.
func sameBehind(a, b []results.RASBehind) bool {
	if len(a) == 0 || len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Comm != y.Comm || x.Op != y.Op || x.Launched != y.Launched || x.Ahead != y.Ahead || x.Count != y.Count || len(x.Ranks) != len(y.Ranks) {
			return false
		}
		for j := range x.Ranks {
			if x.Ranks[j].Rank != y.Ranks[j].Rank {
				return false
			}
		}
	}
	return true
}

func first1(second, first []Sample) []Sample {
	if second != nil {
		return second
	}
	return first
}

// spinning adds a finding for each GPU busy at idle power in every sample
// given, and reports whether there was one.
func (d *Diagnosis) spinning(samples []Sample) bool {
	found := false
	for _, s := range samples {
		for _, g := range s.GPUs {
			limit := 0.0
			switch {
			case strings.Contains(g.Name, "GB10"):
				limit = SpinPowerGB10
			case g.PowerLimit > 0:
				limit = SpinPowerShare * g.PowerLimit
			}
			if limit <= 0 || g.Util < SpinUtil || g.Power < 0 || g.Power > limit {
				continue
			}
			found = true
			d.Findings = append(d.Findings, report.Finding{ID: "triage.spinning", Severity: report.Warn, Host: s.Host, Subject: fmt.Sprintf("GPU %d", g.Index),
				Title:    "a busy GPU draws power",
				Observed: fmt.Sprintf("%.0f %% utilisation at %.1f W (idle power: under %.0f W)", g.Util, g.Power, limit),
				Expected: "utilisation and power together",
				Why:      "a kernel that spins waiting for a peer keeps the GPU 'busy' at idle power: with frozen operation counts it is the stuck collective",
				Remedy:   report.Manual(report.ActionInspect, "find which rank the kernel waits for (the rank named first); a spinning kernel never ends by itself"),
				Source:   rulesSource})
		}
	}
	return found
}

// jobStatus is the first RAS answer any node gave (JSON preferred), and the
// host that gave it.
func jobStatus(samples []Sample) (*results.NCCLRAS, string) {
	var text *results.NCCLRAS
	textAt := ""
	for _, s := range samples {
		st, a := s.Status()
		if st == nil {
			continue
		}
		if a.Format == "json" {
			return st, s.Host
		}
		if text == nil {
			text, textAt = st, s.Host
		}
	}
	return text, textAt
}

// ranks lists every rank of the job's communicators RAS names, with its
// node and counts at each sample (counts where RAS gave every rank's),
// and the job processes RAS lists as missing or dead that no rank names
// (rank -1).
func ranks(st1, st2 *results.NCCLRAS, first, second []Sample, at1, at2 string) []RankView {
	byRank := map[int]*RankView{}
	var order []int
	var procs []RankView
	add := func(st *results.NCCLRAS, i int, samples []Sample, at string) {
		if st == nil {
			return
		}
		last := i == 1 || st2 == nil
		for _, c := range st.Comms {
			for _, list := range [][]results.RASRank{c.Ranks, c.Missing} {
				for _, r := range list {
					v, ok := byRank[r.Rank]
					if !ok {
						v = &RankView{Rank: r.Rank, PID: -1, Ops: [2]int64{-1, -1}}
						byRank[r.Rank] = v
						order = append(order, r.Rank)
					}
					if r.PID >= 0 {
						v.PID, v.Addr = r.PID, r.Host
					}
					if v.Node == "" && r.PID >= 0 {
						v.Node = nodeOf(r, samples, at)
					}
					if c.Complete && r.Counts != nil && !r.Unresponsive && !r.Dead {
						v.Ops[i] = r.Ops()
					}
					if r.Error != "" {
						v.Error = r.Error
					} else if r.AsyncError > 0 && r.AsyncError != ncclInProgress {
						v.Error = fmt.Sprintf("asynchronous error %d", r.AsyncError)
					}
				}
			}
			if last {
				for _, r := range c.Missing {
					// JSON lists a rank that answered but not for this
					// communicator as missing too: only unresponsive or
					// dead ones are gone
					if r.Unresponsive || r.Dead {
						byRank[r.Rank].Missing = true
					}
				}
			}
		}
		if !last {
			return
		}
		for _, dp := range append(slices.Clone(st.MissingProcesses), st.Dead...) {
			found := false
			for _, v := range byRank {
				if v.PID == dp.PID && v.Addr == dp.Host {
					v.Missing, found = true, true
				}
			}
			if !found {
				procs = append(procs, RankView{Rank: -1, PID: dp.PID, Addr: dp.Host, Missing: true, Ops: [2]int64{-1, -1},
					Node: nodeOf(results.RASRank{PID: dp.PID, Host: dp.Host}, samples, at)})
			}
		}
	}
	add(st1, 0, first, at1)
	add(st2, 1, second, at2)
	sort.Ints(order)
	var out []RankView
	for _, r := range order {
		out = append(out, *byRank[r])
	}
	return append(out, procs...)
}

// ncclInProgress is ncclResult_t's ncclInProgress (7), which RAS does not
// count as an error (client_support.cc:1164 at v2.30.7-1).
const ncclInProgress = 7

// nodeOf finds the node a rank runs on: the node whose address RAS names
// and that runs its pid; a loopback address is the node that answered.
func nodeOf(r results.RASRank, samples []Sample, answered string) string {
	ip := net.ParseIP(r.Host)
	var byPID []string
	for _, s := range samples {
		hasAddr := false
		for _, a := range s.Addrs {
			if p, _, err := net.ParseCIDR(a); err == nil && ip != nil && !ip.IsLoopback() && p.Equal(ip) {
				hasAddr = true
			}
		}
		hasPID := false
		for _, p := range s.Procs {
			if p.PID == r.PID {
				hasPID = true
			}
		}
		if hasAddr && (hasPID || len(s.Procs) == 0) {
			return s.Host
		}
		if hasPID {
			byPID = append(byPID, s.Host)
		}
	}
	if len(byPID) == 1 {
		return byPID[0]
	}
	if ip != nil && ip.IsLoopback() {
		return answered
	}
	return ""
}

// rankName is "rank R (pid P on NODE)", or "process P on NODE" for a job
// process RAS lists without its rank.
func rankName(r RankView) string {
	if r.Rank < 0 {
		return fmt.Sprintf("process %d on %s", r.PID, where(r))
	}
	return fmt.Sprintf("rank %d (pid %d on %s)", r.Rank, r.PID, where(r))
}

func where(r RankView) string {
	if r.Node != "" {
		return r.Node
	}
	return r.Addr
}

func opsLine(rs []RankView) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("rank %d: %d→%d", r.Rank, r.Ops[0], r.Ops[1]))
	}
	return strings.Join(parts, ", ")
}

// libraries groups the libnccl files the nodes' processes map by build.
func libraries(samples []Sample) []LibraryView {
	idx := map[string]int{}
	var out []LibraryView
	for _, s := range samples {
		info := map[string]Library{}
		for _, l := range s.Libs {
			info[l.Path] = l
		}
		for _, p := range s.Procs {
			for _, path := range p.Libs {
				l := info[path]
				key := path + "\x00" + l.BuildID
				i, ok := idx[key]
				if !ok {
					out = append(out, LibraryView{Path: path, BuildID: l.BuildID, Version: l.Version})
					i = len(out) - 1
					idx[key] = i
				}
				v := &out[i]
				if len(v.Nodes) == 0 || v.Nodes[len(v.Nodes)-1] != s.Host {
					v.Nodes = append(v.Nodes, s.Host)
				}
				v.PIDs = append(v.PIDs, p.PID)
			}
		}
	}
	return out
}

// libraryFindings flags ranks that run different libnccl builds: by build
// ID where it was read, else by path.
func (d *Diagnosis) libraryFindings() {
	builds := map[string]bool{}
	for _, l := range d.Libraries {
		id := l.BuildID
		if id == "" {
			id = "path " + l.Path
		}
		builds[id] = true
	}
	if len(builds) < 2 {
		return
	}
	var parts []string
	versions := map[string]bool{}
	for _, l := range d.Libraries {
		id := l.BuildID
		if id == "" {
			id = "build ID unread"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s, NCCL %s) on %s", l.Path, id, plural(len(l.PIDs), "process"), l.Version, strings.Join(l.Nodes, ",")))
		versions[l.Version] = true
	}
	why := "ranks of one job must run one NCCL build: different builds can disagree on protocol details and hang"
	if len(versions) == 1 {
		why = "identical version strings can hide different binaries (pip's nvidia-nccl-cu13 2.28.9 and the DGX OS libnccl2 2.28.9 differ, and swapping one fixed a 20-minute allgather hang)"
	}
	d.Findings = append(d.Findings, report.Finding{ID: "triage.nccl-builds-differ", Severity: report.Warn, Subject: "libnccl",
		Title: "every rank runs the same libnccl build", Observed: strings.Join(parts, "; "), Expected: "one build ID",
		Why: why, Remedy: report.Manual(report.ActionConfigure, "make every node load the same libnccl (LD_LIBRARY_PATH, the wheel or the system package, not both)"),
		Source: "vllm-project/vllm #41725 (build IDs a7f420a1 and c0db9360 of NCCL 2.28.9); marin-community/marin #7344"})
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ses", n, w)
}
