package render

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// Prometheus writes r in the Prometheus text exposition format (with an
// all-pairs run's and a triage's metrics, as qualify and triage write them), for
// node_exporter's textfile collector (write to a temporary file in the
// collector's directory, then rename it to *.prom). Metric and label names are
// stable; a metric family with no samples is left out.
//
// Severities are encoded as numbers in sparkrig_check_status so a check that
// changes severity keeps one series: 0 ok, 1 info, 2 not-evaluated, 3 warn,
// 4 fail (report.Severity.Rank).
func Prometheus(w io.Writer, r *report.Report) error {
	pw := &promWriter{}
	promReport(pw, r)
	promHosts(pw, r)
	promCluster(pw, r)
	runs, rails, _ := benchData(r)
	promBench(pw, runs, rails)
	promTraffic(pw, r)
	if r.AllPairs != nil {
		promAllPairs(pw, r.AllPairs)
	}
	if r.Triage != nil {
		promTriage(pw, r.Triage)
	}
	return pw.flush(w)
}

// promTraffic exports what each rail carried in each bench step.
func promTraffic(p *promWriter, r *report.Report) {
	for _, a := range r.Analyses {
		for _, t := range a.Data.RailTraffic {
			lab := []string{"step", a.File, "host", t.Host, "netdev", t.NetDev}
			p.add("sparkrig_rail_transmit_bytes", "Bytes a rail sent during a bench step (RDMA port or netdev counters).", float64(t.TxBytes), lab...)
			p.add("sparkrig_rail_receive_bytes", "Bytes a rail received during a bench step.", float64(t.RxBytes), lab...)
			p.add("sparkrig_rail_transmit_share_ratio", "A rail's part of the bytes its host's rails sent during a bench step.", t.TxShare, lab...)
		}
	}
}

// promFamily is one metric family: its HELP, TYPE and samples.
type promFamily struct {
	name, help, typ string
	samples         []string
}

type promWriter struct {
	families []*promFamily
	byName   map[string]*promFamily
}

