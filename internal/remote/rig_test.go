package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

func rigOptions(r *testrig.Rig) remote.Options {
	return remote.Options{ConfigFile: r.SSHConfig, Home: r.Dir, ConnectTimeout: 30 * time.Second}
}

func TestRunOnRig(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "spark-01"}}})
	ctx := context.Background()
	c, err := remote.Dial(ctx, "spark-01", rigOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, errOut, code, err := c.Run(ctx, "cat; echo oops >&2; exit 3", strings.NewReader("hello\n"))
	if err != nil || string(out) != "hello\n" || string(errOut) != "oops\n" || code != 3 {
		t.Fatalf("Run = %q, %q, %d, %v", out, errOut, code, err)
	}
	// A command whose first line looks nothing like the marker passes through.
	out, _, _, _ = c.Run(ctx, "printf 'a\\nb'", nil)
	if string(out) != "a\nb" {
		t.Errorf("stdout = %q", out)
	}
}

func TestKillEndsTheRemoteProcessGroup(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "spark-01"}}})
	ctx := context.Background()
	c, err := remote.Dial(ctx, "spark-01", rigOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	// A child that ignores SIGTERM must still go (SIGKILL after the grace).
	p, err := c.Start("sh -c 'trap \"\" TERM; sleep 300' & sleep 301; wait", nil, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.PGID() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p.PGID() == 0 {
		t.Fatal("no process group reported")
	}
	h := r.Host("spark-01")
	if got, _ := h.Exec(ctx, "pgrep", "-c", "-g", itoa(p.PGID())); strings.TrimSpace(string(got)) == "0" {
		t.Fatalf("process group not running before Kill")
	}
	kctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p.Kill(kctx)
	// A killed process still runs until the kernel schedules its exit, which
	// on a loaded machine takes a moment: wait (generously) for the group to
	// hold nothing but zombies, which are dead and wait only to be reaped.
	var left []string
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, _ := h.Exec(ctx, "ps", "-o", "stat=,pid=,args=", "-g", itoa(p.PGID()))
		left = left[:0]
		for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			if l != "" && !strings.HasPrefix(l, "Z") {
				left = append(left, l)
			}
		}
		if len(left) == 0 || time.Now().After(end) {
			break
		}
	}
	for _, l := range left {
		t.Errorf("process left 30 s after Kill: %s", l)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestUnknownHostKeyRefusedThenAcceptedNew(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "spark-01", UnknownHostKey: true}}})
	ctx := context.Background()
	h := r.Host("spark-01")
	_, err := remote.Dial(ctx, "spark-01", rigOptions(r))
	if !errors.Is(err, remote.ErrHostKey) || !strings.Contains(err.Error(), h.HostKeyFingerprint) || !strings.Contains(err.Error(), "unknown") || !strings.Contains(err.Error(), h.Addr) {
		t.Fatalf("err = %v; want an unknown-host-key refusal naming %s and %s", err, h.Addr, h.HostKeyFingerprint)
	}
	o := rigOptions(r)
	o.AcceptNewHostKeys = true
	var told []string
	o.Notify = func(s string) { told = append(told, s) }
	c, err := remote.Dial(ctx, "spark-01", o)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if want := "added ssh-ed25519 key " + h.HostKeyFingerprint + " for " + h.Addr + " to " + r.KnownHosts; len(told) != 1 || told[0] != want {
		t.Errorf("told %q, want %q", told, want)
	}
	kh, _ := os.ReadFile(r.KnownHosts)
	if !strings.Contains(string(kh), h.Addr+" "+h.HostKeyLine) {
		t.Errorf("known_hosts after accept-new:\n%s", kh)
	}
	// Now known: a plain dial works.
	c, err = remote.Dial(ctx, "spark-01", rigOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestChangedHostKeyRefusedEvenWithAcceptNew(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "a"}, {Name: "b"}}})
	// Record b's key under a's address: a now presents a "changed" key.
	a, b := r.Host("a"), r.Host("b")
	if err := os.WriteFile(r.KnownHosts, []byte(a.Addr+" "+b.HostKeyLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := rigOptions(r)
	o.AcceptNewHostKeys = true
	_, err := remote.Dial(context.Background(), "a", o)
	if !errors.Is(err, remote.ErrHostKey) || !strings.Contains(err.Error(), "CHANGED") || !strings.Contains(err.Error(), a.HostKeyFingerprint) || !strings.Contains(err.Error(), b.HostKeyFingerprint) {
		t.Fatalf("err = %v", err)
	}
	// The advice removes exactly that entry, from that file.
	name := a.Addr // known_hosts names a host on another port "[addr]:port"
	if a.Port != 22 {
		name = fmt.Sprintf("'[%s]:%d'", a.Addr, a.Port)
	}
	if want := fmt.Sprintf("ssh-keygen -R %s -f %s", name, r.KnownHosts); !strings.Contains(err.Error(), want) {
		t.Errorf("advice: %v, want %q", err, want)
	}
}

// TestGlobalKnownHostsHonoured: a key in GlobalKnownHostsFile (as
// /etc/ssh/ssh_known_hosts is by default) is trusted, as OpenSSH trusts it,
// though the user's own known_hosts is empty.
func TestGlobalKnownHostsHonoured(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "spark-01"}}})
	h := r.Host("spark-01")
	global := filepath.Join(t.TempDir(), "site_known_hosts")
	if err := os.WriteFile(global, []byte(fmt.Sprintf("[%s]:%d %s\n", h.Addr, h.Port, h.HostKeyLine)), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(empty, nil, 0o600)
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	os.WriteFile(cfg, []byte(fmt.Sprintf("Host spark-01\n  HostName %s\n  Port %d\n  User %s\n  IdentityFile %s\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile %s\n  ConnectTimeout 30\n",
		h.Addr, h.Port, h.User, r.KeyPath, empty, global)), 0o600)
	c, err := remote.Dial(context.Background(), "spark-01", remote.Options{ConfigFile: cfg, Home: r.Dir})
	if err != nil {
		t.Fatalf("a key in GlobalKnownHostsFile was not trusted: %v", err)
	}
	c.Close()
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("the user's known_hosts was written: %q", b)
	}
}

