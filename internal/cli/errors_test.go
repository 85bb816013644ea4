package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestTimeoutsNameTheirDeadline: against a node that accepts TCP and never
// says a word, each deadline that ends the wait is the one named — the
// per-host --host-timeout, the connect timeout of ssh_config, the whole
// run's --timeout — never the connect timeout by default; stdout still
// ends with the summary and the exit status is 3. Each deadline is far
// below the others (2 s or 1 s against 10 s and more), so a loaded
// machine cannot make another fire first.
func TestTimeoutsNameTheirDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // silent: the SSH handshake never starts
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})

	dir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	identity := filepath.Join(dir, "id_ed25519")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(identity, string(pem.EncodeToMemory(block)))
	plain, short := filepath.Join(dir, "plain.conf"), filepath.Join(dir, "short.conf")
	write(plain, "Host *\n  ConnectTimeout 30\n")
	write(short, "Host *\n  ConnectTimeout 1\n")
	t.Setenv("SSH_AUTH_SOCK", "")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--ssh-config", plain, "--host-timeout", "2s"}, "did not finish: the per-host deadline (--host-timeout 2s) passed"},
		{[]string{"--ssh-config", short, "--host-timeout", "60s"}, "did not finish: the connect timeout (1s, ConnectTimeout) passed"},
		{[]string{"--ssh-config", plain, "--timeout", "1s"}, "did not finish: the whole run's deadline (--timeout 1s) passed"},
	} {
		args := append([]string{"doctor", "--hosts", ln.Addr().String(), "--identity", identity, "--known-hosts", filepath.Join(dir, "known_hosts")}, tt.args...)
		start := time.Now()
		code, out, errOut := runMain(t, args...)
		if code != ExitUnknown || !strings.Contains(errOut, "sparkrig: doctor: "+ln.Addr().String()+": timed out: SSH handshake with ") ||
			!strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tt.args, code, errOut, tt.want)
		}
		if out != "summary 0 of 1 host(s) audited\n" {
			t.Errorf("%v: stdout %q", tt.args, out)
		}
		if el := time.Since(start); el > 9*time.Second {
			t.Errorf("%v: took %v: a later deadline fired", tt.args, el)
		}
	}
}

// Usage errors are one line on stderr naming the command they concern, with
// nothing on stdout and exit 3; --version has no -v, which is --verbose
// where a command has it.
func TestUsageErrorsNameTheirCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze"}, "sparkrig: analyze: needs at least 1 argument, got 0 (see --help)\n"},
		{[]string{"bench", "gpu", "gemm", "--bogus"}, "sparkrig: bench gpu gemm: unknown flag: --bogus (see --help)\n"},
		{[]string{"doctor", "--format"}, "sparkrig: doctor: flag needs an argument: --format (see --help)\n"},
		{[]string{"-v"}, "sparkrig: unknown shorthand flag: 'v' in -v (see --help)\n"},
	} {
		code, out, errOut := runMain(t, tt.args...)
		if code != ExitUnknown || out != "" || errOut != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tt.args, code, out, errOut, tt.want)
		}
	}
	if code, out, _ := runMain(t, "--version"); code != ExitOK || out != "sparkrig version "+Version+"\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}
