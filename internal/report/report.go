// Package report is the one model every output format renders: the doctor's
// findings per host and for the cluster, analysed benchmark files, and bench
// runs. Renderers live in package render; this package holds data only.
package report

import (
	"time"
)

// SchemaVersion is the version of the JSON document. Bump it on any
// incompatible change to the model.
const SchemaVersion = 2

// Report is one invocation's whole result (all hosts, all files).
type Report struct {
	Schema      int       `json:"schema_version"`
	Tool        string    `json:"tool"`
	ToolVersion string    `json:"tool_version"`
	Command     string    `json:"command"`
	GeneratedAt time.Time `json:"generated_at"`
	// Status is the overall verdict: "ok", "warning", "critical" or "unknown".
	Status Verdict `json:"status"`

	Hosts    []Host     `json:"hosts"`
	Cluster  *Cluster   `json:"cluster,omitempty"`
	Analyses []Analysis `json:"analyses,omitempty"`
	Plans    []Plan     `json:"plans,omitempty"`
	AllPairs *AllPairs  `json:"all_pairs,omitempty"`
	Triage   *Triage    `json:"triage,omitempty"`
}

// Plan is what `sparkrig plan` said of one model on one cluster, as the
// report shows it: time to first token and per output token by layout.
type Plan struct {
	Model       string    `json:"model"`
	Weights     string    `json:"weights"`
	Platform    string    `json:"platform"`
	Nodes       int       `json:"nodes"`
	Workload    string    `json:"workload"`
	Recommended string    `json:"recommended,omitempty"`
	Layouts     []PlanRow `json:"layouts"`
}

// PlanRow is one parallel layout of a plan.
type PlanRow struct {
	Layout       string  `json:"layout"` // "TP2", "PP3"
	Fits         bool    `json:"fits"`
	TTFTms       float64 `json:"ttft_ms,omitempty"`
	TPOTms       float64 `json:"tpot_ms,omitempty"`
	TokensPerSec float64 `json:"tokens_per_s,omitempty"`
	Bound        string  `json:"bound,omitempty"`
}

// Host statuses.
const (
	HostAudited     = "audited"
	HostUnreachable = "unreachable"
	HostBadSnapshot = "bad-snapshot"
	HostFailed      = "capture-failed"
)

// Host is one node's audit.
type Host struct {
	Host    string `json:"host"`
	Profile string `json:"profile,omitempty"`
	// Status is HostAudited, or why the host could not be audited.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Source string `json:"source,omitempty"` // snapshot path, "live" or "ssh"
	// SameAs is the source of an earlier capture of the same node (host name
	// and machine id): both are audited, the cluster counts the node once.
	SameAs   string    `json:"same_as,omitempty"`
	Findings []Finding `json:"findings"`
	Skipped  []Skipped `json:"skipped,omitempty"`
}

// Cluster holds what only several nodes together show.
type Cluster struct {
	Topology string    `json:"topology,omitempty"`
	Links    []Link    `json:"links"`
	Findings []Finding `json:"findings"`
	// Qualified is doctor --qualify's traffic test, per link and direction.
	Qualified []QualifiedDirection `json:"qualified,omitempty"`
}

// QualifiedDirection is one direction of one link under a short traffic
// test: its rate, the error counters that moved on either end, the verdict.
type QualifiedDirection struct {
	Rail    string   `json:"rail"`
	From    string   `json:"from"` // "host:netdev"
	To      string   `json:"to"`
	Tool    string   `json:"tool"`
	Gbps    float64  `json:"gbps"`
	Moved   []string `json:"counters_moved,omitempty"` // "spark-01 enp1s0f1np1 rx_crc_errors +12"
	Verdict string   `json:"verdict"`                  // ok, degraded, errors, failed
}

// Link is one cable (or switch path) between two netdevs of two nodes.
type Link struct {
	A        Endpoint `json:"a"`
	B        Endpoint `json:"b"`
	Subnet   string   `json:"subnet,omitempty"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Endpoint is one end of a link.
type Endpoint struct {
	Host      string `json:"host"`
	NetDev    string `json:"netdev"`
	RDMADev   string `json:"rdma_dev,omitempty"`
	Addr      string `json:"addr,omitempty"`
	MTU       int    `json:"mtu"`
	SpeedMbps int    `json:"speed_mbps,omitempty"`
}

// Analysis is filled by `sparkrig analyze` and `sparkrig bench`; see analysis.go.
type Analysis = AnalysisResult
