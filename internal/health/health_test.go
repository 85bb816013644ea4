package health

import (
	"strings"
	"testing"

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
