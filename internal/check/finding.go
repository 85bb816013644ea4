// Package check holds the pure audit checks: functions of facts (and a
// platform profile, and for cluster checks the other nodes) that return
// findings. Nothing here reads files or runs commands.
package check

// Severity orders how bad a finding is.
type Severity string

// Severities, from harmless to worst. NotEvaluated means the evidence a check
// needs was not captured: it is never a pass.
const (
	OK           Severity = "ok"
	Info         Severity = "info"
	NotEvaluated Severity = "not-evaluated"
	Warn         Severity = "warn"
	Fail         Severity = "fail"
)

// Rank orders severities for sorting and exit codes (higher is worse).
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
	// Fix is exact: commands or file contents.
	Fix string `json:"fix,omitempty"`
	// Source says where the expectation comes from (seed, vendor doc, measurement).
	Source string `json:"source,omitempty"`
}

// Skipped records a check that did not apply, and why (shown with --verbose).
type Skipped struct {
	ID     string `json:"id"`
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason"`
}
