package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// startExporter runs the built exporter with args and returns its address
// (from the line it prints on stderr) and the running command.
func startExporter(t *testing.T, bin string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := dieWithTest(exec.Command(bin, append([]string{"exporter", "--listen", "127.0.0.1:0"}, args...)...))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "127.0.0.1:"); i >= 0 && strings.Contains(sc.Text(), "serving") {
			addr := strings.TrimSuffix(sc.Text()[i:], "/metrics")
			go io.Copy(io.Discard, stderr)
			return addr, cmd
		}
	}
	t.Fatal("the exporter did not say where it serves")
	return "", nil
}

// SIGTERM is how a daemon is stopped (systemd, the kubelet): the exporter
// ends with exit 0, not as interrupted.
func TestExporterSIGTERMExitsZero(t *testing.T) {
	t.Parallel()
	bin := buildSparkrig(t)
	_, cmd := startExporter(t, bin, "--interval", "1h", "--results", "testdata/bench/h200x2-native.json")
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Errorf("exit %d after SIGTERM, want 0", ee.ExitCode())
		} else if err != nil {
			t.Error(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("still running 60 s after SIGTERM")
	}
}

// --results naming a FIFO or a character device is refused by its type,
// unread, and the audit goes on: neither stalls it.
func TestExporterResultsSpecialFilesRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "results.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	var errb strings.Builder
	env := &Env{Now: time.Now, Stderr: &errb, Stdout: io.Discard, Getenv: func(string) string { return "" }}
	o := &exporterOptions{results: []string{fifo, "/dev/zero", "testdata/bench/h200x2-native.json"}}
	done := make(chan error, 1)
	go func() { _, err := exporterAudit(context.Background(), env, o, ""); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the audit stalled on a special file")
	}
	want := "sparkrig: exporter: " + fifo + ": open: is a named pipe, not a regular file\n" +
		"sparkrig: exporter: /dev/zero: open: is a character device, not a file\n"
	if errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
}

// writeTLS writes a self-signed certificate for 127.0.0.1 and its key.
func writeTLS(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sparkrig-test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// A Prometheus web configuration file turns on TLS and basic
// authentication: plain HTTP and a wrong password are refused, the right
// one scrapes; a file that does not parse stops the exporter at start.
func TestExporterWebConfig(t *testing.T) {
	t.Parallel()
	bin := buildSparkrig(t)
	dir := t.TempDir()
	cert, key, pool := writeTLS(t, dir)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	conf := filepath.Join(dir, "web.yml")
	os.WriteFile(conf, []byte("tls_server_config:\n  cert_file: "+cert+"\n  key_file: "+key+"\nbasic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	addr, _ := startExporter(t, bin, "--interval", "1h", "--results", "testdata/bench/h200x2-native.json", "--web.config.file", conf)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(url, user, pass string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(60 * time.Second)
	for get("https://"+addr+"/healthz", "prom", "s3cret") != 200 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond) // the first audit
	}
	for _, c := range []struct {
		url, user, pass string
		want            int
	}{
		{"https://" + addr + "/metrics", "prom", "s3cret", 200},
		{"https://" + addr + "/metrics", "prom", "wrong", 401},
		{"https://" + addr + "/metrics", "", "", 401},
		{"http://" + addr + "/metrics", "prom", "s3cret", 400}, // plain HTTP to a TLS port
	} {
		if got := get(c.url, c.user, c.pass); got != c.want {
			t.Errorf("%s as %q/%q: %d, want %d", c.url, c.user, c.pass, got, c.want)
		}
	}
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /no/such.pem\n  key_file: "+key+"\n"), 0o600)
	out, err := exec.Command(bin, "exporter", "--listen", "127.0.0.1:0", "--web.config.file", bad).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitUnknown || !strings.HasPrefix(string(out), "sparkrig: exporter: --web.config.file: ") {
		t.Errorf("a bad web config: %v %q", err, out)
	}
}

// With --kubectl --hosts, each audit lists the DaemonSet's pods again: a
// pod restarted under a new name is reached at the next audit.
func TestExporterKubectlPodsRefreshed(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := `#!/bin/sh
n=$(grep -c '^get' "` + log + `" 2>/dev/null || echo 0)
case " $* " in
*" get pods "*) echo "get" >> "` + log + `"; printf 'node-1\tsparkrig-pod-%s\n' "$((n+1))" ;;
*" exec "*) for a; do case $a in sparkrig-pod-*) echo "exec $a" >> "` + log + `";; esac; done; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := &Env{Now: time.Now, Stderr: io.Discard, Stdout: io.Discard, Getenv: func(string) string { return "" }}
	o := &exporterOptions{remote: remoteOptions{hosts: []string{"node-1"}, parallel: 1, hostTimeout: 30 * time.Second, timeout: 60 * time.Second, noPing: true,
		transport: &transportOptions{kubectl: true, k8sNamespace: "sparkrig", k8sSelector: "app.kubernetes.io/name=sparkrig", k8sContainer: "node-problem-detector"}}}
	for range 2 {
		if _, err := exporterAudit(context.Background(), env, o, ""); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(log)
	if got := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n", ";")), " "); !strings.Contains(got, "exec sparkrig-pod-1") || !strings.Contains(got, "exec sparkrig-pod-2") {
		t.Errorf("kubectl calls %q: want the second audit to exec into the pod listed anew", b)
	}
}

// An exporter whose every host is unreachable is failing: its audits say
// last_audit_success 0 with the reason no_host_reached, and /healthz turns
// 503 "failing" after three of them.
func TestExporterUnreachableHostsFail(t *testing.T) {
	t.Parallel()
	bin := buildSparkrig(t)
	dead := freeAddr(t) // nothing listens there
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	os.WriteFile(cfg, []byte("Host *\n  ConnectTimeout 5\n"), 0o600)
	addr, _ := startExporter(t, bin, "--interval", "1s", "--hosts", dead, "--ssh-config", cfg, "--host-timeout", "10s")
	client := &http.Client{Timeout: 30 * time.Second}
	var code int
	var body, page string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(b)
		if !strings.Contains(page, "sparkrig_exporter_consecutive_failures 3\n") && !strings.Contains(page, "sparkrig_exporter_consecutive_failures 4\n") {
			continue
		}
		if resp, err = client.Get("http://" + addr + "/healthz"); err == nil {
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
		}
		break
	}
	for _, line := range []string{"sparkrig_exporter_last_audit_success 0", `sparkrig_exporter_last_audit_failed{reason="no_host_reached"} 1`} {
		if !strings.Contains(page, line+"\n") {
			t.Errorf("no %q in\n%s", line, page)
		}
	}
	if code != 503 || body != "failing\n" {
		t.Errorf("/healthz after three audits that reached no host: %d %q, want 503 \"failing\"", code, body)
	}
}