func TestFailuresAreBoundedAndClassified(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{
		{Name: "down", Down: true}, {Name: "nosshd", NoSSHD: true}, {Name: "hang", HangAfterAuth: true},
	}})
	o := rigOptions(r)
	ctx := context.Background()

	// The down host is what the 1 s connect timeout is for; the bound below
	// is far from both it and the kernel's own SYN retries (over 2 min).
	down := o
	down.ConnectTimeout = time.Second
	start := time.Now()
	_, err := remote.Dial(ctx, "down", down)
	if !errors.Is(err, remote.ErrUnreachable) || time.Since(start) > 20*time.Second {
		t.Errorf("down: %v after %v", err, time.Since(start))
	}
	_, err = remote.Dial(ctx, "nosshd", o)
	if !errors.Is(err, remote.ErrUnreachable) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("nosshd: %v", err)
	}
	c, err := remote.Dial(ctx, "hang", o)
	if err != nil {
		t.Fatalf("hang: auth should succeed: %v", err)
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, _, err = c.Run(rctx, "echo hi", nil)
	if !errors.Is(err, remote.ErrTimeout) || time.Since(start) > 20*time.Second {
		t.Errorf("hang: %v after %v", err, time.Since(start))
	}
}

func TestAuthRefused(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "a"}}})
	other := t.TempDir() + "/id_other"
	// Any key the server does not know.
	if err := os.WriteFile(other, []byte(strangerKey), 0o600); err != nil {
		t.Fatal(err)
	}
	o := rigOptions(r)
	o.IdentityFiles = []string{other}
	_, err := remote.Dial(context.Background(), "a", o)
	if !errors.Is(err, remote.ErrAuth) {
		t.Fatalf("err = %v", err)
	}
}

