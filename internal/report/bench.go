package report

// BenchPlan is `sparkrig bench --dry-run`: the rails, the environment jobs
// get, notes and refusals, and every command per host in the order it runs.
type BenchPlan struct {
	Hosts    []string       `json:"hosts"`
	Kinds    []string       `json:"kinds"`
	Topology string         `json:"topology,omitempty"`
	Rails    []BenchRail    `json:"rails"`
	Env      []EnvVar       `json:"env,omitempty"`
	Notes    []PlanNote     `json:"notes,omitempty"`
	Refusals []BenchRefusal `json:"refusals,omitempty"`
	Steps    []BenchStep    `json:"steps"`
}

// BenchRail is one rail a bench plan measures: its name ("rail0
// spark-01:enp1s0f1np1 ↔ spark-02:enp1s0f1np1") and its ends' RDMA details.
type BenchRail struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
}

// BenchRefusal is a reason not to run at all; --force overrides the
// forceable ones.
type BenchRefusal struct {
	Host      string `json:"host"`
	Reason    string `json:"reason"`
	Forceable bool   `json:"forceable"`
}

// BenchStep is one step of a bench plan with its commands.
type BenchStep struct {
	ID       string         `json:"id"`
	Timeout  string         `json:"timeout"`
	Commands []BenchCommand `json:"commands"`
}

// BenchCommand is one command of a step as a shell line with its
// environment, and the host and role that run it.
type BenchCommand struct {
	Host string `json:"host"`
	Role string `json:"role"`
	Line string `json:"line"`
}

// BenchRun is what a bench run adds to its analyses: the run's id, how each
// step ended, missing tools, the plan's notes and the qualify verdicts per
// direction with their findings.
type BenchRun struct {
	ID        string               `json:"id"`
	Steps     []BenchOutcome       `json:"steps"`
	Missing   []MissingTool        `json:"missing,omitempty"`
	Notes     []PlanNote           `json:"notes,omitempty"`
	Refusals  []BenchRefusal       `json:"refusals,omitempty"`
	Qualified []QualifiedDirection `json:"qualified,omitempty"`
	// QualifyFindings judge the qualified directions (also counted in the
	// report's verdict).
	QualifyFindings []Finding `json:"qualify_findings,omitempty"`
	// LeftOut are the benchmarks asked for that the plan could run no step
	// of (rdma without a rail with RDMA on both ends, nccl without a GPU on
	// every node): not evaluated, so the run is never ok for them.
	LeftOut []string `json:"left_out,omitempty"`
}

// BenchOutcome is how one step ended; File names its analysis.
type BenchOutcome struct {
	File   string `json:"file"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// MissingTool is a tool a host lacks, with how to get it.
type MissingTool struct {
	Host string `json:"host"`
	Tool string `json:"tool"`
	Hint string `json:"hint"`
}

// BenchComparison is `sparkrig bench compare`: each result before and
// after, and what differed in the setup.
type BenchComparison struct {
	Before       string        `json:"before"`
	BeforeStatus Verdict       `json:"before_status"`
	After        string        `json:"after"`
	AfterStatus  Verdict       `json:"after_status"`
	Changes      []BenchChange `json:"changes"`
	// Setup lists differences in what the runs ran on: environment, nodes, rails.
	Setup []string `json:"setup"`
}

// BenchChange is one result of two runs.
type BenchChange struct {
	Step    string   `json:"step"`
	Subject string   `json:"subject"`
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	Before  *float64 `json:"before,omitempty"`
	After   *float64 `json:"after,omitempty"`
	// DeltaPct is (after-before)/before in percent; nil when either is missing.
	DeltaPct      *float64 `json:"delta_pct,omitempty"`
	VerdictBefore Verdict  `json:"verdict_before,omitempty"`
	VerdictAfter  Verdict  `json:"verdict_after,omitempty"`
}
