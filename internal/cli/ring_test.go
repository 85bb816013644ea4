package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/remote"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/testrig"
)

// ringProblems lists "severity id host" of the ring findings worse than ok.
func ringProblems(t *testing.T, r *testrig.Rig) []string {
	t.Helper()
	_, rep, errOut := rigDoctor(t, r)
	if rep.Cluster == nil || rep.Cluster.Topology != "four-node-ring" {
		t.Fatalf("topology %v (stderr %s)", rep.Cluster, errOut)
	}
	var out []string
	for _, f := range rep.Cluster.Findings {
		if strings.HasPrefix(f.ID, "cluster.ring-") && f.Severity != "ok" {
			out = append(out, string(f.Severity)+" "+f.ID+" "+f.Host+": "+f.Observed)
		}
	}
	return out
}

// TestRigFourNodeRing: a four-node switchless ring as cabled, then as fix
// makes it (forwarding, routes through the nearer neighbour), then with
// Docker's FORWARD DROP on one node and one route missing on another, then
// with the DOCKER-USER accept rules the doctor recommends. The nodes have
// whatever nft this machine has (DGX OS installs it: with iptables-nft,
// iptables' FORWARD is also nftables' ip filter FORWARD).
func TestRigFourNodeRing(t *testing.T) {
	t.Parallel()
	fourNodeRing(t, false)
}

// TestRigFourNodeRingWithoutNFT is the same ring where no node has nft: a
// stand-in answers as the shell does for a missing command (exit 127), so
// the check reads iptables -S alone.
func TestRigFourNodeRingWithoutNFT(t *testing.T) {
	t.Parallel()
	fourNodeRing(t, true)
}

