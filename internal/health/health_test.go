package health

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/report"
)

var (
	xid = report.Finding{ID: "gpu.xid", Severity: report.Fail, Subject: "GPU 0", Title: "no Xid errors", Observed: "Xid 79 (fallen off the bus) at 12:00:01"}
	mtu = report.Finding{ID: "net.mtu", Severity: report.Warn, Subject: "enp1s0f1np1", Title: "MTU 9000", Observed: "MTU 1500"}
	ne  = report.Finding{ID: "nccl.version", Severity: report.NotEvaluated, Subject: "node", Title: "NCCL 2.28.3 or newer", Observed: "no NCCL found"}
	inf = report.Finding{ID: "os.thp", Severity: report.Info, Subject: "node", Title: "THP madvise", Observed: "always"}
)

func TestPolicy(t *testing.T) {
	all := []report.Finding{xid, mtu, ne, inf}
	for _, c := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"default: fail only, a warn never", DefaultPolicy, []string{"gpu.xid"}},
		{"warn and worse", Policy{Severity: report.Warn}, []string{"gpu.xid", "net.mtu"}},
		{"none", Policy{}, nil},
		{"never wins", Policy{Severity: report.Fail, Never: []string{"gpu.*"}}, nil},
		{"always drains a warn", Policy{Severity: report.Fail, Always: []string{"net.mtu"}}, []string{"gpu.xid", "net.mtu"}},
		{"always never drains not-evaluated or info", Policy{Always: []string{"*"}}, []string{"gpu.xid", "net.mtu"}},
		{"never beats always", Policy{Always: []string{"*"}, Never: []string{"net.mtu"}}, []string{"gpu.xid"}},
	} {
		var got []string
		for _, f := range c.p.Unhealthy(all) {
			got = append(got, f.ID)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: unhealthy from %v, want %v", c.name, got, c.want)
		}
	}
}

// Any share of unread checks, any order: a problem found is unhealthy; else
// an unread check the policy covers is unknown; else healthy. Never a
// healthy node with a covered check unread.
func TestJudge(t *testing.T) {
	unread := report.Finding{ID: "gpu.ecc", Severity: report.NotEvaluated, Subject: "node", Observed: "nvidia-smi timed out after 20s"}
	for _, c := range []struct {
		name string
		p    Policy
		fs   []report.Finding
		want State
	}{
		{"all ok", DefaultPolicy, []report.Finding{inf}, Healthy},
		{"unread is unknown", DefaultPolicy, []report.Finding{inf, unread, ne}, Unknown},
		{"a fail beats unread", DefaultPolicy, []report.Finding{unread, xid}, Unhealthy},
		{"unread under --never is not the policy's", Policy{Severity: report.Fail, Never: []string{"gpu.*", "nccl.*"}}, []report.Finding{unread, ne}, Healthy},
		{"none: only --always checks can be unknown", Policy{Always: []string{"net.*"}}, []report.Finding{unread}, Healthy},
		{"none with the unread check in --always", Policy{Always: []string{"gpu.ecc"}}, []report.Finding{unread}, Unknown},
	} {
		v := c.p.Judge(c.fs)
		if v.State != c.want {
			t.Errorf("%s: %s, want %s", c.name, v.State, c.want)
		}
	}
	v := DefaultPolicy.Judge([]report.Finding{unread, ne})
	if got := v.Why(80); got != "sparkrig: not evaluated: gpu.ecc: nvidia-smi timed out after 20s (+1 more)" {
		t.Errorf("Why = %q", got)
	}
	if a := NPD(v, 80); a.Code != NPDUnknown {
		t.Errorf("NPD code %d, want 3", a.Code)
	}
	h := report.Host{Host: "n1", Status: "unreachable", Error: "ssh: connect refused"}
	if v := DefaultPolicy.JudgeHost(h, nil); v.State != Unknown || v.Why(80) != "sparkrig: not evaluated: ssh: connect refused" {
		t.Errorf("a host not audited: %+v %q", v, v.Why(80))
	}
}

func TestValidatePatterns(t *testing.T) {
	known := []string{"gpu.xid", "net.mtu"}
	for p, want := range map[string]string{
		"gpu.*":   "",
		"*":       "",
		"gpu.xdi": `--never "gpu.xdi": matches no check`,
		"gpu.[x":  `--never "gpu.[x": not a valid pattern`,
		"":        `--never "": not a valid pattern`,
	} {
		err := ValidatePatterns("--never", []string{p}, known)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("%q: %v, want %q", p, err, want)
		}
	}
}

// A summary cut at the byte limit never ends in half a character.
func TestSummaryKeepsRunesWhole(t *testing.T) {
	f := report.Finding{ID: "x", Severity: report.Fail, Subject: "node", Observed: strings.Repeat("é", 50)}
	for n := 20; n < 40; n++ {
		s := Summary(Prefix, []report.Finding{f}, n)
		if len(s) > n || !utf8.ValidString(s) {
			t.Errorf("%d: %q (%d bytes)", n, s, len(s))
		}
	}
}
