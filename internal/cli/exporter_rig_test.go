package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// promQuery asks Prometheus's query API for expr and returns each series'
// labels (as "k=v,...") and value.
func promQuery(ctx context.Context, base, expr string) (map[string]string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  []any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range body.Data.Result {
		var labels []string
		for k, v := range r.Metric {
			if k != "instance" && k != "job" && k != "__name__" {
				labels = append(labels, k+"="+v)
			}
		}
		slices.Sort(labels)
		out[strings.Join(labels, ",")] = fmt.Sprint(r.Value[1])
	}
	return out, nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRigPrometheusScrapesTheExporter runs `sparkrig exporter` over SSH
// against two rig hosts and Debian's Prometheus scraping it: the query API
// returns the exporter's series, named as doctor --format prometheus names
// them, with the rig's links at MTU 9000, and no ping mesh unless asked.
func TestRigPrometheusScrapesTheExporter(t *testing.T) {
	t.Parallel()
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found (install Debian's prometheus package)")
	}
	r := sparkPair(t, nil)
	bin := buildSparkrig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	exp := exec.CommandContext(ctx, bin, "exporter", "--listen", "127.0.0.1:0", "--interval", "2s",
		"--hosts", strings.Join(r.Names(), ","), "--ssh-config", r.SSHConfig)
	stderr, _ := exp.StderrPipe()
	if err := dieWithTest(exp).Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exp.Process.Kill(); exp.Wait() })
	sc := bufio.NewScanner(stderr)
	var target string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "sparkrig: exporter: serving http://"); ok {
			target = strings.TrimSuffix(a, "/metrics")
			break
		}
	}
	if target == "" {
		t.Fatal("the exporter did not say where it serves")
	}
	go func() {
		for sc.Scan() {
			t.Log("exporter: " + sc.Text())
		}
	}()

	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(conf, []byte(fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n- job_name: sparkrig\n  static_configs:\n  - targets: ['%s']\n", target)), 0o644)
	web := freeAddr(t)
	p := exec.CommandContext(ctx, prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	if out, err := os.Create(filepath.Join(dir, "prometheus.log")); err == nil {
		p.Stdout, p.Stderr = out, out
	}
	if err := dieWithTest(p).Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Process.Kill(); p.Wait() })

	base := "http://" + web
	var mtu map[string]string
	for ctx.Err() == nil {
		mtu, _ = promQuery(ctx, base, `sparkrig_link_mtu_bytes{job="sparkrig"}`)
		if len(mtu) > 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	want := map[string]string{
		"host=spark-01,netdev=enP2p1s0f1np1,peer_host=spark-02,peer_netdev=enP2p1s0f1np1": "9000",
		"host=spark-01,netdev=enp1s0f1np1,peer_host=spark-02,peer_netdev=enp1s0f1np1":     "9000",
		"host=spark-02,netdev=enP2p1s0f1np1,peer_host=spark-01,peer_netdev=enP2p1s0f1np1": "9000",
		"host=spark-02,netdev=enp1s0f1np1,peer_host=spark-01,peer_netdev=enp1s0f1np1":     "9000",
	}
	if !maps(mtu, want) {
		log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		t.Fatalf("sparkrig_link_mtu_bytes from Prometheus: %v, want %v\nprometheus log:\n%s", mtu, want, log)
	}
	audited, err := promQuery(ctx, base, `sparkrig_host_audited{job="sparkrig"}`)
	if err != nil || !maps(audited, map[string]string{"host=spark-01,status=audited": "1", "host=spark-02,status=audited": "1"}) {
		t.Errorf("sparkrig_host_audited: %v, %v", audited, err)
	}
	// Nothing active unless asked: no ping mesh without --ping-mesh.
	if pings, err := promQuery(ctx, base, `sparkrig_check_status{job="sparkrig",check="cluster.df-ping"}`); err != nil || len(pings) != 0 {
		t.Errorf("the exporter ran the ping mesh unasked: %v, %v", pings, err)
	}
	up, err := promQuery(ctx, base, `up{job="sparkrig"}`)
	if err != nil || !maps(up, map[string]string{"": "1"}) {
		t.Errorf("up: %v, %v", up, err)
	}
	own, err := promQuery(ctx, base, `sparkrig_exporter_last_audit_success{job="sparkrig"}`)
	if err != nil || !maps(own, map[string]string{"": "1"}) {
		t.Errorf("sparkrig_exporter_last_audit_success: %v, %v", own, err)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
