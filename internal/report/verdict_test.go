package report

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/sparkrig/sparkrig/internal/results"
)

func TestWorseIsTheOneRanking(t *testing.T) {
	order := []Verdict{VerdictNone, VerdictOK, VerdictUnknown, VerdictWarning, VerdictCritical}
	for i, a := range order {
		for j, b := range order {
			want := a
			if j > i {
				want = b
			}
			if got := Worse(a, b); got != want {
				t.Errorf("Worse(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
	if Worse(VerdictOK, "bogus") != "bogus" {
		t.Error("an unrecognised verdict must not rank as a pass")
	}
}

func TestOverall(t *testing.T) {
	audited := func(fs ...Finding) Host { return Host{Host: "h", Status: HostAudited, Findings: fs} }
	tests := []struct {
		name string
		r    Report
		want Verdict
	}{
		{"empty", Report{}, VerdictUnknown},
		{"clean", Report{Hosts: []Host{audited(Finding{Severity: OK}, Finding{Severity: Info})}}, VerdictOK},
		{"not evaluated", Report{Hosts: []Host{audited(Finding{Severity: NotEvaluated})}}, VerdictUnknown},
		{"warn beats not evaluated", Report{Hosts: []Host{audited(Finding{Severity: NotEvaluated}, Finding{Severity: Warn})}}, VerdictWarning},
		{"unreachable host among clean", Report{Hosts: []Host{audited(), {Host: "x", Status: HostUnreachable}}}, VerdictUnknown},
		{"cluster fail", Report{Hosts: []Host{audited()}, Cluster: &Cluster{Findings: []Finding{{Severity: Fail}}}}, VerdictCritical},
		{"bad file among good", Report{Analyses: []Analysis{{Status: VerdictOK}, {Status: VerdictUnknown}}}, VerdictUnknown},
		{"no expectation is ok", Report{Analyses: []Analysis{{Status: VerdictNone}}}, VerdictOK},
		{"warning file", Report{Analyses: []Analysis{{Status: VerdictWarning}, {Status: VerdictUnknown}}}, VerdictWarning},
		{"fix plan, nothing to change", Report{FixPlan: &FixPlan{Hosts: []FixHost{{Files: []FixFile{{Changed: false}}}}}}, VerdictOK},
		{"fix plan changes a file", Report{FixPlan: &FixPlan{Hosts: []FixHost{{Files: []FixFile{{Changed: true}}}}}}, VerdictWarning},
		{"fix plan reactivates", Report{FixPlan: &FixPlan{Hosts: []FixHost{{Reactivate: &FixActivation{Command: "netplan apply"}}}}}, VerdictWarning},
		{"fix plan leaves a fail to a person", Report{FixPlan: &FixPlan{Manual: []Finding{{Severity: Fail}}}}, VerdictCritical},
		{"model fits", Report{Plans: []Plan{{Recommended: "TP2"}}}, VerdictOK},
		{"model fits nowhere", Report{Plans: []Plan{{}}}, VerdictCritical},
		{"bench dry run", Report{BenchPlan: &BenchPlan{}}, VerdictOK},
		{"gpu info", Report{GPU: &GPU{Info: &GPUInfo{}}}, VerdictOK},
		{"error", Report{Error: "fix: x.tar.gz: no such file"}, VerdictUnknown},
		{"bench qualify finding", Report{Analyses: []Analysis{{Status: VerdictOK}}, Cluster: &Cluster{Findings: []Finding{{Severity: Warn}}}}, VerdictWarning},
		// qualify and triage documents: no host, the run and its findings
		{"all-pairs, a node failed", Report{AllPairs: &AllPairs{}, Cluster: &Cluster{Findings: []Finding{{ID: "allpairs.node", Severity: Fail}}}}, VerdictCritical},
		{"all-pairs, every pair passed", Report{AllPairs: &AllPairs{}, Cluster: &Cluster{Findings: []Finding{}}}, VerdictOK},
		{"cluster findings alone are judged", Report{Cluster: &Cluster{Findings: []Finding{{Severity: Warn}}}}, VerdictWarning},
		{"triage out of sync", Report{Triage: &Triage{Verdict: "out-of-sync"}, Cluster: &Cluster{Findings: []Finding{{Severity: Fail}}}}, VerdictCritical},
		{"triage progressing", Report{Triage: &Triage{Verdict: "progressing"}}, VerdictOK},
		{"triage found no job", Report{Triage: &Triage{Verdict: TriageNoJob}}, VerdictUnknown},
		{"triage could not tell", Report{Triage: &Triage{Verdict: TriageUnknown}}, VerdictUnknown},
		{"gpu wrong results", Report{GPU: &GPU{Collectives: []results.NCCLTable{{WrongResults: 3}}}}, VerdictCritical},
		{"gpu state not valid", Report{GPU: &GPU{Validity: &Validity{Sampled: true}}}, VerdictUnknown},
		{"gpu state unread", Report{GPU: &GPU{Validity: &Validity{}}}, VerdictOK},
		{"bench run outline", Report{BenchRun: &BenchRun{ID: "r"}}, VerdictOK},
		{"comparison", Report{Comparison: &BenchComparison{}}, VerdictOK},
	}
	for _, tt := range tests {
		if got := tt.r.Overall(); got != tt.want {
			t.Errorf("%s: Overall() = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestLinkFlagNeverImproves(t *testing.T) {
	l := Link{Status: LinkOK}
	l.Flag(LinkDown, "spark1 enP2p1s0f1np1 is down (no carrier)")
	l.Flag(LinkDegraded, "its twin spark1 enp1s0f1np1 is on the same subnet")
	if l.Status != LinkDown || len(l.Reasons) != 2 || l.OK() {
		t.Errorf("%+v", l)
	}
	if (Link{Status: "bogus"}).OK() || LinkStatus("bogus").Rank() <= LinkOK.Rank() {
		t.Error("an unrecognised link status must not rank as ok")
	}
}

// A schema 2 document's links (ok and problems) read with their status: a
// faulty one is never taken as ok.
func TestLinkReadsSchema2(t *testing.T) {
	var ls []Link
	in := `[{"a": {"host": "spark-01", "netdev": "enp1s0f1np1", "mtu": 9000}, "b": {"host": "spark-02", "netdev": "enp1s0f1np1", "mtu": 1500}, "subnet": "192.168.100.0/24", "ok": false, "problems": ["MTU 9000 ≠ 1500"]},
	        {"a": {"host": "spark-01", "netdev": "enP2p1s0f1np1", "mtu": 9000}, "b": {"host": "spark-02", "netdev": "enP2p1s0f1np1", "mtu": 9000}, "subnet": "192.168.101.0/24", "ok": true},
	        {"a": {"host": "spark-01", "netdev": "enP2p1s0f0np0", "mtu": 9000}, "b": {"host": "spark-02", "netdev": "enP2p1s0f0np0", "mtu": 9000}, "status": "down", "reasons": ["spark-02 enP2p1s0f0np0 is down (no carrier)"]}]`
	if err := json.Unmarshal([]byte(in), &ls); err != nil {
		t.Fatal(err)
	}
	if ls[0].Status != LinkFaulty || len(ls[0].Reasons) != 1 || ls[0].Reasons[0] != "MTU 9000 ≠ 1500" || ls[0].B.MTU != 1500 {
		t.Errorf("schema 2 faulty link: %+v", ls[0])
	}
	if !ls[1].OK() || ls[1].Subnet != "192.168.101.0/24" {
		t.Errorf("schema 2 ok link: %+v", ls[1])
	}
	if ls[2].Status != LinkDown || ls[2].Reasons[0] != "spark-02 enP2p1s0f0np0 is down (no carrier)" {
		t.Errorf("schema 3 link: %+v", ls[2])
	}
}

// A qualify and a triage document, as the commands wrote them over the
// test rig (../render/testdata, each with its SOURCE): their content judged
// again gives the status the command gave.
func TestOverallAgreesWithRecordedDocuments(t *testing.T) {
	for _, name := range []string{"allpairs-rig.json", "triage-rig.json", "doctor_rig_spark-pair_mtu-mismatch.json"} {
		b, err := os.ReadFile("../render/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != VerdictCritical {
			t.Fatalf("%s: recorded status %s", name, r.Status)
		}
		if got := r.Overall(); got != r.Status {
			t.Errorf("%s: Overall() = %s, the command said %s", name, got, r.Status)
		}
	}
}
