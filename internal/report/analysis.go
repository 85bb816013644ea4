package report

import (
	"github.com/sparkrig/sparkrig/internal/results"
)

// AnalysisResult is one analysed benchmark file or run. Owned by the analyze stage.
type AnalysisResult struct {
	File string `json:"file"`
	// Format is the detected (or forced) input format: nccl-tests,
	// nccl-tests-json, nccl-log, perftest, iperf3, nvbandwidth, all_reduce_bench.
	Format string `json:"format,omitempty"`
	// Status is the worst item verdict or flag: ok, warning, critical,
	// no-expectation, or unknown when the file could not be read.
	Status Verdict `json:"status"`
	// Measured says in one line what the file measured.
	Measured string `json:"measured,omitempty"`
	// Platform and Topology are what the judgement used; Inferred is true when
	// they were read from the file rather than given, and Evidence says from what.
	Platform         string `json:"platform,omitempty"`
	PlatformInferred bool   `json:"platform_inferred,omitempty"`
	PlatformEvidence string `json:"platform_evidence,omitempty"`
	Topology         string `json:"topology,omitempty"`
	TopologyInferred bool   `json:"topology_inferred,omitempty"`
	TopologyEvidence string `json:"topology_evidence,omitempty"`

	Items []AnalysisItem `json:"items"`
	// Flags are problems the NCCL INFO lines show on their own.
	Flags []AnalysisFlag `json:"flags"`
	// Notes are caveats about the input (truncated table, guessed collective...).
	Notes []string `json:"notes,omitempty"`
	// Data is the parsed input.
	Data AnalysisData `json:"data"`

	Error string `json:"error,omitempty"`
}

// AnalysisItem is one judged result: a collective table, a perftest run, an
// iperf3 test, an nvbandwidth matrix.
type AnalysisItem struct {
	Subject string `json:"subject"`
	// Metric names Value: "busbw plateau", "BW average", "t_avg", "received".
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	// AtSize is the message size Value was reached at, when it has one.
	AtSize int64 `json:"at_size_bytes,omitempty"`
	// Summary is the rest of the result in one line (footer average, peak, rows...).
	Summary string `json:"summary,omitempty"`

	Expectation *ExpectationRef `json:"expectation,omitempty"`
	// NoExpectation says why nothing was compared, when Expectation is nil.
	NoExpectation string   `json:"no_expectation,omitempty"`
	Ratio         *float64 `json:"ratio,omitempty"`
	Wire          *WireRef `json:"wire,omitempty"`
	Verdict       Verdict  `json:"verdict"`
	// Notes explain how to read the number (ring vs tree, per-GPU network share).
	Notes  []string `json:"notes,omitempty"`
	Causes []Cause  `json:"causes,omitempty"`
}

// ExpectationRef is the expectation a result was compared with.
type ExpectationRef struct {
	ID         string  `json:"id"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit"`
	Better     string  `json:"better"`
	Warn       float64 `json:"warn"`
	Pass       float64 `json:"pass"`
	Conditions string  `json:"conditions,omitempty"`
	Source     string  `json:"source"`
}

// WireRef states a result as a fraction of what the link can carry.
type WireRef struct {
	Name string `json:"name"`
	// Compared is the value set against the wire (e.g. the per-GPU network share).
	Compared float64 `json:"compared"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Fraction float64 `json:"fraction"`
	Source   string  `json:"source"`
}

// Cause is a known reason for a gap, with the evidence in the file that
// supports it or rules it out.
type Cause struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Likelihood is "likely", "possible" or "ruled-out".
	Likelihood string   `json:"likelihood"`
	Evidence   []string `json:"evidence,omitempty"`
	Against    []string `json:"against,omitempty"`
	Confirm    string   `json:"confirm"`
	Fix        string   `json:"fix,omitempty"`
	Source     string   `json:"source,omitempty"`
}

// AnalysisFlag is a problem shown by the NCCL log alone.
type AnalysisFlag struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Evidence string   `json:"evidence,omitempty"`
	Fix      string   `json:"fix,omitempty"`
	Source   string   `json:"source,omitempty"`
}

// AnalysisData is the parsed input, by format.
type AnalysisData struct {
	NCCLTables  []results.NCCLTable     `json:"nccl_tables,omitempty"`
	NCCLLog     *results.NCCLLog        `json:"nccl_log,omitempty"`
	Perftest    []results.PerftestRun   `json:"perftest,omitempty"`
	Iperf3      *results.Iperf3Result   `json:"iperf3,omitempty"`
	NVBandwidth *results.NVBandwidthRun `json:"nvbandwidth,omitempty"`
	// RAS is NCCL's RAS status (ncclras), when the input was one.
	RAS *results.NCCLRAS `json:"nccl_ras,omitempty"`
	// RailTraffic is what each rail of each host carried during a bench
	// step, read from its counters before and after.
	RailTraffic []RailTraffic `json:"rail_traffic,omitempty"`
}

// RailTraffic is the bytes one rail of one host sent and received during a
// step, and their share of the host's rails.
type RailTraffic struct {
	Host    string  `json:"host"`
	NetDev  string  `json:"netdev"`
	TxBytes uint64  `json:"tx_bytes"`
	RxBytes uint64  `json:"rx_bytes"`
	TxShare float64 `json:"tx_share"`
	RxShare float64 `json:"rx_share"`
	Source  string  `json:"source"` // "rdma" or "netdev" counters
}