// strangerKey is a throw-away ed25519 key that no rig host authorises.
const strangerKey = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBSTx/a1AUjg7RgTh8F4kZpfYpBtGjbFBAa6sUj7KMApgAAAJCBQQCWgUEA
lgAAAAtzc2gtZWQyNTUxOQAAACBSTx/a1AUjg7RgTh8F4kZpfYpBtGjbFBAa6sUj7KMApg
AAAEDuCXOkTuXBjW+g5C+2UJzvHSgvwrdWKW4gE/6yySI28VJPH9rUBSODtGBOHwXiRml9
ikG0aNsUEBrqxSPsowCmAAAADHN0cmFuZ2VyLWtleQE=
-----END OPENSSH PRIVATE KEY-----
`

func TestDroppedMidCommand(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "a"}}})
	c, err := remote.Dial(context.Background(), "a", rigOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The session's sshd process dies after part of the output went out.
	out, _, _, err := c.Run(context.Background(), "echo partial; sleep 0.2; kill -9 $PPID; sleep 5", nil)
	if !errors.Is(err, remote.ErrDropped) || string(out) != "partial\n" {
		t.Errorf("out %q, err %v", out, err)
	}
}

func TestProxyJumpAndAgent(t *testing.T) {
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("no ssh-agent")
	}
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "jump"}, {Name: "inner"}}})
	jump, inner := r.Host("jump"), r.Host("inner")
	// The key is offered only by the agent: no IdentityFile is readable.
	sock := filepath.Join(t.TempDir(), "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	var out []byte
	var err error
	for range 100 { // until the agent listens
		add := exec.Command("ssh-add", r.KeyPath)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err = add.CombinedOutput(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("ssh-add: %v %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "config")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`Host jump
  HostName %s
  User root
  UserKnownHostsFile %s
Host behind
  HostName %s
  User root
  ProxyJump jump
  UserKnownHostsFile %s
`, jump.Addr, r.KnownHosts, inner.Addr, r.KnownHosts)), 0o600)
	c, err := remote.Dial(context.Background(), "behind", remote.Options{ConfigFile: cfg, Home: t.TempDir(), AgentSock: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// SSH_CLIENT names the connecting address: the jump host's, not ours.
	out, _, _, err = c.Run(context.Background(), "uname -n; echo ${SSH_CLIENT%% *}", nil)
	if want := "inner\n" + jump.Addr + "\n"; err != nil || string(out) != want {
		t.Errorf("through the jump host: %q %v, want %q", out, err, want)
	}
	if len(c.Endpoint.ProxyJump) != 1 {
		t.Errorf("endpoint %+v", c.Endpoint)
	}
}

// A node whose network goes away without a word (no reset: power or link
// lost) is dropped by the keepalive after about interval × count, and the
// command running on it ends with that reason, where TCP alone would wait
// for many minutes.
func TestKeepaliveDropsAHostThatStopsAnswering(t *testing.T) {
	r := testrig.New(t, testrig.Config{Hosts: []testrig.HostSpec{{Name: "spark-01"}}})
	ctx := context.Background()
	cfg := filepath.Join(r.Dir, "alive.config")
	base, err := os.ReadFile(r.SSHConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append([]byte("Host *\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n"), base...), 0o600); err != nil {
		t.Fatal(err)
	}
	o := rigOptions(r)
	o.ConfigFile = cfg
	c, err := remote.Dial(ctx, "spark-01", o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Endpoint.ServerAliveInterval != time.Second || c.Endpoint.ServerAliveCountMax != 2 {
		t.Fatalf("endpoint %+v", c.Endpoint)
	}
	var out bytes.Buffer
	p, err := c.Start("echo up; sleep 600", nil, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "up") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// the host's management link goes down: nothing it sends arrives
	if b, err := r.Host("spark-01").Exec(ctx, "ip", "link", "set", "enP7s7", "down"); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	start := time.Now()
	_, err = p.Wait()
	took := time.Since(start)
	if !errors.Is(err, remote.ErrDropped) || !strings.Contains(err.Error(), "the host stopped answering (2 keepalives unanswered in 2s)") {
		t.Errorf("err = %v", err)
	}
	if took > 60*time.Second {
		t.Errorf("dropped after %s", took)
	}
	t.Logf("dropped after %s: %v", took.Round(10*time.Millisecond), err)
}