// add appends a sample to the family name (declared on first use) with labels
// given as alternating name, value pairs.
func (p *promWriter) add(name, help string, value float64, labels ...string) {
	if p.byName == nil {
		p.byName = map[string]*promFamily{}
	}
	f := p.byName[name]
	if f == nil {
		f = &promFamily{name: name, help: help, typ: "gauge"}
		p.byName[name] = f
		p.families = append(p.families, f)
	}
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(sanitize.LabelValue(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(value, 'f', -1, 64))
	f.samples = append(f.samples, b.String())
}

func (p *promWriter) flush(w io.Writer) error {
	var b strings.Builder
	for _, f := range p.families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		// A family may receive the same label set twice (two findings with
		// one ID and subject); the exposition format forbids duplicates.
		seen := map[string]bool{}
		for _, s := range f.samples {
			key := s[:strings.LastIndexByte(s, ' ')]
			if seen[key] {
				continue
			}
			seen[key] = true
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func promReport(p *promWriter, r *report.Report) {
	status := map[string]float64{"ok": 0, "warning": 1, "critical": 2, "unknown": 3}[statusWord(r)]
	p.add("sparkrig_status", "Overall verdict as sparkrig's exit status: 0 ok, 1 warning, 2 critical, 3 unknown.", status)
	if !r.GeneratedAt.IsZero() {
		p.add("sparkrig_report_timestamp_seconds", "When the report was generated, in seconds since the epoch.", float64(r.GeneratedAt.Unix()))
	}
	p.add("sparkrig_info", "Always 1; labels name the sparkrig version and the command that made the report.", 1,
		"version", r.ToolVersion, "command", r.Command)
}

func promHosts(p *promWriter, r *report.Report) {
	hosts := append([]report.Host(nil), r.Hosts...)
	sort.SliceStable(hosts, func(i, j int) bool { return hosts[i].Host < hosts[j].Host })
	for _, h := range hosts {
		up := 0.0
		if h.Status == report.HostAudited || h.Status == "" {
			up = 1
		}
		p.add("sparkrig_host_audited", "1 when the host's evidence was read and audited, 0 when it could not be (unreachable, bad snapshot, capture failed).", up,
			"host", h.Host, "status", h.Status)
	}
	for _, h := range hosts {
		promFindingCounts(p, "sparkrig_findings", "Findings per host by severity.", h.Findings, "host", h.Host)
	}
	for _, h := range hosts {
		promCheckStatus(p, h.Host, h.Findings)
	}
}

func promFindingCounts(p *promWriter, name, help string, fs []report.Finding, labels ...string) {
	counts := map[report.Severity]int{}
	for _, f := range fs {
		counts[f.Severity]++
	}
	for _, s := range severities {
		p.add(name, help, float64(counts[s]), append(append([]string(nil), labels...), "severity", string(s))...)
	}
}

// promCheckStatus writes one series per check and subject; host names the
// findings whose own Host is empty.
func promCheckStatus(p *promWriter, host string, fs []report.Finding) {
	sorted := append([]report.Finding(nil), fs...)
	// The worst finding of a check on a subject wins when it repeats.
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Severity.Rank() > sorted[j].Severity.Rank() })
	for _, f := range sorted {
		h := f.Host
		if h == "" {
			h = host
		}
		p.add("sparkrig_check_status", "Outcome of one check on one subject: 0 ok, 1 info, 2 not-evaluated, 3 warn, 4 fail.",
			float64(f.Severity.Rank()), "host", h, "check", f.ID, "subject", f.Subject)
	}
}

func promCluster(p *promWriter, r *report.Report) {
	c := r.Cluster
	if c == nil {
		return
	}
	promFindingCounts(p, "sparkrig_cluster_findings", "Cross-node findings by severity.", c.Findings)
	promCheckStatus(p, "cluster", c.Findings)
	for _, l := range c.Links {
		ok := 0.0
		if l.OK() {
			ok = 1
		}
		for _, e := range [][2]report.Endpoint{{l.A, l.B}, {l.B, l.A}} {
			lab := []string{"host", e[0].Host, "netdev", e[0].NetDev, "peer_host", e[1].Host, "peer_netdev", e[1].NetDev}
			if e[0].SpeedMbps > 0 {
				p.add("sparkrig_link_speed_bytes_per_second", "Negotiated link speed of this end in bytes per second (the value node_exporter exports as node_network_speed_bytes).", float64(e[0].SpeedMbps)*125000, lab...)
			}
			if e[0].MTU > 0 {
				p.add("sparkrig_link_mtu_bytes", "MTU of this end of the link.", float64(e[0].MTU), lab...)
			}
			p.add("sparkrig_link_ok", "1 when the link has no problem (its ends and twin up and addressed, MTU, speed, ping mesh), else 0.", ok, lab...)
		}
	}
	for _, q := range c.Qualified {
		p.add("sparkrig_link_qualified_bytes_per_second", "Rate of one direction of a link in doctor --qualify's traffic test.", q.Gbps*1e9/8,
			"rail", q.Rail, "from", q.From, "to", q.To)
	}
}

// promBench exports the last measured run of each collective and rank
// count, and the last RDMA bandwidth of each device, of every input: the
// label "input" (a file's name, a bench run's id) keeps runs of different
// inputs apart, as different clusters or dates are.
func promBench(p *promWriter, runs []ncclRun, rails []railResult) {
	type key struct {
		input string
		coll  string
		ranks int
	}
	last := map[key]ncclRun{}
	var keys []key
	for _, r := range runs {
		if r.Table == nil {
			continue
		}
		k := key{r.Input, r.Table.Collective, r.Table.Ranks}
		if _, ok := last[k]; !ok {
			keys = append(keys, k)
		}
		last[k] = r
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].input != keys[j].input {
			return keys[i].input < keys[j].input
		}
		if keys[i].coll != keys[j].coll {
			return keys[i].coll < keys[j].coll
		}
		return keys[i].ranks < keys[j].ranks
	})
	for _, k := range keys {
		r := last[k]
		lab := []string{"input", k.input, "collective", k.coll, "ranks", strconv.Itoa(k.ranks)}
		p.add("sparkrig_nccl_busbw_peak_bytes_per_second", "Best bus bandwidth of the last measured run, over all message sizes, in bytes per second (NCCL Inspector's nccl_bus_bandwidth_gbs is the same quantity per collective call, in GB/s: multiply by 1e9).",
			math.Round(r.Table.PeakBusBWGBs*1e9), lab...)
		p.add("sparkrig_nccl_busbw_peak_size_bytes", "Message size at which the peak bus bandwidth was measured.", float64(r.Table.PeakSize), lab...)
		if r.ExpectedGBs > 0 {
			p.add("sparkrig_nccl_busbw_expected_bytes_per_second", "Bus bandwidth this platform is expected to reach, in bytes per second.", math.Round(r.ExpectedGBs*1e9), lab...)
		}
		p.add("sparkrig_nccl_wrong_results", "Wrong results (#wrong) reported by the last run.", float64(r.Table.WrongResults), lab...)
	}
	type railKey struct{ input, rail string }
	lastRail := map[railKey]railResult{}
	var names []railKey
	for _, r := range rails {
		k := railKey{r.Run, r.Rail}
		if _, ok := lastRail[k]; !ok {
			names = append(names, k)
		}
		lastRail[k] = r
	}
	sort.Slice(names, func(i, j int) bool {
		if names[i].input != names[j].input {
			return names[i].input < names[j].input
		}
		return names[i].rail < names[j].rail
	})
	for _, k := range names {
		r := lastRail[k]
		lab := []string{"input", k.input, "device", k.rail}
		p.add("sparkrig_rdma_bandwidth_bytes_per_second", "Last measured RDMA bandwidth (perftest BW average, as judged) on one rail (device), in bytes per second.", math.Round(r.Gbps*1e9/8), lab...)
		if r.ExpectedGbps > 0 {
			p.add("sparkrig_rdma_bandwidth_expected_bytes_per_second", "RDMA bandwidth expected on one rail, in bytes per second.", math.Round(r.ExpectedGbps*1e9/8), lab...)
		}
	}
}
