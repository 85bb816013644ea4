package cli

import (
	"encoding/json"
	"time"

	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
	"github.com/sparkrig/sparkrig/internal/testrig"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/fix"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestDoctorFixBenchAgree audits pairs of the repository's node snapshots the
// way `sparkrig doctor --snapshot A --snapshot B` does, plans `fix --plan`
// and `bench --dry-run` from the same evidence, and checks the three agree:
// a healthy pair plans nothing and bench and fix derive the same
// environment; every finding the plan resolves carries the plan's own
// change as its fix text; and the addressing in place is kept.
func TestDoctorFixBenchAgree(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		healthy    bool
		// addr is a rail address the plan must give, "host netdev cidr".
		addr string
	}{
		{"healthy pair", "spark-healthy", "spark-healthy-peer", true, "spark1 enP2p1s0f1np1 192.168.200.17/24"},
		{"one twin unaddressed", "spark-twin-unaddressed", "spark-healthy-peer", false, "spark1 enP2p1s0f1np1 192.168.200.11/24"},
		{"twins on one subnet", "spark-twins-same-subnet", "spark-healthy-peer", false, "spark1 enP2p1s0f1np1 192.168.200.11/24"},
		{"MTU 1500 on one end", "spark-mtu-1500", "spark-healthy-peer", false, "spark1 enp1s0f1np1 192.168.100.11/24"},
		{"DHCP on a CX-7 netdev", "spark-dhcp-cx7", "spark-healthy-peer", false, "spark1 enP2p1s0f1np1 192.168.200.17/24"},
		{"NCCL_SOCKET_IFNAME names an absent interface", "spark-socket-ifname-eth0", "spark-healthy-peer", false, "spark2 enp1s0f1np1 192.168.100.12/24"},
	} {
		t.Run(c.name, func(t *testing.T) {
			caps := readSnapshots([]string{nodeSnapshot(c.a), nodeSnapshot(c.b)})
			rep := auditReport(caps, check.ProfileUnknown, &Env{Now: time.Now})
			var nodes []fix.Node
			for _, h := range caps {
				nodes = append(nodes, fix.NodeFrom(h.Facts, h.Snap))
			}
			topo, _ := fix.Detect([]*facts.Node{nodes[0].Facts, nodes[1].Facts})
			plan, err := fix.Build(nodes, fix.Options{Topology: topo, Port: -1})
			if err != nil {
				t.Fatal(err)
			}
			changed := 0
			readdressed := false // a rail gets an address it does not have now
			for _, h := range plan.Hosts {
				for _, f := range h.Files {
					if f.Changed() {
						changed++
					}
				}
				for _, r := range h.Rails {
					if c.addr == h.Host+" "+r.NetDev+" "+r.Addr {
						c.addr = ""
					}
					readdressed = readdressed || !strings.HasPrefix(r.Change, "keep ")
				}
			}
			if c.addr != "" {
				t.Errorf("the plan does not give %s", c.addr)
			}
			status := reportStatus(rep, false)
			if c.healthy != (status == report.VerdictOK) || c.healthy && changed > 0 {
				t.Errorf("doctor says %s, fix plans %d changed files; want healthy=%v", status, changed, c.healthy)
			}
			// The doctor's fix text is the plan's change, finding by finding.
			advice := fix.Remedies(plan, "--hosts spark1,spark2")
			resolved := 0
			for _, h := range rep.Hosts {
				for _, f := range h.Findings {
					if a, ok := advice[f.Key()]; ok {
						resolved++
						if d := cmp.Diff(a, f.Remedy); d != "" {
							t.Errorf("%s %s: the doctor's remedy is not fix's change (-fix +doctor):\n%s", h.Host, f.ID, d)
						}
					}
				}
			}
			if !c.healthy && changed > 0 && resolved == 0 && !hasClusterAdvice(rep, advice) {
				t.Errorf("no finding carries the plan's change")
			}
			// bench --dry-run derives the environment from the same facts.
			var fs []*facts.Node
			for _, n := range nodes {
				fs = append(fs, n.Facts)
			}
			bp, err := bench.NewPlan(fs, bench.Options{Kinds: []string{bench.KindNCCL}})
			if err != nil {
				t.Fatal(err)
			}
			benchEnv := slices.DeleteFunc(slices.Clone(bp.NCCLEnv), func(v fabric.Var) bool { return strings.HasPrefix(v.Name, "NCCL_DEBUG") })
			// Where the plan keeps every address, the cluster it leaves is the
			// one bench measures: the same environment.
			if !readdressed {
				if d := cmp.Diff(benchEnv, plan.Env); d != "" {
					t.Errorf("bench and fix derive different environments (-bench +fix):\n%s", d)
				}
			}
		})
	}
}

