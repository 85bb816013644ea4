package doctor

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestDFPingFailureIsTheMTUChanges: on a pair whose one end runs MTU 1500,
// the 9000 end's don't-fragment probes are lost while 1500-byte frames
// pass. That FAIL is the MTU change's to resolve: the doctor's remedy is
// the change, the plan's netplan change names it, and it is not left to a
// person; a probe lost at every size (no MTU signature) stays a person's.
func TestDFPingFailureIsTheMTUChanges(t *testing.T) {
	nodes := acquire.Snapshots([]string{nodeTree("spark-mtu-1500"), nodeTree("spark-healthy-peer")}, fix.Evidence)
	rail := func(host, dev, addr string, mtu int) facts.Rail {
		return facts.Rail{Host: host, NetDev: dev, Addr: netip.MustParsePrefix(addr), MTU: mtu, Port: 1}
	}
	mtu := facts.PingResult{PingTarget: facts.PingTarget{
		From: rail("spark2", "enp1s0f1np1", "192.168.100.12/24", 9000),
		To:   rail("spark1", "enp1s0f1np1", "192.168.100.11/24", 1500)},
		Full: facts.PingStats{Sent: 3}, FullOK: true, Small: &facts.PingStats{Sent: 3, Received: 3}}
	dead := facts.PingResult{PingTarget: facts.PingTarget{
		From: rail("spark2", "enP2p1s0f1np1", "192.168.200.18/24", 9000),
		To:   rail("spark1", "enP2p1s0f1np1", "192.168.200.17/24", 1500)},
		Full: facts.PingStats{Sent: 3}, FullOK: true, Small: &facts.PingStats{Sent: 3}}
	nodes[1].Pings = []facts.PingResult{mtu, dead}
	nodes[1].Meshed = true
	res := Audit(nodes, Options{Now: at})
	if res.Plan == nil {
		t.Fatalf("no plan: %v", res.PlanErr)
	}
	byKey := map[report.Key]report.Finding{}
	for _, f := range res.Report.Cluster.Findings {
		if f.ID == "cluster.df-ping" {
			byKey[f.Key()] = f
		}
	}
	mtuKey := report.Key{ID: "cluster.df-ping", Host: "spark2", Subject: "enp1s0f1np1 → spark1 192.168.100.11"}
	deadKey := report.Key{ID: "cluster.df-ping", Host: "spark2", Subject: "enP2p1s0f1np1 → spark1 192.168.200.17"}
	if f, ok := byKey[mtuKey]; !ok || f.Severity != report.Fail || f.Remedy == nil || f.Remedy.Kind != report.RemedyChange ||
		len(f.Remedy.Changes) != 1 || f.Remedy.Changes[0].Host != "spark1" || f.Remedy.Changes[0].Path != fix.NetplanPath {
		t.Errorf("MTU-signature DF ping: %+v remedy %+v", f, f.Remedy)
	}
	if f, ok := byKey[deadKey]; !ok || f.Remedy == nil || f.Remedy.Kind == report.RemedyChange {
		t.Errorf("probe lost at every size: %+v remedy %+v", f, f.Remedy)
	}
	var resolves []report.Key
	for _, c := range res.Plan.Hosts[0].Files {
		if c.Path == fix.NetplanPath {
			resolves = c.Resolves
		}
	}
	if !slices.Contains(resolves, mtuKey) || slices.Contains(resolves, deadKey) {
		t.Errorf("spark1's netplan change resolves %v", resolves)
	}
	var manual []report.Key
	for _, f := range Unresolved(res.Report) {
		manual = append(manual, f.Key())
	}
	if slices.Contains(manual, mtuKey) || !slices.Contains(manual, deadKey) {
		t.Errorf("left to a person: %v", manual)
	}
}

// TestStaleLauncherEnvIsAFinding: a launcher environment file that names
// one twin where the cluster has two is the doctor's warning, and its
// remedy is the plan's rewrite of that file.
func TestStaleLauncherEnvIsAFinding(t *testing.T) {
	nodes := acquire.Snapshots([]string{nodeTree("spark-healthy"), nodeTree("spark-healthy-peer")}, fix.Evidence)
	nodes[0].Snap.AddFile(fix.EnvPath, []byte("NCCL_IB_HCA=rocep1s0f1\n"))
	res := Audit(nodes, Options{Now: at})
	var got []report.Finding
	for _, f := range res.Report.Hosts[0].Findings {
		if f.ID == fix.LauncherEnvID {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Severity != report.Warn || got[0].Remedy == nil || got[0].Remedy.Kind != report.RemedyChange ||
		got[0].Remedy.Changes[0].Path != fix.EnvPath || !strings.Contains(got[0].Observed, "NCCL_IB_HCA=rocep1s0f1 (wants ") {
		t.Fatalf("stale launcher environment: %+v", got)
	}
	for _, h := range res.Report.Hosts[1:] {
		for _, f := range h.Findings {
			if f.ID == fix.LauncherEnvID {
				t.Errorf("%s has no launcher environment file, yet: %+v", h.Host, f)
			}
		}
	}
}
