package slurm

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
)

// withTail is a recorded line with the optional lines current Slurm prints
// after Reason= (SchedMD/slurm src/api/node_info.c @284c3b9,
// slurm_sprint_node_table: Comment=, Extra=, InstanceId= InstanceType=,
// ReservationName=, TLSCertTokenSet= TLSCertLastRenewal=, Topology=,
// Parameters=, each after one space with --oneliner).
func withTail(t testing.TB, file, tail string) []byte {
	b := strings.TrimRight(string(fixture.ReadVerbatim(t, "testdata/"+file)), "\n")
	return []byte(b + " " + tail + "\n")
}

// The fields current Slurm prints after Reason= end the reason: a node
// sparkrig drained stays recognised as drained with sparkrig's reason, so it
// is not drained again on every run.
func TestParseNodeFieldsAfterReason(t *testing.T) {
	const ours = "sparkrig: gpu.xid: Xid 79 on GPU 0"
	for _, tail := range []string{
		"Comment=rack 4, ask ops",
		"Comment=rack 4 Extra={\"rack\":4} ReservationName=maint",
		"Extra=x=y Reason=z InstanceId=i-1 InstanceType=gpu.large",
		"ReservationName=maint TLSCertTokenSet=No TLSCertLastRenewal=None Topology=default:sw1 Parameters=x",
	} {
		n, err := ParseNode(withTail(t, "show-node-drained.txt", tail))
		if err != nil || n.Reason != ours || n.State != "IDLE+DRAIN" || n.Name != "vm" {
			t.Errorf("%s: %+v, %v; want sparkrig's reason", tail, n, err)
		}
	}
	// A reason's own text that looks like an earlier field stays the reason;
	// a multi-line reason is joined as scontrol prints it.
	n, err := ParseNode(withTail(t, "show-node-operator-drain.txt", "Comment=c"))
	if err != nil || n.Reason != "disk replaced, ticket 4711" {
		t.Errorf("operator drain with a comment: %+v, %v", n, err)
	}
	line := "NodeName=n1 State=DOWN+DRAIN Reason=swap State=IDLE on n1 [slurm@2026-11-25T14:24:39]        second line Comment=c"
	if n, err := ParseNode([]byte(line)); err != nil || n.Reason != "swap State=IDLE on n1 second line" || n.State != "DOWN+DRAIN" {
		t.Errorf("%q: %+v, %v", line, n, err)
	}
	if f := Fields(string(fixture.ReadVerbatim(t, "testdata/show-node-idle.txt"))); f["OS"] != "Linux 6.18.44-fc-v769 #1 SMP PREEMPT_DYNAMIC @0" || f["RealMemory"] != "1" {
		t.Errorf("OS %q, RealMemory %q", f["OS"], f["RealMemory"])
	}
}

// FuzzParseNodeReason: any reason text (one line, no stamp-like brackets),
// any tail of later fields: the reason parsed is the reason written.
func FuzzParseNodeReason(f *testing.F) {
	f.Add("sparkrig: gpu.xid: GPU 0: Xid 79", "Comment=x Extra=y")
	f.Add("disk replaced, ticket 4711", "ReservationName=maint")
	f.Add("a State=IDLE b", "")
	f.Add("NodeName=other", "Parameters=p")
	f.Fuzz(func(t *testing.T, reason, tail string) {
		base := strings.TrimRight(string(fixture.ReadVerbatim(t, "testdata/show-node-idle.txt")), "\n")
		want := strings.Join(strings.Fields(reason), " ")
		if want == "" || strings.ContainsAny(reason, "[]\n\r\x00") || strings.ContainsFunc(want, func(r rune) bool { return r < 0x20 }) {
			return
		}
		for _, w := range strings.Fields(reason) {
			if m := fieldStart.FindStringSubmatch(w); m != nil && fieldRank[m[1]] > fieldRank["Reason"] {
				return // a later field's name inside the reason: the one-line format cannot tell
			}
		}
		line := base + " Reason=" + reason + " [root@2026-11-25T14:24:39]"
		if tail = strings.TrimSpace(tail); tail != "" && !strings.ContainsAny(tail, "\n\r") {
			line += " " + tail
			if m := fieldStart.FindStringSubmatch(strings.Fields(tail)[0]); m == nil || fieldRank[m[1]] <= fieldRank["Reason"] {
				return
			}
		}
		n, err := ParseNode([]byte(line))
		if err != nil || n.Reason != want || n.Name != "vm" || n.State != "IDLE" {
			t.Errorf("%q: %+v, %v; want reason %q", line, n, err, want)
		}
	})
}
