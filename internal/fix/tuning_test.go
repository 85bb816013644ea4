package fix

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/report"
)

// The doctor and fix state one value per setting: every key=value the
// doctor's own advice writes is the value fix's drop-in sets, and a node
// with fix's values passes the doctor's checks of them.
func TestDoctorAndFixAgreeOnTuning(t *testing.T) {
	n := sparkNode(t, "spark-1", verbatim(t, "ibdev2netdev-port1-up.txt")[0])
	n.Sysctls["net.core.rmem_max"], n.Sysctls["net.core.wmem_max"] = "1048576", "1048576"
	n.Sysctls["net.ipv4.tcp_rmem"], n.Sysctls["net.ipv4.tcp_wmem"] = "4096 87380 1048576", "4096 16384 1048576"
	n.Sysctls["net.ipv4.ip_local_port_range"] = "40000 60999"
	fs, _ := check.Run(n, check.DetectProfile(n))
	set := map[string]string{}
	for _, s := range sysctlSettings {
		set[s.Key] = s.Value
	}
	// "net.core.rmem_max=67108864\n" in printf, "net.ipv4.ip_local_port_range=10000 65535'" in echo
	kv := regexp.MustCompile(`(net\.[a-z0-9_.]+)=([0-9][0-9 ]*[0-9])`)
	judged := map[string]bool{}
	for _, f := range fs {
		if f.Severity == report.OK || f.Severity == report.NotEvaluated || !strings.HasPrefix(f.ID, "net.") {
			continue
		}
		judged[f.Subject] = true
		text := remedyText(f.Remedy)
		for _, m := range kv.FindAllStringSubmatch(text, -1) {
			if want, ok := set[m[1]]; !ok || m[2] != want {
				t.Errorf("%s advises %s=%s, fix sets %q", f.ID, m[1], m[2], want)
			}
		}
		if !strings.Contains(text, set[f.Subject]) {
			t.Errorf("%s on %s: the doctor's remedy does not state fix's value %q: %s", f.ID, f.Subject, set[f.Subject], text)
		}
	}
	for key := range set {
		if !judged[key] {
			t.Errorf("%s: the doctor did not flag %s below what fix sets", key, n.Sysctls[key])
		}
		n.Sysctls[key] = set[key]
	}
	fs, _ = check.Run(n, check.DetectProfile(n))
	for _, f := range fs {
		if _, ok := set[f.Subject]; ok && f.Severity != report.OK {
			t.Errorf("with fix's value %s, %s is %s: %s", set[f.Subject], f.ID, f.Severity, f.Observed)
		}
	}
}

// remedyText is a remedy's command and steps, as one string.
func remedyText(r *report.Remedy) string {
	if r == nil {
		return ""
	}
	parts := []string{r.Command}
	for _, s := range r.Steps {
		parts = append(parts, s.Text)
	}
	return strings.Join(parts, "\n")
}
