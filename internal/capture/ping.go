package capture

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// PingScript is the sh program one node runs for its targets: all probes at
// once (each bounded by count, interval and -W), then the outputs, framed.
func PingScript(ts []facts.PingTarget) string {
	var b strings.Builder
	b.WriteString("T=$(mktemp -d) || exit 97\ntrap 'rm -rf \"$T\"' EXIT\nexport LC_ALL=C\n")
	for i, t := range ts {
		// A netdev name may hold any character but '/', ':' and blanks.
		dev := shell.Quote(t.From.NetDev)
		fmt.Fprintf(&b, "( ping -n -M do -s %d -c %d -i 0.2 -W 1 -I %s %s > \"$T/%d\" 2>&1; r=$?; echo $r > \"$T/%d.rc\"; "+
			"if [ $r -ne 0 ]; then ping -n -M do -s 1472 -c 1 -W 1 -I %s %s > \"$T/%d.s\" 2>&1; echo $? > \"$T/%d.src\"; fi ) &\n",
			t.Size(), facts.PingCount, dev, t.To.Addr.Addr(), i, i, dev, t.To.Addr.Addr(), i, i)
	}
	b.WriteString("wait\n")
	for i := range ts {
		fmt.Fprintf(&b, "echo \"@@ping %d $(cat \"$T/%d.rc\")\"; cat \"$T/%d\"\n", i, i, i)
		fmt.Fprintf(&b, "[ -f \"$T/%d.src\" ] && { echo \"@@small %d $(cat \"$T/%d.src\")\"; cat \"$T/%d.s\"; }\n", i, i, i, i)
	}
	return b.String()
}
