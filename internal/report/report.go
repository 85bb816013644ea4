// Package report is the one model every output format renders: the doctor's
// findings per host and for the cluster, analysed benchmark files, and bench
// runs. Renderers live in package render. Beside the model it holds the
// report command's pipeline (Run): sparkrig documents read and merged into
// one (Merge), with what reads raw outputs and audits snapshots handed in,
// so it imports nothing of sparkrig's but the parsed results.
package report

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the version of the JSON document. Bump it on any
// incompatible change to the model.
// 3: a link has a status and its reasons (2 had ok and problems, still
// read); fix, bench plans and runs, comparisons and bench gpu results are
// report documents too.
const SchemaVersion = 3

// Report is one invocation's whole result (all hosts, all files).
type Report struct {
	Schema      int       `json:"schema_version"`
	Tool        string    `json:"tool"`
	ToolVersion string    `json:"tool_version"`
	Command     string    `json:"command"`
	GeneratedAt time.Time `json:"generated_at"`
	// Status is the overall verdict: "ok", "warning", "critical" or "unknown".
	Status Verdict `json:"status"`

	// Error is the one line that says why the command could not produce its
	// content (the status is then unknown).
	Error string `json:"error,omitempty"`

	Hosts    []Host     `json:"hosts"`
	Cluster  *Cluster   `json:"cluster,omitempty"`
	Analyses []Analysis `json:"analyses,omitempty"`
	Plans    []Plan     `json:"plans,omitempty"`
	// LinkEvidence is a bench run's evidence about its links (see LinkEvidence).
	LinkEvidence *LinkEvidence `json:"link_evidence,omitempty"`
	AllPairs     *AllPairs     `json:"all_pairs,omitempty"`
	Triage       *Triage       `json:"triage,omitempty"`

	// What the other commands return: `fix --plan`, `bench --dry-run`, a
	// bench run's outline, `bench compare` and `bench gpu`.
	FixPlan    *FixPlan         `json:"fix_plan,omitempty"`
	BenchPlan  *BenchPlan       `json:"bench_plan,omitempty"`
	BenchRun   *BenchRun        `json:"bench_run,omitempty"`
	Comparison *BenchComparison `json:"comparison,omitempty"`
	GPU        *GPU             `json:"gpu,omitempty"`
}

// Plan is what `sparkrig plan` said of one model on one cluster: the
// cluster's numbers with their sources, then time to first token and per
// output token by layout, the recommended layout and how to launch it.
type Plan struct {
	Model    string `json:"model"`
	ModelArg string `json:"model_arg,omitempty"` // what the user named
	Weights  string `json:"weights"`
	// TotalParams and ActiveParams are counts of parameters; WeightsGB the
	// whole model's weights.
	TotalParams  float64 `json:"total_params,omitempty"`
	ActiveParams float64 `json:"active_params_per_token,omitempty"`
	WeightsGB    float64 `json:"weights_gb,omitempty"`
	Platform     string  `json:"platform"`
	Nodes        int     `json:"nodes"`
	// Numbers are the cluster's figures the plan used, per node.
	Numbers     []PlanNumber `json:"numbers,omitempty"`
	Workload    string       `json:"workload"`
	Concurrency int          `json:"concurrency,omitempty"`
	// Recommended is the fastest layout that fits; empty when none fits.
	Recommended string       `json:"recommended,omitempty"`
	Layouts     []PlanRow    `json:"layouts"`
	Launch      []PlanLaunch `json:"launch,omitempty"`
	// Assumed are the constants the estimate rests on, with sources.
	Assumed []PlanNumber `json:"assumptions,omitempty"`
}

