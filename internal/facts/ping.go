package facts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The don't-fragment ping mesh's evidence: from a rail of each node, pings
// to peers' addresses with the don't-fragment bit set and a payload that
// fills the sender's MTU (ping -M do -s MTU-28); when the full-size ping
// loses packets, one small ping (1472 bytes) tells an MTU problem from no
// reachability at all. The plan of whom each node pings is the cluster
// model's (cluster.PingPlan); the script is capture's (capture.PingScript).

// Rail is one IPv4 address on one data netdev of one node: the unit NCCL
// and RoCE use, and what the ping mesh tests.
type Rail struct {
	Host    string
	NetDev  string
	RDMADev string
	Addr    netip.Prefix // address with its prefix length
	MTU     int
	// SpeedMbps is 0 when unknown.
	SpeedMbps int
	// Port is the physical port index (np0 → 0, np1 → 1), -1 when unknown.
	Port int
}

// Subnet is the network the rail's address belongs to.
func (r Rail) Subnet() netip.Prefix { return r.Addr.Masked() }

// PingCount is how many full-size probes each target gets.
const PingCount = 3

// PingTarget is one probe: from a rail of one node to a peer's address.
type PingTarget struct {
	From Rail
	To   Rail
}

// Size is the ICMP payload that makes a frame of the sender's MTU.
func (t PingTarget) Size() int { return t.From.MTU - 28 }

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
	pingSummary = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(\d+) packets transmitted, (\d+) (?:packets )?received`)
	})
	pingRTT = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:rtt|round-trip) min/avg/max(?:/mdev)? = [\d.]+/([\d.]+)/`)
	})
)

// ParsePing reads the statistics of an iputils or busybox ping run; ok is
// false when the output has none (ping missing, bad option, no such device).
func ParsePing(out []byte) (PingStats, bool) {
	m := pingSummary().FindSubmatch(out)
	if m == nil {
		return PingStats{}, false
	}
	var s PingStats
	s.Sent, _ = strconv.Atoi(string(m[1]))
	s.Received, _ = strconv.Atoi(string(m[2]))
	if r := pingRTT().FindSubmatch(out); r != nil {
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
