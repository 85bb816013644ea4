package report

// AllPairs is an all-pairs qualification (`sparkrig qualify --all-pairs`):
// every pair of nodes of one segment measured in both directions, the
// N×N matrix, each node's pass ratios and the suspects with their evidence.
type AllPairs struct {
	Schedule    string   `json:"schedule"` // "all-pairs" (circle method) or "ring" (NCCL's even/odd order)
	Tool        string   `json:"tool"`
	Segment     string   `json:"segment,omitempty"` // the subnet measured
	TestSeconds float64  `json:"test_s"`
	Rounds      int      `json:"rounds"`
	WallSeconds float64  `json:"wall_s"`
	Nodes       []string `json:"nodes"`
	// Matrix is each first-pass direction's rate in Gb/s: row sends,
	// column receives; -1 where the test did not complete, 0 on the
	// diagonal and for pairs not scheduled (a ring's non-neighbours).
	Matrix    [][]float64         `json:"matrix_gbps"`
	Reference float64             `json:"reference_gbps"`
	RefName   string              `json:"reference"` // "median", "expected", or "TOOL median" where the directions were measured with several tools
	Floor     float64             `json:"floor_gbps"`
	Scores    []AllPairsScore     `json:"scores"`
	Suspects  []AllPairsSuspect   `json:"suspects"`
	Retests   []AllPairsDirection `json:"retests,omitempty"`
	// Pairs are the pairs measured in the rounds, each with the tool that
	// measured it and the error counters of its ends that moved.
	Pairs []AllPairsPair `json:"pairs,omitempty"`
	// Tools are each tool's own reference and floor where the pairs were
	// measured with several: a direction is judged against its pair's
	// tool's.
	Tools []AllPairsTool `json:"tools,omitempty"`
	Rules string         `json:"rules"`
	// Unjudged says what keeps the run from a verdict on every node and
	// pair: directions not measured (an interrupt, a node that could not
	// be reached), or no credible reference to judge against. A run with
	// any is never an all-clear.
	Unjudged []string `json:"unjudged,omitempty"`
	// NCCL is each pair's 2-rank NCCL test where both its nodes have a
	// GPU, or why none ran.
	NCCL *AllPairsNCCL `json:"nccl,omitempty"`
}

// AllPairsNCCL is the 2-rank NCCL test of each pair whose two nodes have a
// GPU: all_reduce's bus bandwidth at the largest message, judged against
// the best pairs' by the same rule as the directions (diagnose.LinkRef).
type AllPairsNCCL struct {
	Tool        string             `json:"tool"`
	Rounds      int                `json:"rounds"`
	WallSeconds float64            `json:"wall_s"`
	Reference   float64            `json:"reference_busbw_gbs"` // the best pairs' (0: none credible)
	Floor       float64            `json:"floor_busbw_gbs"`
	Pairs       []AllPairsNCCLPair `json:"pairs"`
	Suspects    []AllPairsSuspect  `json:"suspects"`
	// Skipped says which pairs were not tested and why (a node without a
	// GPU, NCCL not found, --nccl off).
	Skipped []string `json:"skipped,omitempty"`
}

// AllPairsNCCLPair is one pair's NCCL test.
type AllPairsNCCLPair struct {
	A           string  `json:"a"` // rank 0
	B           string  `json:"b"`
	BusGBs      float64 `json:"busbw_gbs"`
	Bytes       int64   `json:"size_bytes"`
	NCCLVersion string  `json:"nccl_version,omitempty"`
	Pass        bool    `json:"pass"`
	Error       string  `json:"error,omitempty"`
}

// AllPairsScore is one node's tests over the rounds.
type AllPairsScore struct {
	Node     string  `json:"node"`
	TxPass   int     `json:"tx_pass"`
	TxTests  int     `json:"tx_tests"`
	RxPass   int     `json:"rx_pass"`
	RxTests  int     `json:"rx_tests"`
	TxMedian float64 `json:"tx_median_gbps"`
	RxMedian float64 `json:"rx_median_gbps"`
}

// AllPairsSuspect is a node, one side of a node's cable, or a pair's path.
type AllPairsSuspect struct {
	Kind     string   `json:"kind"` // node, cable, pair
	Node     string   `json:"node"`
	Side     string   `json:"side,omitempty"` // cable: tx (what the node sends) or rx
	Peer     string   `json:"peer,omitempty"` // pair: the receiver
	Status   string   `json:"status"`         // suspect, confirmed, cleared
	Name     string   `json:"name"`           // in words: "spark-3's cable, sending"
	Evidence []string `json:"evidence"`
}

// AllPairsDirection is one re-test.
type AllPairsDirection struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	Gbps  float64 `json:"gbps"`
	Error string  `json:"error,omitempty"`
}

// AllPairsPair is one pair of the rounds: the tool that measured both its
// directions and the error counters of its two ends that moved meanwhile
// ("host dev name +n").
type AllPairsPair struct {
	A     string   `json:"a"`
	B     string   `json:"b"`
	Tool  string   `json:"tool"`
	Moved []string `json:"counters_moved,omitempty"`
}

// AllPairsTool is the reference one tool's directions are judged against.
type AllPairsTool struct {
	Tool      string  `json:"tool"`
	Reference float64 `json:"reference_gbps"`
	Floor     float64 `json:"floor_gbps"`
}

// RefAt is the reference direction i→j (by index in Nodes) is judged
// against: its pair's tool's where Tools has it, else Reference.
func (ap *AllPairs) RefAt(i, j int) float64 {
	if t := ap.toolAt(i, j); t != nil {
		return t.Reference
	}
	return ap.Reference
}

// FloorAt is the rate direction i→j must reach, as RefAt.
func (ap *AllPairs) FloorAt(i, j int) float64 {
	if t := ap.toolAt(i, j); t != nil {
		return t.Floor
	}
	return ap.Floor
}

// ToolAt names the tool that measured direction i→j's pair, "" when the
// report does not say.
func (ap *AllPairs) ToolAt(i, j int) string {
	if i < 0 || j < 0 || i >= len(ap.Nodes) || j >= len(ap.Nodes) {
		return ""
	}
	a, b := ap.Nodes[i], ap.Nodes[j]
	for _, p := range ap.Pairs {
		if p.A == a && p.B == b || p.A == b && p.B == a {
			return p.Tool
		}
	}
	return ""
}

func (ap *AllPairs) toolAt(i, j int) *AllPairsTool {
	if len(ap.Tools) == 0 || i < 0 || j < 0 || i >= len(ap.Nodes) || j >= len(ap.Nodes) {
		return nil
	}
	a, b := ap.Nodes[i], ap.Nodes[j]
	for _, p := range ap.Pairs {
		if p.A == a && p.B == b || p.A == b && p.B == a {
			for k := range ap.Tools {
				if ap.Tools[k].Tool == p.Tool {
					return &ap.Tools[k]
				}
			}
		}
	}
	return nil
}
