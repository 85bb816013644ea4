package expect

import (
	"reflect"
	"strings"
	"testing"
)

func TestDefaultLoads(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Expectations) < 9 || len(s.Wires) < 12 {
		t.Fatalf("%d expectations, %d wires", len(s.Expectations), len(s.Wires))
	}
	for _, e := range s.Expectations {
		if !strings.Contains(e.Source, "(") {
			t.Errorf("%s: source does not name where it comes from: %q", e.ID, e.Source)
		}
	}
}

func TestFindSparkAllGather(t *testing.T) {
	s, _ := Default()
	q := Query{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: NCCLBusBW, Collective: "all_gather", Ranks: 2, Sizes: []int64{17179869184}}
	got := s.Find(q)
	if len(got) != 1 || got[0].ID != "spark-2n1c-all-gather-large" {
		t.Fatalf("%+v", got)
	}
	e := got[0]
	for v, want := range map[float64]string{20.95: "warning", 21.99: "ok", 17.4: "critical", 21.875: "ok"} {
		if g := e.Verdict(v); g != want {
			t.Errorf("verdict(%v) = %s, want %s", v, g, want)
		}
	}
	q.Sizes = []int64{33554432, 1 << 30}
	if got := s.Find(q); len(got) != 2 || got[0].Conditions.MinSize != 1<<30 {
		t.Errorf("order: %+v", got)
	}
	// all_reduce between two Sparks meets the same link: busbw is
	// defined to compare with the hardware whatever the collective
	q.Collective = "all_reduce"
	q.Sizes = []int64{33554432}
	if got := s.Find(q); len(got) != 0 {
		t.Errorf("all_reduce below 1 GiB has no sourced number, got %+v", got)
	}
	q.Sizes = []int64{1 << 30, 8 << 30}
	got = s.Find(q)
	if len(got) != 1 || got[0].ID != "spark-2n1c-all-reduce-large" {
		t.Fatalf("%+v", got)
	}
	for v, want := range map[float64]string{21.5: "ok", 19.0: "warning", 17.0: "critical"} {
		if g := got[0].Verdict(v); g != want {
			t.Errorf("all_reduce verdict(%v) = %s, want %s", v, g, want)
		}
	}
	q.Ranks = 3
	if got := s.Find(q); len(got) != 0 {
		t.Errorf("three ranks: %+v", got)
	}
}

func TestLatencyLowerIsBetter(t *testing.T) {
	s, _ := Default()
	got := s.Find(Query{Platform: "dgx-spark", Topology: "two-nodes-one-cable", Measure: RDMALat, Verb: "write"})
	if len(got) != 1 {
		t.Fatal(got)
	}
	for v, want := range map[float64]string{1.47: "ok", 3: "warning", 120: "critical"} {
		if g := got[0].Verdict(v); g != want {
			t.Errorf("verdict(%v) = %s, want %s", v, g, want)
		}
	}
}

func TestParseRejectsBadThresholds(t *testing.T) {
	_, err := Parse([]byte("expectations:\n- {id: x, unit: GB/s, source: s (x), better: higher, value: 10, warn: 11, pass: 5}\n"))
	if err == nil || !strings.Contains(err.Error(), "pass <= warn <= value") {
		t.Errorf("err = %v", err)
	}
}

func TestWireAndVersion(t *testing.T) {
	s, _ := Default()
	if w, ok := s.Wire("dgx-spark", "network"); !ok || w.Value != 25 {
		t.Errorf("%+v", w)
	}
	if w, ok := s.Wire("dgx-spark", "pcie-gen4"); !ok || w.Value != 31.5 {
		t.Errorf("%+v", w)
	}
	if !VersionAtLeast("2.28.9+cuda13.0", "2.28.3") || VersionAtLeast("2.25.1+cuda12.2", "2.28.3") || !VersionAtLeast("2.28.3", "2.28.3") {
		t.Error("version compare")
	}
}

// Wire limits that follow from a line rate are that rate: a NIC's Gb/s / 8,
// PCIe's GT/s × 16 lanes × 128/130 encoding / 8 (to the 0.05 GB/s the file keeps).
func TestWireArithmetic(t *testing.T) {
	s, _ := Default()
	for applies, want := range map[string]float64{
		"nic-100": 100.0 / 8, "nic-200": 200.0 / 8, "nic-400": 400.0 / 8,
		"pcie-gen3": 8 * 16 * 128 / 130.0 / 8, "pcie-gen4": 16 * 16 * 128 / 130.0 / 8, "pcie-gen5": 32 * 16 * 128 / 130.0 / 8,
	} {
		w, ok := s.Wire("any", applies)
		if !ok || w.Unit != "GB/s" || w.Value < want-0.05 || w.Value > want+0.05 {
			t.Errorf("%s: %+v, want %.3f GB/s", applies, w, want)
		}
	}
	for _, w := range s.Wires {
		if len(w.Source) < 15 {
			t.Errorf("%s: source %q does not say where the number comes from", w.ID, w.Source)
		}
	}
}

func TestNCCLMin(t *testing.T) {
	s, _ := Default()
	if got := s.NCCLMin("dgx-spark"); got != "2.28.3" {
		t.Errorf("dgx-spark: %q", got)
	}
	if got := s.NCCLMin("h100"); got != "" {
		t.Errorf("h100: %q", got)
	}
}

// Every known issue has what the doctor prints: a symptom, a fix, a source,
// a status, and a pattern that compiles.
func TestKnownIssuesLoad(t *testing.T) {
	ks, err := KnownIssues()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 11 {
		t.Errorf("%d known issues loaded", len(ks))
	}
	for _, k := range ks {
		if reflect.DeepEqual(k.Match, KnownMatch{}) {
			t.Errorf("%s matches nothing", k.ID)
		}
	}
}

func TestKernelMatches(t *testing.T) {
	m := KnownMatch{Kernels: []string{"7.0.0-1019", "7.0.0-31"}}
	for release, want := range map[string]bool{
		"7.0.0-1019-nvidia": true, "7.0.0-1019": true, "7.0.0-31-generic": true,
		"7.0.0-10190-nvidia": false, "7.0.0-30-generic": false, "6.17.0-1031-nvidia": false, "": false,
	} {
		if got := m.KernelMatches(release); got != want {
			t.Errorf("%q: %v, want %v", release, got, want)
		}
	}
	if got := KernelsMarkedBad("6.17.0-1031-nvidia"); len(got) != 1 || got[0] != "kernel-6.17.0-1031-host-reset" {
		t.Errorf("6.17.0-1031-nvidia: %v", got)
	}
	if got := KernelsMarkedBad("6.17.0-1029-nvidia"); len(got) != 0 {
		t.Errorf("6.17.0-1029-nvidia: %v", got)
	}
}

// An entry that only a set of nodes can show is left to the cluster.
func TestClusterOnly(t *testing.T) {
	ks, _ := KnownIssues()
	only := map[string]bool{}
	for _, k := range ks {
		only[k.ID] = k.Match.ClusterOnly()
	}
	want := map[string]bool{"nccl-same-version-other-build": true, "nccl-ring-cumem-off": true, "nccl-2.30.4-nvls-no-nvlink": false, "kernel-7.0-kho-enomem": false}
	for id, w := range want {
		if got, ok := only[id]; !ok || got != w {
			t.Errorf("%s: cluster-only %v (present %v), want %v", id, got, ok, w)
		}
	}
}
