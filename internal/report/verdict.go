package report

// Verdict is the one status vocabulary of every command: of a finding's
// consequence, an analysed result, a file, a host and a whole report.
type Verdict string

// Verdicts, in the one ranking (see Rank).
const (
	// VerdictNone means nothing was judged: no expectation fits the result.
	VerdictNone     Verdict = "no-expectation"
	VerdictOK       Verdict = "ok"
	VerdictUnknown  Verdict = "unknown" // could not evaluate: unreadable input, host not audited, evidence missing
	VerdictWarning  Verdict = "warning"
	VerdictCritical Verdict = "critical"
)

// Rank is the one ranking of verdicts (higher is worse): critical, warning,
// unknown, ok, no expectation. Something found wrong outranks something that
// could not be evaluated, which outranks a pass, as monitoring plugins order
// their states.
func (v Verdict) Rank() int {
	switch v {
	case VerdictNone:
		return 0
	case VerdictOK:
		return 1
	case VerdictUnknown:
		return 2
	case VerdictWarning:
		return 3
	case VerdictCritical:
		return 4
	}
	return 2 // an unrecognised verdict is not evaluated, never a pass
}

// Worse returns the worse of two verdicts.
func Worse(a, b Verdict) Verdict {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Overall is the report's one verdict: the worst of every finding, analysis
// and host; a host that could not be audited is unknown; results without an
// expectation are ok. A fix plan that would change something is a warning
// at least, its findings no change resolves count as found (fix --plan
// reports the doctor's verdict on the same evidence); a model plan that fits
// in no layout is critical; a command's error is unknown.
// An all-pairs run and a triage are judged through their findings (the
// cluster's), as qualify and triage judge them; a triage that found no job
// or could not tell is unknown. A GPU collective
// with wrong results is critical, a GPU result measured in a state that
// cannot speak for the hardware unknown.
// An empty report (nothing audited, analysed, measured or planned) is
// unknown; findings that were judged are never turned into unknown.
func (r *Report) Overall() Verdict {
	v := VerdictNone
	any := false
	unread := false // an input not read: a host not audited, a file not analysed
	see := func(fs []Finding) {
		for _, f := range fs {
			any = true
			v = Worse(v, f.Severity.Verdict())
		}
	}
	for _, h := range r.Hosts {
		any = true
		if h.Status != "" && h.Status != HostAudited {
			v = Worse(v, VerdictUnknown)
			unread = true
		}
		see(h.Findings)
	}
	if r.Cluster != nil {
		see(r.Cluster.Findings)
	}
	for _, a := range r.Analyses {
		any = true
		v = Worse(v, a.Status)
		unread = unread || a.Error != ""
	}
	for _, p := range r.Plans {
		any = true
		if p.Recommended == "" {
			v = Worse(v, VerdictCritical) // the model fits in no layout
		}
	}
	if r.FixPlan != nil {
		any = true
		see(r.FixPlan.Manual)
		if r.FixPlan.Changes() > 0 {
			v = Worse(v, VerdictWarning)
		}
	}
	if r.AllPairs != nil {
		any = true
	}
	if t := r.Triage; t != nil {
		any = true
		if t.Verdict == TriageNoJob || t.Verdict == TriageUnknown {
			v = Worse(v, VerdictUnknown)
		}
	}
	if g := r.GPU; g != nil {
		any = true
		if g.Validity != nil && g.Validity.Sampled && !g.Validity.Valid {
			v = Worse(v, VerdictUnknown)
		}
		for _, t := range g.Collectives {
			if t.WrongResults > 0 {
				v = Worse(v, VerdictCritical)
			}
		}
	}
	if r.BenchPlan != nil || r.BenchRun != nil || r.Comparison != nil || r.LinkEvidence != nil {
		any = true
	}
	if r.BenchRun != nil && len(r.BenchRun.LeftOut) > 0 {
		v = Worse(v, VerdictUnknown) // a benchmark asked for and not run is not evaluated
	}
	if r.Error != "" {
		return Worse(v, VerdictUnknown)
	}
	if !any {
		return VerdictUnknown
	}
	if v == VerdictNone {
		v = VerdictOK // nothing judged is nothing wrong
	}
	return Unread(v, unread)
}

// Unread is the verdict of inputs some of which could not be read: anything
// short of critical is unknown, since a warning about the inputs that were
// read does not speak for the ones that were not; only a fail is certain
// whatever they hold (exit 3 beside warnings, 2 beside a fail).
func Unread(v Verdict, unread bool) Verdict {
	if unread && v != VerdictCritical {
		return VerdictUnknown
	}
	return v
}

// The triage verdicts Overall reads as unknown: no job found, or not
// enough evidence to tell (internal/triage gives them).
const (
	TriageNoJob   = "no-job"
	TriageUnknown = "unknown"
)

// FindingsVerdict is the verdict of a report made of findings alone
// (qualify, triage): the worst finding's, ok with none, and unknown instead
// of ok when incomplete (some evidence could not be had).
func FindingsVerdict(fs []Finding, incomplete bool) Verdict {
	v := VerdictNone
	for _, f := range fs {
		v = Worse(v, f.Severity.Verdict())
	}
	if incomplete {
		v = Worse(v, VerdictUnknown)
	}
	if v == VerdictNone {
		return VerdictOK
	}
	return v
}
