package fix

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// A drop-in that widens the ephemeral port range (here one written before,
// kept as the user has it) also reserves the ports sparkrig bench listens
// on, so a connection's source port can never take a benchmark server's.
// A node whose drop-in does not touch the range gets neither line.
func TestWidenedPortRangeReservesBenchPorts(t *testing.T) {
	n := &facts.Node{Host: "spark-1", Sysctls: map[string]string{}, Sources: map[string]facts.SourceStatus{facts.SrcSysctl: {Status: "ok"}}}
	for k, v := range linuxDefaults {
		n.Sysctls[k] = v
	}
	content, values := renderSysctl(n, []byte("net.ipv4.ip_local_port_range = 10000 65535\n"), nil)
	for _, want := range []string{"\nnet.ipv4.ip_local_port_range = 10000 65535\n", "\nnet.ipv4.ip_local_reserved_ports = 18515-18814\n"} {
		if !strings.Contains(string(content), want) {
			t.Errorf("drop-in lacks %q:\n%s", want, content)
		}
	}
	if values["net.ipv4.ip_local_reserved_ports"] != "18515-18814" {
		t.Errorf("values: %v", values)
	}
	content, _ = renderSysctl(n, []byte("net.core.rmem_max = 67108864\n"), nil)
	if strings.Contains(string(content), "ip_local_") {
		t.Errorf("a drop-in that leaves the port range alone reserves ports:\n%s", content)
	}
}