func fourNodeRing(t *testing.T, hideNFT bool) {
	cfg, err := testrig.Sparks(4, "ring")
	if err != nil {
		t.Fatal(err)
	}
	if hideNFT {
		for i := range cfg.Hosts {
			cfg.Hosts[i].Standins = append(cfg.Hosts[i].Standins, testrig.Standin{Name: "nft", Outputs: map[string]string{"*": ""}, Exit: 127})
		}
	}
	r := testrig.New(t, cfg)
	if hideNFT { // the doctor's SSH session finds the stand-in, not this machine's nft
		d, err := remote.NewDialer(remote.Options{ConfigFile: r.SSHConfig, Home: r.Dir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial(context.Background(), "spark-02")
		if err != nil {
			t.Fatal(err)
		}
		out, _, code, err := c.Run(context.Background(), "command -v nft; nft -j list ruleset", nil)
		c.Close()
		if err != nil || code != 127 || string(out) != "/usr/local/bin/nft\n" {
			t.Fatalf("nft not hidden: exit %d, %q, %v", code, out, err)
		}
	}
	got := ringProblems(t, r)
	if len(got) != 8 || !strings.HasPrefix(got[0], "fail cluster.ring-forwarding spark-01: 0") ||
		!strings.Contains(strings.Join(got, "\n"), "fail cluster.ring-routes spark-01: no route to 192.168.2.0/24, 192.168.3.0/24, 192.168.4.0/24, 192.168.5.0/24") {
		t.Errorf("as cabled, want forwarding and routes missing on all four:\n%s", strings.Join(got, "\n"))
	}

	if !hideNFT {
		// The plan's own changes are what resolve the ring's findings:
		// forwarding in the kernel parameters, routes in the netplan file;
		// none is left to a person.
		_, rep, _ := rigDoctor(t, r)
		plan := fixAgreesWithDoctor(t, r, rep)
		for _, k := range []struct {
			key  report.Key
			path string
		}{
			{report.Key{ID: "cluster.ring-forwarding", Host: "spark-03", Subject: "net.ipv4.ip_forward"}, "spark-03 /etc/sysctl.d/60-sparkrig.conf"},
			{report.Key{ID: "cluster.ring-routes", Host: "spark-03", Subject: "routes"}, "spark-03 /etc/netplan/40-cx7.yaml"},
		} {
			if got := resolvedBy(plan, k.key); !slices.Equal(got, []string{k.path}) {
				t.Errorf("%s resolved by %q, want %s", k.key.ID, got, k.path)
			}
		}
	}
	hosts := []string{"--hosts", strings.Join(r.Names(), ","), "--ssh-config", r.SSHConfig}
	code, out, errOut := runMain(t, append([]string{"fix", "--apply", "--activate", "ip", "--topology", "ring", "--deadman", "30s"}, hosts...)...)
	if code != ExitOK {
		t.Fatalf("fix --apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := ringProblems(t, r); len(got) != 0 {
		t.Errorf("after fix, ring problems:\n%s", strings.Join(got, "\n"))
	}
	// spark-01 reaches spark-03 (no shared cable) through a neighbour, with
	// jumbo frames.
	rigOut(t, r, "spark-01", "ping", "-c", "1", "-W", "5", "-M", "do", "-s", "8972", "192.168.4.1")
	// 192.168.4.0/24 joins spark-03 and spark-04: one hop back, via spark-04.
	if np := rigOut(t, r, "spark-01", "cat", "/etc/netplan/40-cx7.yaml"); !strings.Contains(np, "- to: 192.168.4.0/24\n          via: 192.168.6.1") {
		t.Errorf("spark-01's netplan does not persist the route to 192.168.4.0/24 via spark-04:\n%s", np)
	}
	// 192.168.3.0/24 joins spark-02 and spark-03: spark-01 reaches
	// spark-03's end of it through spark-02.
	throughSpark02 := func() error {
		_, err := r.Host("spark-01").Exec(context.Background(), "ping", "-c", "1", "-W", "2", "192.168.3.2")
		return err
	}
	if err := throughSpark02(); err != nil {
		t.Fatalf("ping through spark-02 before any filter: %v", err)
	}

	rigOut(t, r, "spark-02", "iptables", "-P", "FORWARD", "DROP")
	rigOut(t, r, "spark-03", "ip", "route", "del", "192.168.0.0/24")
	want := []string{
		"fail cluster.ring-forward-drop spark-02: iptables filter FORWARD (policy drop) drops enP2p1s0f0np0 → enP2p1s0f1np1, enP2p1s0f0np0 → enp1s0f0np0, enP2p1s0f0np0 → enp1s0f1np1, enP2p1s0f1np1 → enP2p1s0f0np0, and 8 more",
		"fail cluster.ring-routes spark-03: no route to 192.168.0.0/24",
	}
	if diff := cmp.Diff(want, ringProblems(t, r)); diff != "" {
		t.Errorf("FORWARD DROP on spark-02, a route gone on spark-03 (-want +got):\n%s", diff)
	}
	if throughSpark02() == nil {
		t.Error("spark-02 forwards with its FORWARD policy DROP")
	}
	ringPlanAgrees(t, r, hosts)

	// Docker's chain and the accept rules the doctor's fix names, one for
	// each way between the ring netdevs: the finding clears and spark-02
	// forwards again.
	rigOut(t, r, "spark-02", "iptables", "-N", "DOCKER-USER")
	rigOut(t, r, "spark-02", "iptables", "-A", "DOCKER-USER", "-j", "RETURN")
	rigOut(t, r, "spark-02", "iptables", "-I", "FORWARD", "-j", "DOCKER-USER")
	rails := []string{"enP2p1s0f0np0", "enP2p1s0f1np1", "enp1s0f0np0", "enp1s0f1np1"}
	for _, in := range rails {
		for _, out := range rails {
			if in != out {
				rigOut(t, r, "spark-02", "iptables", "-I", "DOCKER-USER", "-i", in, "-o", out, "-j", "ACCEPT")
			}
		}
	}
	want = []string{"fail cluster.ring-routes spark-03: no route to 192.168.0.0/24"}
	if diff := cmp.Diff(want, ringProblems(t, r)); diff != "" {
		t.Errorf("DOCKER-USER accepting the ring on spark-02 (-want +got):\n%s", diff)
	}
	if err := throughSpark02(); err != nil {
		t.Errorf("spark-02 does not forward with DOCKER-USER accepting the ring: %v", err)
	}
	ringPlanAgrees(t, r, hosts)
}

// ringPlanAgrees holds fix --plan to the doctor on the ring as it is now
// (both without the ping mesh, which fix does not run): one exit status,
// every problem's remedy in the plan.
func ringPlanAgrees(t *testing.T, r *testrig.Rig, hosts []string) {
	t.Helper()
	dcode, rep, _ := rigDoctor(t, r, "--no-ping")
	fcode, fout, ferr := runMain(t, append([]string{"fix", "--plan", "--topology", "ring"}, hosts...)...)
	if fcode != dcode {
		t.Errorf("doctor exits %d, fix --plan %d\n%s%s", dcode, fcode, fout, ferr)
	}
	planMatches(t, rep, nil, fout)
}

// TestRigDuplicateAddress: spark-02's twin was given spark-01's address
// (one netplan copied to both); the ping to it answers locally, so only the
// identity check across nodes sees it.
func TestRigDuplicateAddress(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) {
		c.Hosts[1].NetDevs["enp1s0f1np1"] = testrig.NetDev{MTU: 9000, Addrs: []string{"192.168.100.10/24"}}
	})
	code, rep, _ := rigDoctor(t, r)
	probs := strings.Join(clusterProblems(rep), "\n")
	if code != ExitCritical || !strings.Contains(probs, "fail cluster.duplicate-address  192.168.100.10: 192.168.100.10 on spark-01 enp1s0f1np1 and spark-02 enp1s0f1np1") {
		t.Errorf("exit %d, cluster problems:\n%s", code, probs)
	}
	for _, l := range rep.Cluster.Links {
		if l.Subnet == "192.168.100.0/24" && l.OK() {
			t.Errorf("link %+v judged ok", l)
		}
	}
}

// TestRigGIDAtIndexFour: the RoCE v2 IPv4 GID of one HCA sits at index 4 on
// spark-02 (the field's drift). That alone is fine; a NCCL_IB_GID_INDEX=3
// pinned in both nodes' /etc/nccl.conf is then wrong on spark-02 only.
func TestRigGIDAtIndexFour(t *testing.T) {
	t.Parallel()
	r := sparkPair(t, func(c *testrig.Config) { c.Hosts[0].RDMA, c.Hosts[1].RDMA = true, true })
	// The stand-in sysfs is read-only inside the host; its files live
	// under the host's fixture root.
	port := filepath.Join(r.Host("spark-02").Dir, "root/sys/class/infiniband/rocep1s0f1/ports/1")
	if out, err := exec.Command("sh", "-c", `cd "$0" &&
		cp gids/3 gids/4 && cp gid_attrs/types/3 gid_attrs/types/4 && cp gid_attrs/ndevs/3 gid_attrs/ndevs/4 &&
		echo 0000:0000:0000:0000:0000:0000:0000:0000 > gids/3 && rm gid_attrs/types/3 gid_attrs/ndevs/3`, port).CombinedOutput(); err != nil {
		t.Fatalf("move the GID: %v: %s", err, out)
	}
	judged := func() []string {
		_, rep, _ := rigDoctor(t, r, "--profile", "dgx-spark")
		var out []string
		for _, h := range rep.Hosts {
			for _, sk := range h.Skipped {
				if sk.ID == "nccl.gid-index" {
					out = append(out, h.Host+" "+sk.ID+" skipped: "+sk.Reason)
				}
			}
			for _, f := range h.Findings {
				if f.ID == "spark.roce-gid" && f.Subject == "rocep1s0f1/1" || f.ID == "nccl.gid-index" {
					out = append(out, h.Host+" "+f.ID+" "+string(f.Severity)+": "+f.Observed)
				}
			}
		}
		return out
	}
	want := []string{
		"spark-01 nccl.gid-index skipped: NCCL_IB_GID_INDEX is not set: NCCL picks the RoCE v2 GID itself",
		"spark-01 spark.roce-gid ok: RoCE v2 192.168.100.10 at index 3",
		"spark-02 nccl.gid-index skipped: NCCL_IB_GID_INDEX is not set: NCCL picks the RoCE v2 GID itself",
		"spark-02 spark.roce-gid ok: RoCE v2 192.168.100.11 at index 4",
	}
	if diff := cmp.Diff(want, judged()); diff != "" {
		t.Errorf("GID at index 4, nothing pinned (-want +got):\n%s", diff)
	}
	for _, h := range r.Names() {
		rigOut(t, r, h, "sh", "-c", "echo NCCL_IB_GID_INDEX=3 > /etc/nccl.conf")
	}
	want = []string{
		"spark-01 spark.roce-gid ok: RoCE v2 192.168.100.10 at index 3",
		"spark-01 nccl.gid-index ok: 3 (/etc/nccl.conf): RoCE v2 IPv4 on every active port",
		"spark-02 spark.roce-gid ok: RoCE v2 192.168.100.11 at index 4",
		"spark-02 nccl.gid-index warn: 3 in /etc/nccl.conf; rocep1s0f1/1: index 3 empty",
	}
	if diff := cmp.Diff(want, judged()); diff != "" {
		t.Errorf("GID at index 4, index 3 pinned (-want +got):\n%s", diff)
	}
}
