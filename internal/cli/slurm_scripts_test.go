package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The health check and the prolog read one policy file, and its patterns
// reach sparkrig as written: never matched against the files of the
// directory slurmd runs them in.
func TestSlurmScriptsShareThePolicyUnglobbed(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"gpu.xid", "net.mtu"} { // what gpu.* and net.* would glob to
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stand := filepath.Join(dir, "sparkrig")
	os.WriteFile(stand, []byte("#!/bin/sh\nfor a; do printf '[%s]' \"$a\"; done\n"), 0o755)
	defaults := filepath.Join(dir, "defaults")
	os.WriteFile(defaults, []byte(`SPARKRIG_HEALTH_ARGS="--always gpu.* --never 'net.*' --unhealthy-on warn"`+"\n"), 0o644)
	const policy = "[--always][gpu.*][--never][net.*][--unhealthy-on][warn]"
	for script, want := range map[string]string{
		"sparkrig-health.sh": "[slurm][health][--textfile][" + filepath.Join(dir, "t.prom") + "]" + policy,
		"sparkrig-prolog.sh": "[slurm][prolog]" + policy,
	} {
		abs, _ := filepath.Abs("../../deploy/slurm/" + script)
		cmd := exec.Command("sh", abs)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SPARKRIG="+stand, "SPARKRIG_DEFAULTS="+defaults, "SPARKRIG_TEXTFILE="+filepath.Join(dir, "t.prom"), "SLURM_SCRIPT_CONTEXT=")
		out, err := cmd.Output()
		if err != nil || string(out) != want {
			t.Errorf("%s ran %s (%v), want %s", script, out, err, want)
		}
	}
}

// A policy pattern that is malformed or matches no check is refused before
// anything is audited or changed.
func TestSlurmPolicyPatternsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"slurm", "health", "--dry-run", "--never", "gpu.[x"}, `sparkrig: slurm health: --never "gpu.[x": not a valid pattern` + "\n"},
		{[]string{"slurm", "prolog", "--always", "net.tcp-bufers"}, `sparkrig: slurm prolog: --always "net.tcp-bufers": matches no check` + "\n"},
	} {
		code, out, errOut := runMain(t, c.args...)
		if code != ExitUnknown || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, %q, %q; want 3, %q", c.args, code, out, errOut, c.want)
		}
	}
}
