package report

// Triage is `sparkrig triage`: a running NCCL job's state from two
// samples of every node, the verdict and the first failing rank.
type Triage struct {
	Verdict         string          `json:"verdict"`
	FirstRank       int             `json:"first_rank"` // -1: none named
	FirstNode       string          `json:"first_node,omitempty"`
	Evidence        []string        `json:"evidence"`
	NCCLVersion     string          `json:"nccl_version,omitempty"`
	IntervalSeconds float64         `json:"interval_s"`
	WallSeconds     float64         `json:"wall_s"`
	Ranks           []TriageRank    `json:"ranks"`
	Libraries       []TriageLibrary `json:"libraries"`
	Nodes           []TriageNode    `json:"nodes"`
}

// TriageRank is one rank over both samples.
type TriageRank struct {
	Rank    int      `json:"rank"`
	Node    string   `json:"node,omitempty"`
	Addr    string   `json:"addr,omitempty"` // RAS's name for its node
	PID     int      `json:"pid"`
	Ops     [2]int64 `json:"ops"` // operations launched at each sample (-1: unknown)
	Missing bool     `json:"missing,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// TriageLibrary is one libnccl build in use.
type TriageLibrary struct {
	Path    string   `json:"path"`
	BuildID string   `json:"build_id,omitempty"`
	Version string   `json:"version,omitempty"`
	Nodes   []string `json:"nodes"`
	PIDs    []int    `json:"pids"`
}

// TriageNode is what one node showed.
type TriageNode struct {
	Host      string      `json:"host"`
	Name      string      `json:"name,omitempty"`
	Error     string      `json:"error,omitempty"`
	Processes int         `json:"nccl_processes"`
	RAS       string      `json:"ras,omitempty"` // "ncclras json", "protocol text", "none", ""
	GPUs      []TriageGPU `json:"gpus,omitempty"`
	Log       []string    `json:"log,omitempty"`
}

// TriageGPU is one GPU at both samples.
type TriageGPU struct {
	Index   int        `json:"index"`
	Name    string     `json:"name,omitempty"`
	Util    [2]float64 `json:"util_pct"`
	Power   [2]float64 `json:"power_w"`
	SMClock [2]float64 `json:"sm_clock_mhz"`
}
