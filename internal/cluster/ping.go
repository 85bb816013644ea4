package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// The active mesh: from each node, ping every peer address on each rail
// with the don't-fragment bit set and a payload that fills the sender's MTU
// (ping -M do -s MTU-28), so a jumbo-frame mismatch shows on the rail and in
// the direction where it happens. When the full-size ping fails, one small
// ping (1472 bytes) tells an MTU problem from no reachability at all.

// PingCount is how many full-size probes each target gets.
const PingCount = 3

// MaxPingTargets bounds the targets one node pings (a 32-node switch with
// two rails each has 62).
const MaxPingTargets = 256

// PingTarget is one probe: from a rail of one node to a peer's address.
type PingTarget struct {
	From Rail
	To   Rail
}

// Size is the ICMP payload that makes a frame of the sender's MTU.
func (t PingTarget) Size() int { return t.From.MTU - 28 }

// PingPlan lists, per source host, the targets of the mesh: every other
// node's rail on each segment. Hosts keep the order of segs' rails.
func PingPlan(segs []Segment) map[string][]PingTarget {
	plan := map[string][]PingTarget{}
	for _, s := range segs {
		for _, from := range s.Rails {
			for _, to := range s.Rails {
				if to.Host != from.Host && from.MTU > 28 && len(plan[from.Host]) < MaxPingTargets {
					plan[from.Host] = append(plan[from.Host], PingTarget{From: from, To: to})
				}
			}
		}
	}
	return plan
}

// PingScript is the sh program one node runs for its targets: all probes at
// once (each bounded by count, interval and -W), then the outputs, framed.
func PingScript(ts []PingTarget) string {
	var b strings.Builder
	b.WriteString("T=$(mktemp -d) || exit 97\ntrap 'rm -rf \"$T\"' EXIT\nexport LC_ALL=C\n")
	for i, t := range ts {
		// A netdev name may hold any character but '/', ':' and blanks.
		dev := shell.Quote(t.From.NetDev)
		fmt.Fprintf(&b, "( ping -n -M do -s %d -c %d -i 0.2 -W 1 -I %s %s > \"$T/%d\" 2>&1; r=$?; echo $r > \"$T/%d.rc\"; "+
			"if [ $r -ne 0 ]; then ping -n -M do -s 1472 -c 1 -W 1 -I %s %s > \"$T/%d.s\" 2>&1; echo $? > \"$T/%d.src\"; fi ) &\n",
			t.Size(), PingCount, dev, t.To.Addr.Addr(), i, i, dev, t.To.Addr.Addr(), i, i)
	}
	b.WriteString("wait\n")
	for i := range ts {
		fmt.Fprintf(&b, "echo \"@@ping %d $(cat \"$T/%d.rc\")\"; cat \"$T/%d\"\n", i, i, i)
		fmt.Fprintf(&b, "[ -f \"$T/%d.src\" ] && { echo \"@@small %d $(cat \"$T/%d.src\")\"; cat \"$T/%d.s\"; }\n", i, i, i, i)
	}
	return b.String()
}

// PingStats is what one ping run reported.
type PingStats struct {
	Sent, Received int
	// AvgRTTms is the average round trip in ms (0 when nothing came back).
	AvgRTTms float64
}

// Loss is the lost fraction in percent.
func (p PingStats) Loss() float64 {
	if p.Sent == 0 {
		return 100
	}
	return 100 * float64(p.Sent-p.Received) / float64(p.Sent)
}

var (
	pingSummary = regexp.MustCompile(`(\d+) packets transmitted, (\d+) (?:packets )?received`)
	pingRTT     = regexp.MustCompile(`(?:rtt|round-trip) min/avg/max(?:/mdev)? = [\d.]+/([\d.]+)/`)
)

// ParsePing reads the statistics of an iputils or busybox ping run; ok is
// false when the output has none (ping missing, bad option, no such device).
func ParsePing(out []byte) (PingStats, bool) {
	m := pingSummary.FindSubmatch(out)
	if m == nil {
		return PingStats{}, false
	}
	var s PingStats
	s.Sent, _ = strconv.Atoi(string(m[1]))
	s.Received, _ = strconv.Atoi(string(m[2]))
	if r := pingRTT.FindSubmatch(out); r != nil {
		s.AvgRTTms, _ = strconv.ParseFloat(string(r[1]), 64)
	}
	return s, true
}

// PingResult is one target's outcome.
type PingResult struct {
	PingTarget
	Full PingStats
	// FullOK is false when the full-size ping printed no statistics.
	FullOK bool
	// Small is the fallback probe, run only when the full-size one lost packets.
	Small   *PingStats
	Output  string // the full-size run's output, for "could not run"
	ErrText string // set when the node could not run the mesh at all
}

