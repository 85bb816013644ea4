package render

import (
	"bytes"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

func parseProm(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, text)
	}
	return fams
}

// promValue finds the sample of family name whose labels include want.
func promValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric family %s", name)
	}
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("%s has no sample with labels %v", name, want)
	return 0
}

func TestPrometheusDoctor(t *testing.T) {
	var buf bytes.Buffer
	if err := Prometheus(&buf, twoSparks()); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	fams := parseProm(t, text)
	for name, f := range fams {
		if f.GetHelp() == "" || f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s: help %q type %v", name, f.GetHelp(), f.GetType())
		}
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sparkrig_status", nil, 2},
		{"sparkrig_report_timestamp_seconds", nil, 1795316400},
		{"sparkrig_host_audited", map[string]string{"host": "spark-bd26"}, 1},
		{"sparkrig_host_audited", map[string]string{"host": "spark-3", "status": "unreachable"}, 0},
		{"sparkrig_findings", map[string]string{"host": "spark-bd26", "severity": "fail"}, 1},
		{"sparkrig_findings", map[string]string{"host": "spark-bd26", "severity": "warn"}, 1},
		{"sparkrig_findings", map[string]string{"host": "spark-3995", "severity": "fail"}, 0},
		{"sparkrig_findings", map[string]string{"host": "spark-3995", "severity": "not-evaluated"}, 1},
		{"sparkrig_cluster_findings", map[string]string{"severity": "fail"}, 1},
		{"sparkrig_check_status", map[string]string{"host": "spark-bd26", "check": "spark.twin-unaddressed", "subject": "enP2p1s0f0np0"}, 4},
		{"sparkrig_check_status", map[string]string{"host": "spark-bd26", "check": "gpu.driver"}, 0},
		{"sparkrig_check_status", map[string]string{"host": "cluster", "check": "cluster.mtu-mismatch"}, 4},
		{"sparkrig_link_speed_bytes_per_second", map[string]string{"host": "spark-3995", "netdev": "enp1s0f0np0"}, 12.5e9},
		{"sparkrig_link_speed_bytes_per_second", map[string]string{"host": "spark-bd26", "netdev": "enp1s0f0np0"}, 25e9},
		{"sparkrig_link_mtu_bytes", map[string]string{"host": "spark-bd26", "netdev": "enp1s0f0np0", "peer_host": "spark-3995"}, 1500},
		{"sparkrig_link_ok", map[string]string{"host": "spark-bd26", "netdev": "enP2p1s0f0np0"}, 1},
		{"sparkrig_link_ok", map[string]string{"host": "spark-bd26", "netdev": "enp1s0f0np0"}, 0},
	}
	for _, c := range cases {
		if got := promValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Every severity is present for every host, so a count that drops to zero
	// is a sample of 0, not a vanished series.
	if n := len(fams["sparkrig_findings"].Metric); n != 3*5 {
		t.Errorf("sparkrig_findings has %d samples, want 15", n)
	}
}

func TestPrometheusEscapesLabels(t *testing.T) {
	r := twoSparks()
	r.Hosts[0].Findings[0].Subject = "quote\" back\\slash\nnewline"
	var buf bytes.Buffer
	if err := Prometheus(&buf, r); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, buf.String())
	if v := promValue(t, fams, "sparkrig_check_status", map[string]string{"subject": "quote\" back\\slash\nnewline"}); v != 3 {
		t.Errorf("escaped subject: got %v", v)
	}
}