func hasClusterAdvice(r *report.Report, advice map[report.Key]*report.Remedy) bool {
	if r.Cluster == nil {
		return false
	}
	for _, f := range r.Cluster.Findings {
		if a, ok := advice[f.Key()]; ok && cmp.Equal(a, f.Remedy) {
			return true
		}
	}
	return false
}

func nodeSnapshot(name string) string {
	return filepath.Join("..", "..", "testdata", "nodes", name+".tar.gz")
}

// TestRigLiveAddressesPersistedAsTheyAre runs doctor, fix --plan and bench
// --dry-run over real SSH against a rig pair addressed as NVIDIA's playbook
// does (192.168.100.10/.11 and 192.168.101.10/.11, MTU 9000), set live and in
// no configuration file: fix persists exactly those addresses (no
// renumbering), the doctor's fix text for what is not persisted is that
// change, and bench and fix derive the same environment. Each host's
// nvidia-smi is a stand-in replaying the recorded GB10 output of the
// spark-healthy snapshot, so bench plans NCCL there.
func TestRigLiveAddressesPersistedAsTheyAre(t *testing.T) {
	t.Parallel()
	s, err := snapshot.Read(nodeSnapshot("spark-healthy"))
	if err != nil {
		t.Fatal(err)
	}
	gb10, _, _ := s.Cmd("nvidia-smi-q")
	smi := testrig.Standin{Name: "nvidia-smi", Outputs: map[string]string{"-q -x": string(gb10)}}
	r := sparkPair(t, func(c *testrig.Config) {
		for i := range c.Hosts {
			c.Hosts[i].RDMA = true
			c.Hosts[i].Standins = append(c.Hosts[i].Standins, smi)
		}
	})
	ssh := []string{"--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ",")}

	code, out, errOut := runMain(t, append([]string{"fix", "--plan", "--format", "json"}, ssh...)...)
	if code != ExitWarning && code != ExitCritical {
		t.Fatalf("fix --plan: exit %d, want a problem to fix\n%s\n%s", code, out, errOut)
	}
	var doc report.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.FixPlan == nil || doc.Command != "fix" || exitFor(doc.Status) != code {
		t.Fatalf("fix --plan JSON: %v\n%s", err, out)
	}
	plan := doc.FixPlan
	for _, h := range plan.Hosts {
		for _, rl := range h.Rails {
			if !strings.HasPrefix(rl.Change, "keep ") {
				t.Errorf("%s %s: %s, want the address in place kept", h.Host, rl.NetDev, rl.Change)
			}
		}
		if !slices.ContainsFunc(h.Notes, func(n string) bool { return strings.Contains(n, "(set now, not in any config)") }) {
			t.Errorf("%s: no note that the live addresses are persisted: %q", h.Host, h.Notes)
		}
	}
	if got := plan.Hosts[0].Rails[0].Addr; got != "192.168.100.10/24" {
		t.Errorf("spark-01's first rail: %s, want 192.168.100.10/24 (as it is)", got)
	}

	code, out, errOut = runMain(t, append([]string{"bench", "--dry-run", "nccl", "--format", "json"}, ssh...)...)
	if code != ExitOK {
		t.Fatalf("bench --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	var bp report.Report
	if err := json.Unmarshal([]byte(out), &bp); err != nil || bp.BenchPlan == nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	benchEnv := slices.DeleteFunc(bp.BenchPlan.Env, func(v report.EnvVar) bool { return strings.HasPrefix(v.Name, "NCCL_DEBUG") })
	if d := cmp.Diff(benchEnv, plan.Env); d != "" || len(plan.Env) == 0 {
		t.Errorf("bench and fix derive different environments (-bench +fix):\n%s", d)
	}
}
