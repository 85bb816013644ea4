package health

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/check"
)

var (
	xid = check.Finding{ID: "gpu.xid", Severity: check.Fail, Subject: "GPU 0", Title: "no Xid errors", Observed: "Xid 79 (fallen off the bus) at 12:00:01"}
	mtu = check.Finding{ID: "net.mtu", Severity: check.Warn, Subject: "enp1s0f1np1", Title: "MTU 9000", Observed: "MTU 1500"}
	ne  = check.Finding{ID: "nccl.version", Severity: check.NotEvaluated, Subject: "node", Title: "NCCL 2.28.3 or newer", Observed: "no NCCL found"}
	inf = check.Finding{ID: "os.thp", Severity: check.Info, Subject: "node", Title: "THP madvise", Observed: "always"}
)

func TestPolicy(t *testing.T) {
	all := []check.Finding{xid, mtu, ne, inf}
	for _, c := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"default: fail only, a warn never", DefaultPolicy, []string{"gpu.xid"}},
		{"warn and worse", Policy{Severity: check.Warn}, []string{"gpu.xid", "net.mtu"}},
		{"none", Policy{}, nil},
		{"never wins", Policy{Severity: check.Fail, Never: []string{"gpu.*"}}, nil},
		{"always drains a warn", Policy{Severity: check.Fail, Always: []string{"net.mtu"}}, []string{"gpu.xid", "net.mtu"}},
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
