package fix

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestScriptsParse runs `sh -n` over every script fix sends to a host, for
// every topology, both activations, so a quoting slip fails here and not on
// a node.
func TestScriptsParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	scripts := map[string]string{
		"observe":  ObserveScript(),
		"confirm":  confirmScript("/var/backups/sparkrig/x"),
		"restore":  restoreNowScript("/var/backups/sparkrig/x"),
		"rollback": rollbackLatestScript(),
		"status":   statusScript("/var/backups/sparkrig/x"),
		"deadman":  deadmanScript(90 * time.Second),
	}
	for _, tc := range topoCases {
		h := buildCase(t, tc).Hosts[0]
		for name, act := range map[string]Activation{"netplan": ActivateNetplan, "ip": ActivateIP} {
			scripts[tc.name+"/stage-"+name] = stageScript(h, "20261122T000000Z", act, time.Minute)
			scripts[tc.name+"/activate-"+name] = activateScript(h, act)
			scripts[tc.name+"/restore-"+name] = restoreScript(h, act)
		}
	}
	for name, s := range scripts {
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", name, err, out)
		}
	}
}

// TestActivateScript pins what each activation runs for the one-cable pair.
func TestActivateScript(t *testing.T) {
	h := buildCase(t, topoCases[0]).Hosts[0]
	if got, want := activateScript(h, ActivateNetplan), "B=$(dirname \"$0\")\nrc=0\nnetplan apply || rc=$?\nsysctl --system >/dev/null || rc=$?\necho $rc > \"$B/activate.rc\"\n"; got != want {
		t.Errorf("netplan activation:\n%s\nwant:\n%s", got, want)
	}
	got := activateScript(h, ActivateIP)
	for _, line := range []string{"ip link set dev enp1s0f1np1 mtu 9000 || rc=$?\n", "ip addr add 192.168.101.10/24 dev enP2p1s0f1np1 || rc=$?\n", "sysctl -q -p /etc/sysctl.d/60-sparkrig.conf || rc=$?\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("ip activation lacks %q:\n%s", line, got)
		}
	}
}
