package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/report"
)

func TestParseHostList(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "spark-01,spark-02", want: []string{"spark-01", "spark-02"}},
		{in: "spark-[01-04]", want: []string{"spark-01", "spark-02", "spark-03", "spark-04"}},
		{in: "node[1,3,9-11].lan", want: []string{"node1.lan", "node3.lan", "node9.lan", "node10.lan", "node11.lan"}},
		{in: "r[1-2]n[01-02]", want: []string{"r1n01", "r1n02", "r2n01", "r2n02"}},
		{in: " a , b,a,", want: []string{"a", "b"}},
		{in: "root@spark-[1-2]:2222", want: []string{"root@spark-1:2222", "root@spark-2:2222"}},
		{in: "spark-[04-01]", err: `host range "spark-[04-01]": bad range "04-01"`},
		{in: "spark-[01-04", err: `host range "spark-[01-04": missing ]`},
		{in: "spark-[a-b]", err: `host range "spark-[a-b]": "a" is not a number`},
		{in: "n[1-99999]", err: "more than 16384"},
		// at the integer limit: a loop comparing with the high end never ended
		{in: "n[9223372036854775806-9223372036854775807]", want: []string{"n9223372036854775806", "n9223372036854775807"}},
		{in: "n[9223372036854775807]", want: []string{"n9223372036854775807"}},
		{in: "n[9223372036854775808]", err: `"9223372036854775808" is not a number`},
		// many small ranges in one group are counted as they are expanded
		{in: "n[" + strings.Repeat("1-4000,", 64) + "1]", err: "more than 16384"},
		{in: ",", err: "empty host list"},
	} {
		got, err := ParseHostList(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseHostfile(t *testing.T) {
	// Open MPI hostfile syntax (mpirun --hostfile), and a plain list.
	mpi := "# two Sparks\nspark-01 slots=1\nspark-02 slots=1 max_slots=2   # the second\n\n"
	got, err := ParseHostfile([]byte(mpi))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]HostfileEntry{{"spark-01", 1}, {"spark-02", 1}}, got); diff != "" {
		t.Error(diff)
	}
	got, err = ParseHostfile([]byte("spark-[01-03]\nspark-01\n"))
	if err != nil || len(got) != 3 || got[2].Host != "spark-03" {
		t.Errorf("plain: %v %v", got, err)
	}
	for in, want := range map[string]string{
		"spark-01 slots=x\n":      "line 1: bad slots=\"x\"",
		"a\nspark-01 2\n":         "line 2: unexpected \"2\"",
		"# nothing\n\n":           "no hosts in hostfile",
		"ok\nspark-[3-1] slots=1": "line 2:",
	} {
		if _, err := ParseHostfile([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func FuzzParseHostList(f *testing.F) {
	for _, s := range []string{"spark-[01-04]", "a,b", "n[1,3-5]x[01-02]", "[", "a]b", "n[9223372036854775800-9223372036854775807]", "n[1-4000,1-4000]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := ParseHostList(s)
		if err == nil && (len(hs) == 0 || len(hs) > MaxHosts) {
			t.Errorf("%q: %d hosts", s, len(hs))
		}
	})
}

func FuzzParseHostfile(f *testing.F) {
	f.Add([]byte("spark-01 slots=1\nspark-02 slots=1\n"))
	f.Add([]byte("# c\nnode[1-3]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := ParseHostfile(b)
		if err == nil && len(hs) == 0 {
			t.Error("no hosts and no error")
		}
	})
}

func TestResolveSSHConfig(t *testing.T) {
	home := t.TempDir()
	cfgText := `
Host spark-*
  User ubuntu
  IdentityFile ~/.ssh/spark_ed25519
  IdentitiesOnly yes
  ProxyJump bastion,jump2

Host spark-01
  HostName 192.168.1.21
  Port 2201
  UserKnownHostsFile ~/.ssh/known_spark /etc/ssh/ssh_known_hosts

Host bastion
  HostName bastion.example.net
  GlobalKnownHostsFile /etc/ssh/site_known_hosts
  User admin
  ProxyJump none

Host *
  User fallback
  Port 22
`
	p := filepath.Join(home, "config")
	os.WriteFile(p, []byte(cfgText), 0o600)
	c, err := LoadSSHConfig(p, home, "me")
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Resolve("spark-01")
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoint{Name: "spark-01", HostName: "192.168.1.21", Port: 2201, User: "ubuntu",
		IdentityFiles: []string{home + "/.ssh/spark_ed25519"}, IdentitiesOnly: true,
		KnownHosts: []string{home + "/.ssh/known_spark", "/etc/ssh/ssh_known_hosts"}, ProxyJump: []string{"bastion", "jump2"},
		GlobalKnownHosts: []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("spark-01 (-want +got):\n%s", diff)
	}
	e, _ = c.Resolve("root@spark-02:2222")
	if e.User != "root" || e.Port != 2222 || e.HostName != "spark-02" || e.KnownHosts[0] != home+"/.ssh/known_hosts" {
		t.Errorf("spark-02: %+v", e)
	}
	e, _ = c.Resolve("bastion")
	if e.User != "admin" || e.ProxyJump != nil || e.HostName != "bastion.example.net" {
		t.Errorf("bastion: %+v", e)
	}
	e, _ = c.Resolve("other")
	if e.User != "fallback" || e.Port != 22 {
		t.Errorf("other: %+v", e)
	}
	if _, err := LoadSSHConfig(filepath.Join(home, "nope"), home, "me"); err == nil {
		t.Error("missing -F file accepted")
	}
	os.WriteFile(p, []byte("Host x\n  Port 99999\n"), 0o600)
	c, _ = LoadSSHConfig(p, home, "me")
	if _, err := c.Resolve("x"); err == nil || !strings.Contains(err.Error(), `Port "99999"`) {
		t.Errorf("bad port: %v", err)
	}
}

func TestFanOutBoundsConcurrencyAndDeadlines(t *testing.T) {
	var running, peak atomic.Int32
	hosts := []string{"a", "b", "c", "d", "e", "f"}
	f := FanOut{Parallel: 2, PerHost: 2 * time.Second}
	stuck := make(chan struct{})
	defer close(stuck)
	start := time.Now()
	res := f.Each(context.Background(), hosts, func(ctx context.Context, i int, h string) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			if p := peak.Load(); n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		switch h {
		case "b": // ignores its deadline entirely, until the test ends
			<-stuck
			return nil
		case "c":
			<-ctx.Done()
			return ctx.Err()
		case "d":
			return errors.New("refused")
		}
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	if peak.Load() > 2 {
		t.Errorf("peak concurrency %d", peak.Load())
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("took %v: a stuck host held the others", el)
	}
	var got []string
	for _, r := range res {
		s := r.Host + ":ok"
		if r.Err != nil {
			s = r.Host + ":" + r.Err.Error()
		}
		got = append(got, s)
	}
	want := []string{"a:ok", "b:timed out: no answer: the per-host deadline (--host-timeout 2s) passed", "c:context deadline exceeded", "d:refused", "e:ok", "f:ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzParseSSHConfig(f *testing.F) {
	f.Add([]byte("Host spark-*\n  User ubuntu\n  ProxyJump bastion\nHost *\n  Port 22\n"))
	f.Add([]byte("Match host x exec true\n"))
	f.Add([]byte("Host \"a b\"\n\tHostName=1.2.3.4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Contains(bytes.ToLower(b), []byte("include")) {
			return // Include reads files from this machine
		}
		cfg, err := ParseSSHConfig(b)
		if err != nil {
			return
		}
		c := NewSSHConfig("/home/u", "u", cfg)
		c.Resolve("spark-01") // must not panic
	})
}

func TestRouteFollowsTheFirstJumpHostsOwnProxyJump(t *testing.T) {
	cfg, err := ParseSSHConfig([]byte(`
Host spark-01
  ProxyJump gw,inner-gw
Host gw
  HostName gw.example.net
  ProxyJump bastion
Host inner-gw
  ProxyJump ignored
Host bastion
  Port 2222
Host loop-a
  ProxyJump loop-b
Host loop-b
  ProxyJump loop-a
`))
	if err != nil {
		t.Fatal(err)
	}
	// --ssh-user and a port override reach the host named, not its jump hosts.
	d := &Dialer{conf: NewSSHConfig("/home/u", "u", cfg), opt: Options{User: "root", Port: 2200}}
	e, _ := d.Resolve("spark-01")
	if e.User != "root" || e.Port != 2200 {
		t.Errorf("spark-01 %s@%s", e.User, e.Addr())
	}
	hops, err := d.Route(e)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hops {
		got = append(got, fmt.Sprintf("%s %s@%s", h.Name, h.User, h.Addr()))
		if h.ProxyJump != nil {
			t.Errorf("%s keeps ProxyJump %v", h.Name, h.ProxyJump)
		}
	}
	// Like OpenSSH: bastion first (gw's own ProxyJump), then gw, then
	// inner-gw reached through gw, its own ProxyJump not used.
	want := []string{"bastion u@bastion:2222", "gw u@gw.example.net:22", "inner-gw u@inner-gw:22"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("route (-want +got):\n%s", diff)
	}
	e, _ = d.Resolve("loop-a")
	if _, err := d.Route(e); err == nil || !strings.Contains(err.Error(), "ProxyJump loop") {
		t.Errorf("loop: %v", err)
	}
}

// Match blocks the parser cannot evaluate are skipped with a warning, not
// fatal; ProxyCommand is refused rather than bypassed.
func TestSSHConfigMatchAndProxyCommand(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, "config")
	text := "Match user ubuntu\n  IdentityFile ~/.ssh/work\nMatch host spark-* exec \"true\"\n  Port 2222\nMatch host spark-*\n  User admin\n\nHost spark-01\n  HostName 10.0.0.1\n\nHost behind\n  ProxyCommand ssh -W %h:%p bastion\n"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadSSHConfig(p, home, "me")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		p + `: line 1 "Match user ubuntu" is not evaluated; its settings are not applied`,
		p + `: line 3 "Match host spark-* exec \"true\"" is not evaluated; its settings are not applied`,
	}
	if diff := cmp.Diff(want, c.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// The unevaluated block sets Port for spark-*: spark-01 is refused
	// rather than reached on a port ssh may not use.
	if _, err := c.Resolve("spark-01"); err == nil || !strings.Contains(err.Error(), `line 3 "Match host spark-* exec \"true\"" sets Port and may apply to spark-01`) {
		t.Errorf("spark-01: %v", err)
	}
	e, err := c.Resolve("other")
	if err != nil || e.HostName != "other" || e.Port != 22 || e.User != "me" || len(e.IdentityFiles) != 0 {
		t.Errorf("other = %+v, %v", e, err)
	}
	if _, err := c.Resolve("behind"); err == nil || !strings.Contains(err.Error(), "ProxyCommand is not supported; use ProxyJump") {
		t.Errorf("ProxyCommand: %v", err)
	}
}

// TestUnevaluatedMatchNeverChangesTheRoute: a ProxyJump (or ProxyCommand,
// HostName, Port) inside a Match block sparkrig cannot evaluate refuses the
// hosts it may apply to, with advice, instead of connecting directly where
// ssh -G would go through the bastion; hosts its host patterns exclude, and
// blocks that set nothing of the route, change nothing.
func TestUnevaluatedMatchNeverChangesTheRoute(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, "config")
	text := "Host spark-*\n  User admin\n\n" +
		"Match exec \"test -n \\\"$SSH_AUTH_SOCK\\\"\"\n  ProxyJump bastion.example\n\n" +
		"Match originalhost gpu-* localnetwork 10.0.0.0/8\n  HostName=10.1.2.3\n\n" +
		"Match user ubuntu\n  IdentityFile ~/.ssh/work\n"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadSSHConfig(p, home, "me")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{
		"spark-01": `line 4 "Match exec \"test -n \\\"$SSH_AUTH_SOCK\\\"\"" sets ProxyJump and may apply to spark-01, but sparkrig cannot evaluate it: ssh may route spark-01 differently (ssh -G spark-01 shows how)`,
		"gpu-07":   `sets ProxyJump and may apply to gpu-07`,
	} {
		if _, err := c.Resolve(host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", host, err, want)
		}
	}
	// Without the exec block, only gpu-* may be rerouted (HostName).
	text = strings.Replace(text, "ProxyJump bastion.example", "ForwardAgent yes", 1)
	os.WriteFile(p, []byte(text), 0o600)
	if c, err = LoadSSHConfig(p, home, "me"); err != nil {
		t.Fatal(err)
	}
	if e, err := c.Resolve("spark-01"); err != nil || e.HostName != "spark-01" || e.User != "admin" {
		t.Errorf("spark-01 = %+v, %v", e, err)
	}
	if _, err := c.Resolve("gpu-07"); err == nil || !strings.Contains(err.Error(), `"Match originalhost gpu-* localnetwork 10.0.0.0/8" sets HostName and may apply to gpu-07`) {
		t.Errorf("gpu-07: %v", err)
	}
}

// TestIncludeOfWhatIsNotAConfigIsRefused: an Include naming /dev/zero (the
// parser would read it whole, without end) or a FIFO (it would hang), even
// through a nested include, is refused with the file and line.
func TestIncludeOfWhatIsNotAConfigIsRefused(t *testing.T) {
	home := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	os.MkdirAll(ssh, 0o700)
	fifo := filepath.Join(ssh, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	os.WriteFile(filepath.Join(ssh, "nested"), []byte("Host x\n  User y\nInclude /dev/zero\n"), 0o600)
	for text, want := range map[string]string{
		"Include /dev/zero\n":              "line 1: Include /dev/zero: /dev/zero: not a regular file",
		"Host a\n  User b\nInclude fifo\n": "line 3: Include fifo: " + fifo + ": not a regular file",
		"Include=nested\n":                 filepath.Join(ssh, "nested") + ": line 3: Include /dev/zero: /dev/zero: not a regular file",
	} {
		p := filepath.Join(home, "config")
		os.WriteFile(p, []byte(text), 0o600)
		done := make(chan error, 1)
		go func() { _, err := LoadSSHConfig(p, home, "me"); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %v, want %q", text, err, want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%q: still reading after 60 s", text)
		}
	}
	// A regular included file is read and applies.
	ok := filepath.Join(ssh, "ok")
	os.WriteFile(ok, []byte("Host spark-*\n  User admin\n"), 0o600)
	p := filepath.Join(home, "config")
	os.WriteFile(p, []byte("Include "+ok+"\n"), 0o600)
	c, err := LoadSSHConfig(p, home, "me")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := c.Resolve("spark-01"); err != nil || e.User != "admin" {
		t.Errorf("spark-01 = %+v, %v", e, err)
	}
}

// report.HostRanges is read back by ParseHostList as the same hosts in the
// same order, for any mix of numbered, padded and unnumbered names.
func TestHostRangesRoundTrips(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"node-00001", "node-00002", "node-00003"}, "node-[00001-00003]"},
		{[]string{"spark-9", "spark-10", "spark-11", "gpu1.lan", "gpu2.lan", "head"}, "spark-[9-11],gpu1.lan,gpu2.lan,head"},
		{[]string{"n08", "n09", "n10", "n12"}, "n[08-10],n12"},
		{[]string{"n3", "n2", "n1"}, "n3,n2,n1"},
		{[]string{"a1", "a01"}, "a1,a01"},
	} {
		got := report.HostRanges(c.in)
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var hosts []string
		seen := map[string]bool{}
		for range 1 + rng.IntN(60) {
			h := fmt.Sprintf("%s%0*d%s", []string{"n", "spark-", "r1-gpu", ""}[rng.IntN(4)], rng.IntN(4), rng.IntN(30), []string{"", ".lan", "b"}[rng.IntN(3)])
			if !seen[h] && h != "" {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
		back, err := ParseHostList(report.HostRanges(hosts))
		if err != nil || !slices.Equal(back, hosts) {
			t.Fatalf("%q → %q → %q, %v", hosts, report.HostRanges(hosts), back, err)
		}
	}
}
