package report

// Severity orders how bad a finding is.
type Severity string

// Severities, from harmless to worst. NotEvaluated means evidence the check
// needs could not be read (denied, failed, not captured): it is never a pass,
// and the verdict is unknown unless something worse was found. A check that
// cannot apply to a node (no such hardware or driver feature) is Skipped
// instead and does not touch the verdict.
const (
	OK           Severity = "ok"
	Info         Severity = "info"
	NotEvaluated Severity = "not-evaluated"
	Warn         Severity = "warn"
	Fail         Severity = "fail"
)

// Rank orders severities for sorting (higher is worse).
func (s Severity) Rank() int {
	switch s {
	case OK:
		return 0
	case Info:
		return 1
	case NotEvaluated:
		return 2
	case Warn:
		return 3
	case Fail:
		return 4
	}
	return -1
}

// Verdict is what a severity means for the report's verdict.
func (s Severity) Verdict() Verdict {
	switch s {
	case Fail:
		return VerdictCritical
	case Warn:
		return VerdictWarning
	case NotEvaluated:
		return VerdictUnknown
	}
	return VerdictOK
}

// Finding is the outcome of one check on one subject.
type Finding struct {
	// ID is stable across releases ("spark.twin-unaddressed").
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// Host is the node the finding is about ("" for cluster-wide findings).
	Host string `json:"host,omitempty"`
	// Subject is what on the host: "enp1s0f1np1", "rocep1s0f1/1", "GPU 0", "node".
	Subject  string `json:"subject"`
	Title    string `json:"title"`
	Observed string `json:"observed,omitempty"`
	Expected string `json:"expected,omitempty"`
	// Why says in one sentence why it matters.
	Why string `json:"why,omitempty"`
	// Remedy resolves the finding; every warn and fail finding has one, and
	// a not-evaluated one says how to make the evidence readable.
	Remedy *Remedy `json:"remedy,omitempty"`
	// Source says where the expectation comes from (seed, vendor doc, measurement).
	Source string `json:"source,omitempty"`
}

// Key identifies a finding within one run: the check, the host and the subject.
type Key struct {
	ID      string `json:"id"`
	Host    string `json:"host,omitempty"`
	Subject string `json:"subject"`
}

// Key is the finding's identity within one run.
func (f Finding) Key() Key { return Key{ID: f.ID, Host: f.Host, Subject: f.Subject} }

// Skipped records a check that did not apply, and why (shown with --verbose).
type Skipped struct {
	ID     string `json:"id"`
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason"`
}