// TestPrometheusSamples: the rig's doctor JSON and the analysed real outputs.
func TestPrometheusSamples(t *testing.T) {
	r := rigDoctor(t)
	r.Analyses = analysedSamples(t)
	var buf bytes.Buffer
	if err := Prometheus(&buf, r); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, buf.String())
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sparkrig_status", nil, 2},
		{"sparkrig_findings", map[string]string{"host": "spark-01", "severity": "warn"}, 4},
		{"sparkrig_cluster_findings", map[string]string{"severity": "fail"}, 2},
		{"sparkrig_check_status", map[string]string{"host": "cluster", "check": "cluster.mtu-mismatch"}, 4},
		{"sparkrig_link_mtu_bytes", map[string]string{"host": "spark-02", "netdev": "enp1s0f1np1"}, 1500},
		{"sparkrig_link_mtu_bytes", map[string]string{"host": "spark-01", "netdev": "enp1s0f1np1"}, 9000},
		{"sparkrig_link_speed_bytes_per_second", map[string]string{"host": "spark-01", "netdev": "enP2p1s0f1np1"}, 25e9},
		{"sparkrig_link_ok", map[string]string{"host": "spark-01", "netdev": "enp1s0f1np1", "peer_host": "spark-02"}, 0},
		// nccl-tests/04: peak 20.95 GB/s (in place) at 16 GiB, expected 21.97.
		{"sparkrig_nccl_busbw_peak_bytes_per_second", map[string]string{"collective": "all_gather", "ranks": "2"}, 20.95e9},
		{"sparkrig_nccl_busbw_peak_size_bytes", map[string]string{"collective": "all_gather"}, 17179869184},
		{"sparkrig_nccl_busbw_expected_bytes_per_second", map[string]string{"collective": "all_gather"}, 21.97e9},
		// the last all_reduce with 4 ranks is the fifth table of nccl-tests/03
		{"sparkrig_nccl_busbw_peak_bytes_per_second", map[string]string{"collective": "all_reduce", "ranks": "4"}, 5.2e9},
		// perftest/01 (--run_infinitely): the judged median intervals, 92.57 and
		// 97.28 Gb/s, on the two twins; ~96 expected
		{"sparkrig_rdma_bandwidth_bytes_per_second", map[string]string{"device": "rocep1s0f0"}, 92.57e9 / 8},
		{"sparkrig_rdma_bandwidth_bytes_per_second", map[string]string{"device": "roceP2p1s0f0"}, 97.28e9 / 8},
		{"sparkrig_rdma_bandwidth_expected_bytes_per_second", map[string]string{"device": "rocep1s0f0"}, 12e9},
	}
	for _, c := range cases {
		if got := promValue(t, fams, c.name, c.labels); math.Abs(got-c.want) > 1 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// Runs of the same collective and rank count from different inputs (two
// clusters, two dates) are different series, labelled by input; before,
// the last input hid the others.
func TestPrometheusKeepsInputsApart(t *testing.T) {
	a := analysedSamples(t)[0] // nccl-tests/04: all_gather, 2 ranks, peak 20.95 GB/s
	b := a
	b.File = "other-cluster/all_gather.txt"
	b.Data.NCCLTables = append([]results.NCCLTable(nil), a.Data.NCCLTables...)
	b.Data.NCCLTables[0].PeakBusBWGBs = 10.5
	rdma := analysedSamples(t)[3] // perftest/01: rocep1s0f0 at 92.57 Gb/s
	rdma2 := rdma
	rdma2.File = "rerun/ib_write_bw.txt"
	r := &report.Report{Analyses: []report.AnalysisResult{a, b, rdma, rdma2}}
	var buf bytes.Buffer
	if err := Prometheus(&buf, r); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, buf.String())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sparkrig_nccl_busbw_peak_bytes_per_second", map[string]string{"input": "04_all_gather_16G_2x_dgx-spark_GB10_new-header", "collective": "all_gather", "ranks": "2"}, 20.95e9},
		{"sparkrig_nccl_busbw_peak_bytes_per_second", map[string]string{"input": "all_gather", "collective": "all_gather", "ranks": "2"}, 10.5e9},
		{"sparkrig_rdma_bandwidth_bytes_per_second", map[string]string{"input": "01_ib_write_bw_dgx-spark_run_infinitely_2rails", "device": "rocep1s0f0"}, 92.57e9 / 8},
		{"sparkrig_rdma_bandwidth_bytes_per_second", map[string]string{"input": "ib_write_bw", "device": "rocep1s0f0"}, 92.57e9 / 8},
	} {
		if got := promValue(t, fams, c.name, c.labels); math.Abs(got-c.want) > 1 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n := len(fams["sparkrig_nccl_busbw_peak_bytes_per_second"].Metric); n != 2 {
		t.Errorf("%d busbw series, want 2 (one per input)", n)
	}
}
