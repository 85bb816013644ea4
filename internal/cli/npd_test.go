package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// doctor --npd answers as a node-problem-detector custom plugin must: exit 0
// OK, 1 a problem, anything else unknown; one line on stdout within the
// byte limit NPD cuts at (kubernetes/node-problem-detector
// pkg/custompluginmonitor/plugin/plugin.go); nothing else on stdout.
func TestNPDPluginProtocol(t *testing.T) {
	const nodes = "../../testdata/nodes/"
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"a fail finding is a problem", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz"}, 1,
			"sparkrig: spark.twin-unaddressed: enP2p1s0f1np1: no IPv4 address; its twin en…"},
		{"a fail outside the condition's checks is not", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz", "--npd-checks", "gpu.*"}, 0,
			"sparkrig: ok: no problem in these checks"},
		{"a healthy node", []string{"--snapshot", nodes + "spark-healthy.tar.gz"}, 0,
			"sparkrig: ok: no problem in these checks"},
		{"a warn is no problem by default", []string{"--snapshot", nodes + "spark-mtu-twins-differ.tar.gz", "--npd-checks", "spark.mtu*"}, 0,
			"sparkrig: ok: no problem in these checks"},
		{"unless the policy says so", []string{"--snapshot", nodes + "spark-mtu-twins-differ.tar.gz", "--npd-checks", "spark.mtu*", "--npd-unhealthy-on", "warn"}, 1,
			"sparkrig: spark.mtu-twins-differ: enp1s0f1np1+enP2p1s0f1np1: enp1s0f1np1 MTU…"},
		{"a smaller limit", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz", "--npd-max-output", "40"}, 1,
			"sparkrig: spark.twin-unaddressed: enP…"},
		{"no evidence is unknown", []string{"--snapshot", nodes + "no-such.tar.gz"}, ExitUnknown,
			"sparkrig: not evaluated: ../../testdata/nodes/no-such.tar.gz: no such file or…"},
		{"a check pattern matching no check is refused", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz", "--npd-checks", "gpu.xdi"}, ExitUnknown,
			`sparkrig: --npd-checks "gpu.xdi": matches no check`},
		{"a malformed pattern is refused", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz", "--npd-checks", "spark.[twin"}, ExitUnknown,
			`sparkrig: --npd-checks "spark.[twin": not a valid pattern`},
		{"a malformed --npd-never is refused", []string{"--snapshot", nodes + "spark-twin-unaddressed.tar.gz", "--npd-never", "spark.[twin"}, ExitUnknown,
			`sparkrig: --npd-never "spark.[twin": not a valid pattern`},
		{"an --npd-always matching nothing is refused", []string{"--snapshot", nodes + "spark-healthy.tar.gz", "--npd-always", "nic.flaps"}, ExitUnknown,
			`sparkrig: --npd-always "nic.flaps": matches no check`},
		{"a known-issue fail is a problem", []string{"--snapshot", nodes + "spark-kernel-7.0-no-kho.tar.gz", "--npd-checks", "known.*"}, 1,
			"sparkrig: known.issue: "},
		{"many nodes is unknown", []string{"--hosts", "a,b"}, ExitUnknown,
			"sparkrig: --npd audits this node (or one --snapshot), not --hosts"},
		{"a bad policy is unknown", []string{"--npd-unhealthy-on", "sometimes"}, ExitUnknown,
			`sparkrig: --npd-unhealthy-on "sometimes": want fail, warn or none`},
	} {
		code, out, errOut := runMain(t, append([]string{"doctor", "--npd"}, c.args...)...)
		if code != c.code || !(out == c.out+"\n" || strings.HasSuffix(c.out, ": ") && strings.HasPrefix(out, c.out)) || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, %q", c.name, code, out, errOut, c.code, c.out)
		}
		limit := 80
		if c.name == "a smaller limit" {
			limit = 40
		}
		if len(strings.TrimSpace(out)) > limit {
			t.Errorf("%s: %d bytes, over the %d-byte limit", c.name, len(strings.TrimSpace(out)), limit)
		}
	}
}

// The shipped plugin configs run sparkrig with arguments doctor accepts,
// and answer by the protocol on a node with a problem in each condition's
// checks or none.
func TestNPDShippedConfigsRun(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/sparkrig-npd-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	for name, text := range cm.Data {
		var pc struct {
			Rules []struct {
				Args []string `json:"args"`
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(text), &pc); err != nil || len(pc.Rules) != 1 {
			t.Fatalf("%s: %v", name, err)
		}
		args := pc.Rules[0].Args
		for node, problem := range map[string]string{
			"spark-twin-unaddressed":  "sparkrig-network.json", // spark.twin-unaddressed
			"spark-kernel-7.0-no-kho": "sparkrig-os.json",      // known.issue kernel-7.0-kho-enomem
		} {
			want := 0
			if name == problem {
				want = 1
			}
			code, out, errOut := runMain(t, append(args, "--snapshot", "../../testdata/nodes/"+node+".tar.gz")...)
			if code != want || len(out) > 81 || errOut != "" {
				t.Errorf("%s: %v on %s: exit %d, %q, %q; want %d", name, args, node, code, out, errOut, want)
			}
		}
	}
	if len(cm.Data) != 3 {
		t.Errorf("%d configs, want 3", len(cm.Data))
	}
}