// PlanNumber is one figure of a plan as shown ("273 GB/s"), with its source.
type PlanNumber struct {
	Name   string  `json:"name,omitempty"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Text   string  `json:"text"`
	Source string  `json:"source"`
}

// PlanRow is one parallel layout of a plan. Weights and KV tokens are per
// node; TokensPerSec is one user's, ConcTokensPerS the total at the
// workload's concurrency; Speedup is decode's over the smallest layout that
// fits.
type PlanRow struct {
	Layout         string  `json:"layout"` // "TP2", "PP3"
	Fits           bool    `json:"fits"`
	WeightsGB      float64 `json:"weights_gb_per_node,omitempty"`
	KVTokens       int64   `json:"kv_cache_tokens,omitempty"`
	Sequences      int64   `json:"concurrent_sequences,omitempty"`
	TTFTms         float64 `json:"ttft_ms,omitempty"`
	TPOTms         float64 `json:"tpot_ms,omitempty"`
	TokensPerSec   float64 `json:"tokens_per_s,omitempty"`
	ConcTokensPerS float64 `json:"tokens_per_s_at_concurrency,omitempty"`
	Speedup        float64 `json:"speedup,omitempty"`
	Bound          string  `json:"bound,omitempty"`
	// MemoryMs, NetworkMs and ComputeMs make up the time per output token.
	MemoryMs  float64 `json:"tpot_memory_ms,omitempty"`
	NetworkMs float64 `json:"tpot_network_ms,omitempty"`
	ComputeMs float64 `json:"tpot_compute_ms,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// PlanLaunch is one engine's command lines for the recommended layout.
type PlanLaunch struct {
	Engine string   `json:"engine"`
	Lines  []string `json:"lines"`
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
	Verdict string   `json:"verdict"`                  // pass, slow, failed, unjudged (diagnose's link verdicts); errors: passed, but error counters moved
}

// Link is one cable (or switch path) between two netdevs of two nodes,
// with its status from all the evidence and the reasons it is not ok.
type Link struct {
	A       Endpoint   `json:"a"`
	B       Endpoint   `json:"b"`
	Subnet  string     `json:"subnet,omitempty"`
	Status  LinkStatus `json:"status"`
	Reasons []string   `json:"reasons,omitempty"`
}

// UnmarshalJSON reads a link, also as schema 2 wrote it (ok and problems
// instead of status and reasons), so a faulty link of an older document is
// never read as ok.
func (l *Link) UnmarshalJSON(b []byte) error {
	type plain Link
	var v struct {
		plain
		OK       *bool    `json:"ok"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = Link(v.plain)
	if l.Status == "" && v.OK != nil {
		if *v.OK {
			l.Status = LinkOK
		} else {
			l.Status, l.Reasons = LinkFaulty, v.Problems
		}
	}
	return nil
}

// OK reports whether the link carries what it should.
func (l Link) OK() bool { return l.Status == LinkOK }

// Flag worsens the link's status to s (never improves it) and records why.
func (l *Link) Flag(s LinkStatus, reason string) {
	if s.Rank() > l.Status.Rank() {
		l.Status = s
	}
	l.Reasons = append(l.Reasons, reason)
}

// LinkStatus is what a link carries, from its ends' state, addresses,
// speed and MTU, its twin's state and the ping mesh.
type LinkStatus string

// Link statuses, from best to worst (see Rank).
const (
	// LinkOK: both ends up and addressed, agreeing, and (on a two-function
	// port) the twin beside it as well.
	LinkOK LinkStatus = "ok"
	// LinkDegraded carries traffic below its rate: its twin down or
	// unaddressed (the port at half bandwidth), a slower end, a ring cabled
	// off the usual pattern.
	LinkDegraded LinkStatus = "degraded"
	// LinkFaulty loses traffic: the ends disagree on MTU or prefix, hold
	// the same address, or the don't-fragment ping mesh lost replies.
	LinkFaulty LinkStatus = "faulty"
	// LinkUnaddressed is cabled and up, but an end has no IPv4 address, so
	// it carries nothing.
	LinkUnaddressed LinkStatus = "unaddressed"
	// LinkDown: an end has no carrier.
	LinkDown LinkStatus = "down"
)

// Rank orders link statuses (higher is worse); an unknown status ranks
// with faulty, never as ok.
func (s LinkStatus) Rank() int {
	switch s {
	case "", LinkOK:
		return 0
	case LinkDegraded:
		return 1
	case LinkFaulty:
		return 2
	case LinkUnaddressed:
		return 3
	case LinkDown:
		return 4
	}
	return 2
}

// SwitchHost is the Endpoint.Host of the switch side of a switched rail.
const SwitchHost = "(switch)"

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
