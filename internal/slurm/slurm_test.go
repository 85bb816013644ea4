package slurm

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/health"
	"github.com/sparkrig/sparkrig/internal/report"
)

// The node states scontrol printed on a real slurmctld (Debian's
// slurm-wlm 22.05.8), as the health check reads them.
func TestParseNodeRecorded(t *testing.T) {
	for file, want := range map[string]Node{
		"show-node-idle.txt":           {Name: "vm", State: "IDLE"},
		"show-node-drained.txt":        {Name: "vm", State: "IDLE+DRAIN", Reason: "sparkrig: gpu.xid: Xid 79 on GPU 0"},
		"show-node-draining.txt":       {Name: "vm", State: "MIXED+DRAIN", Reason: "sparkrig: net.mtu: MTU 1500 on enp1s0f1np1"},
		"show-node-operator-drain.txt": {Name: "vm", State: "IDLE+DRAIN", Reason: "disk replaced, ticket 4711"},
		"show-node-comment-extra.txt":  {Name: "spark-02", State: "IDLE+DRAIN", Reason: "sparkrig: net.tcp-buffers: net.ipv4.tcp_rmem: 4096 131072 1048576"},
	} {
		got, err := ParseNode(fixture.ReadVerbatim(t, "testdata/"+file))
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", file, got, err, want)
		}
	}
	if _, err := ParseNode(fixture.ReadVerbatim(t, "testdata/show-node-unknown.txt")); err != ErrUnknownNode {
		t.Errorf("unknown node: %v, want ErrUnknownNode", err)
	}
	if _, err := ParseNode([]byte("segmentation fault\n")); err == nil {
		t.Error("garbage parsed as a node")
	}
}

func FuzzParseNode(f *testing.F) {
	f.Add(withTail(f, "show-node-drained.txt", "Comment=c Extra=e ReservationName=r"))
	for _, file := range []string{"show-node-comment-extra.txt", "show-node-idle.txt", "show-node-drained.txt", "show-node-draining.txt", "show-node-operator-drain.txt", "show-node-unknown.txt"} {
		f.Add(fixture.ReadVerbatim(f, "testdata/"+file))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseNode(b)
		if err == nil && (n.Name == "" || n.State == "" || strings.Contains(n.Reason, "\n")) {
			t.Errorf("parsed %+v from %q", n, b)
		}
	})
}

var (
	xid = report.Finding{ID: "gpu.xid", Severity: report.Fail, Subject: "GPU 0", Title: "no Xid errors", Observed: "Xid 79 (fallen off the bus) at 12:00:01"}
	mtu = report.Finding{ID: "net.mtu", Severity: report.Warn, Subject: "enp1s0f1np1", Title: "MTU 9000", Observed: "MTU 1500"}
)

func TestReason(t *testing.T) {
	if got, want := Reason([]report.Finding{xid}), "sparkrig: gpu.xid: GPU 0: Xid 79 (fallen off the bus) at 12:00:01"; got != want {
		t.Errorf("Reason = %q, want %q", got, want)
	}
	if got, want := Reason([]report.Finding{xid, mtu}), "sparkrig: gpu.xid: GPU 0: Xid 79 (fallen off the bus) at 12:00:01 (+1 more)"; got != want {
		t.Errorf("Reason = %q, want %q", got, want)
	}
	long := report.Finding{ID: "net.x", Severity: report.Fail, Subject: "node", Observed: "a\nb\x1b[31m" + strings.Repeat("é", 200)}
	got := Reason([]report.Finding{long, xid})
	if len(got) > MaxReason || !strings.HasPrefix(got, "sparkrig: net.x: a b [31m") || !strings.HasSuffix(got, "é… (+1 more)") {
		t.Errorf("long reason (%d bytes): %q", len(got), got)
	}
}

func TestDecide(t *testing.T) {
	ours := Reason([]report.Finding{xid})
	unread := report.Finding{ID: "gpu.ecc", Severity: report.NotEvaluated, Subject: "node", Observed: "nvidia-smi timed out after 20s"}
	for _, c := range []struct {
		name     string
		n        Node
		draining []report.Finding
		want     ActionKind
		reason   string
	}{
		{"unknown: our drain is not resumed", Node{State: "IDLE+DRAIN", Reason: ours}, []report.Finding{unread}, Nothing, ""},
		{"unknown: a healthy-looking node is not drained", Node{State: "IDLE"}, []report.Finding{unread}, Nothing, ""},
		{"a fail drains whatever else was unread", Node{State: "IDLE"}, []report.Finding{unread, xid}, Drain, ours},
		{"healthy idle node", Node{State: "IDLE"}, nil, Nothing, ""},
		{"a fail drains", Node{State: "IDLE"}, []report.Finding{xid}, Drain, ours},
		{"a fail drains a busy node (draining)", Node{State: "MIXED"}, []report.Finding{xid}, Drain, ours},
		{"already drained by us, same reason", Node{State: "IDLE+DRAIN", Reason: ours}, []report.Finding{xid}, Nothing, ""},
		{"drained by us for another check: reason updated", Node{State: "IDLE+DRAIN", Reason: "sparkrig: net.mtu: MTU 1500"}, []report.Finding{xid}, Drain, ours},
		{"operator drain kept", Node{State: "IDLE+DRAIN", Reason: "disk replaced, ticket 4711"}, []report.Finding{xid}, Nothing, ""},
		{"down node kept", Node{State: "DOWN", Reason: "Not responding"}, []report.Finding{xid}, Nothing, ""},
		{"healthy again: our drain resumed", Node{State: "IDLE+DRAIN", Reason: ours}, nil, Resume, ""},
		{"healthy again while draining: resumed", Node{State: "MIXED+DRAIN", Reason: ours}, nil, Resume, ""},
		{"healthy: operator drain never resumed", Node{State: "IDLE+DRAIN", Reason: "disk replaced, ticket 4711"}, nil, Nothing, ""},
		{"healthy: a reason that only mentions sparkrig is not ours", Node{State: "IDLE+DRAIN", Reason: "waiting for sparkrig: later"}, nil, Nothing, ""},
	} {
		a := Decide(c.n, health.DefaultPolicy.Judge(c.draining))
		if a.Kind != c.want || a.Reason != c.reason {
			t.Errorf("%s: %+v, want %s %q", c.name, a, c.want, c.reason)
		}
	}
}