// ParsePingScript splits PingScript's output into results for ts.
func ParsePingScript(ts []PingTarget, out []byte) []PingResult {
	res := make([]PingResult, len(ts))
	for i, t := range ts {
		res[i].PingTarget = t
	}
	sections := map[string]*bytes.Buffer{}
	var cur *bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "@@ping" || f[0] == "@@small") {
			cur = &bytes.Buffer{}
			sections[f[0]+" "+f[1]] = cur
			continue
		}
		if cur != nil {
			cur.WriteString(line + "\n")
		}
	}
	for i := range res {
		if b := sections[fmt.Sprintf("@@ping %d", i)]; b != nil {
			res[i].Output = b.String()
			res[i].Full, res[i].FullOK = ParsePing(b.Bytes())
		} else {
			res[i].ErrText = "no result"
		}
		if b := sections[fmt.Sprintf("@@small %d", i)]; b != nil {
			if s, ok := ParsePing(b.Bytes()); ok {
				res[i].Small = &s
			}
		}
	}
	return res
}

// PingFindings turns mesh results into findings, one per probe.
func PingFindings(rs []PingResult) []report.Finding {
	out := make([]report.Finding, 0, len(rs))
	for _, r := range rs {
		out = append(out, pingFinding(r))
	}
	return out
}

func pingFinding(r PingResult) report.Finding {
	f := report.Finding{ID: "cluster.df-ping", Host: r.From.Host,
		Subject:  fmt.Sprintf("%s → %s %s", r.From.NetDev, r.To.Host, r.To.Addr.Addr()),
		Title:    "don't-fragment ping at the rail's MTU",
		Expected: fmt.Sprintf("%d of %d replies to %d-byte frames (ping -M do -s %d)", PingCount, PingCount, r.From.MTU, r.Size()),
		Source:   "seed 000 (MTU 9000 end to end); DGX Spark platform notes, pitfall 5"}
	switch {
	case r.ErrText != "":
		f.Severity, f.Observed = report.NotEvaluated, r.ErrText
	case !r.FullOK:
		f.Severity, f.Observed = report.NotEvaluated, "ping did not run: "+firstLine(r.Output)
		f.Remedy = report.Manual(report.ActionUpgrade, "install iputils-ping on "+r.From.Host)
	case r.Full.Received == r.Full.Sent:
		f.Severity = report.OK
		f.Observed = fmt.Sprintf("%d/%d replies, avg RTT %.3f ms", r.Full.Received, r.Full.Sent, r.Full.AvgRTTms)
	default:
		f.Severity = report.Fail
		if r.Full.Received > 0 {
			f.Severity = report.Warn
		}
		f.Observed = fmt.Sprintf("%d/%d replies (%.0f%% loss) at %d-byte frames", r.Full.Received, r.Full.Sent, r.Full.Loss(), r.From.MTU)
		switch {
		case r.Small != nil && r.Small.Received > 0 && r.Full.Received == 0:
			f.Observed += "; 1500-byte frames pass"
			f.Why = "frames above 1500 bytes are dropped between these ends: an MTU mismatch on the link (or a switch port with a smaller MTU)"
			f.Remedy = report.Manual(report.ActionRun, fmt.Sprintf("set MTU %d on %s's facing netdev and on any switch port between them (netplan `mtu: %d`)", r.From.MTU, r.To.Host, r.From.MTU))
		case r.Small != nil && r.Small.Received == 0:
			f.Observed += "; 1500-byte frames are lost too"
			f.Why = "the peer address does not answer on this rail at all: a cable, link state, addressing or firewall problem"
			f.Remedy = report.Manual(report.ActionCable, fmt.Sprintf("check `ip -br addr` and `ip -br link` on both ends and the cable of %s", r.From.NetDev))
		default:
			f.Why = "lost probes on a direct link point to a bad cable or port, or congestion on a switch"
			f.Remedy = report.Manual(report.ActionCable, "check the cable and `ethtool -S "+r.From.NetDev+"` error counters on both ends")
		}
	}
	return f
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// PingEvidence names the mesh's results in a snapshot: active evidence kept
// with the rest, so a snapshot audits exactly as the live run did.
const PingEvidence = "ping-mesh"

// EncodePings is the mesh's results as stored in a snapshot.
func EncodePings(rs []PingResult) []byte {
	b, _ := json.MarshalIndent(rs, "", "  ") // plain data: cannot fail
	return append(b, '\n')
}

// DecodePings reads EncodePings' output back.
func DecodePings(b []byte) ([]PingResult, error) {
	var rs []PingResult
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %v", PingEvidence, err)
	}
	return rs, nil
}
