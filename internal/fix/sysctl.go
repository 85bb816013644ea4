package fix

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// sysctlSetting is one kernel parameter fix raises, with why and where the
// value comes from.
type sysctlSetting struct {
	Key   string
	Value string
	// Short reports whether the current value falls short of Value.
	Short func(cur string) bool
	Why   string
	// Unknown says to set it also where the node's value is not known.
	Unknown bool
}

// Sources: seed 002 (the book, lines 1703-1705 and 3892) and seed 004 (notes on its
// chapter 4, lines 193 and 378); the numbers are internal/tuning's, which the
// doctor's checks judge by.
var sysctlSettings = []sysctlSetting{
	{Key: "net.core.rmem_max", Value: strconv.Itoa(tuning.SocketBuffer), Short: belowInt(tuning.SocketBufferMin),
		Why: fmt.Sprintf("let one socket buffer up to %d MiB so a TCP stream (NCCL/Gloo socket transport, bootstrap, iperf3) can fill a 100-200 Gb/s link. Source: \"AI Systems Performance Engineering\" (C. Fregly, O'Reilly), \"Tune TCP/IP Stack if Using Ethernet\"", tuning.SocketBuffer>>20)},
	{Key: "net.core.wmem_max", Value: strconv.Itoa(tuning.SocketBuffer), Short: belowInt(tuning.SocketBufferMin),
		Why: "the send side of the same limit. Source: as above (rmem_max and wmem_max are raised together)"},
	{Key: "net.ipv4.tcp_rmem", Value: tuning.Triple(tuning.TCPRmem), Short: belowField(2, tuning.SocketBufferMin),
		Why: fmt.Sprintf("TCP receive autotuning may grow to %d MiB. Source: as above (\"raise ... the autotuning limits (net.ipv4.tcp_{r,w}mem)\")", tuning.SocketBuffer>>20)},
	{Key: "net.ipv4.tcp_wmem", Value: tuning.Triple(tuning.TCPWmem), Short: belowField(2, tuning.SocketBufferMin),
		Why: fmt.Sprintf("TCP send autotuning may grow to %d MiB. Source: as above", tuning.SocketBuffer>>20)},
	{Key: "net.ipv4.ip_local_port_range", Value: tuning.PortRange(), Short: fewerPorts(tuning.PortRangeMin),
		Why: fmt.Sprintf("more ephemeral ports for the many bootstrap and socket connections of a large job: too few and handshakes fail or stall. Source: notes on \"AI Systems Performance Engineering\" ch. 4 (\"Widen port range in /proc/sys/net/ipv4/ip_local_port_range. Example: %s\")", tuning.PortRange())},
}

// ringSysctls are what a ring of four or more nodes needs: every node
// forwards between its two ports, and reverse-path filtering is loose,
// since a neighbour's traffic arrives on one port for a subnet routed out of
// the other. Source: FujitsuPolycom/sparkring docs/PREREQUISITES.md;
// christopherowen/dgx-spark-networking.
var ringSysctls = []sysctlSetting{
	{Key: "net.ipv4.ip_forward", Value: "1", Short: func(cur string) bool { return strings.TrimSpace(cur) != "1" }, Unknown: true,
		Why: "a ring of four or more nodes reaches the nodes it is not cabled to through a neighbour, which must forward. Source: FujitsuPolycom/sparkring docs/PREREQUISITES.md"},
	{Key: "net.ipv4.conf.all.rp_filter", Value: "2", Short: func(cur string) bool { return strings.TrimSpace(cur) == "1" },
		Why: "strict reverse-path filtering drops routed ring traffic that arrives on the other port; loose (2) keeps the spoofing check. Source: Linux ip-sysctl.rst (rp_filter)"},
}

func belowInt(min int64) func(string) bool {
	return func(cur string) bool {
		v, err := strconv.ParseInt(strings.TrimSpace(cur), 10, 64)
		return err != nil || v < min
	}
}

func belowField(i int, min int64) func(string) bool {
	return func(cur string) bool {
		f := strings.Fields(cur)
		if len(f) <= i {
			return true
		}
		return belowInt(min)(f[i])
	}
}

func fewerPorts(n int64) func(string) bool {
	return func(cur string) bool {
		f := strings.Fields(cur)
		if len(f) != 2 {
			return true
		}
		lo, e1 := strconv.ParseInt(f[0], 10, 64)
		hi, e2 := strconv.ParseInt(f[1], 10, 64)
		return e1 != nil || e2 != nil || hi-lo+1 < n
	}
}

// renderSysctl writes the drop-in: every parameter the node falls short on,
// plus any the existing drop-in already sets (so planning after an apply
// shows no change). It returns nil when there is nothing to set.
func renderSysctl(n *facts.Node, current []byte, topo []sysctlSetting) (content []byte, values map[string]string) {
	had := parseSysctlConf(current)
	judged, bad := doctorSysctls(n)
	for _, s := range topo { // what the cabling needs, judged here
		v, ok := n.Sysctls[s.Key]
		judged[s.Key], bad[s.Key] = true, ok && s.Short(v) || !ok && s.Unknown
	}
	var b strings.Builder
	values = map[string]string{}
	for _, s := range append(append([]sysctlSetting(nil), sysctlSettings...), topo...) {
		// Only what the doctor flags (warn or fail) is changed; a value it
		// could not judge is left as the node has it.
		short := judged[s.Key] && bad[s.Key]
		if _, ok := had[s.Key]; !short && !ok {
			continue
		}
		b.WriteString("\n" + commentWrap(s.Why, 78))
		fmt.Fprintf(&b, "%s = %s\n", s.Key, s.Value)
		values[s.Key] = s.Value
		if s.Key == "net.ipv4.ip_local_port_range" {
			// sparkrig bench listens on these; an ephemeral port must never take them.
			b.WriteString("\n" + commentWrap("keep the ports sparkrig bench listens on (perftest, its TCP test, the rendezvous and qualify probes) out of the ephemeral range", 78))
			fmt.Fprintf(&b, "%s = %s\n", reservedPortsKey, tuning.ReservedPorts())
			values[reservedPortsKey] = tuning.ReservedPorts()
		}
	}
	if b.Len() == 0 {
		return nil, nil
	}
	head := "# Written by sparkrig fix; loaded at boot and by `sysctl --system`.\n" +
		"# Remove it (or run `sparkrig fix --rollback`) to go back to the previous values.\n"
	return []byte(head + b.String()), values
}

// reservedPortsKey keeps bench's listening ports out of a widened ephemeral
// range.
const reservedPortsKey = "net.ipv4.ip_local_reserved_ports"

// doctorSysctls says which parameters the doctor judged and which it flagged
// (warn or fail). A parameter it did not judge is left as it is.
func doctorSysctls(n *facts.Node) (judged, bad map[string]bool) {
	judged, bad = map[string]bool{}, map[string]bool{}
	fs, _ := check.Run(n, check.DetectProfile(n))
	for _, f := range fs {
		if f.Severity == report.NotEvaluated {
			continue
		}
		judged[f.Subject] = true
		bad[f.Subject] = bad[f.Subject] || f.Severity == report.Warn || f.Severity == report.Fail
	}
	return judged, bad
}

// parseSysctlConf reads "key = value" lines of a sysctl.d file.
func parseSysctlConf(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[strings.TrimPrefix(strings.TrimSpace(k), "-")] = strings.Join(strings.Fields(v), " ")
	}
	return out
}
