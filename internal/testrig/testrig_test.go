package testrig

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func twoSparks() Config {
	return Config{
		Hosts: []HostSpec{
			{Name: "spark-01", NetDevs: map[string]NetDev{
				"enp1s0f1np1":   {MTU: 9000, Addrs: []string{"192.168.100.10/24"}},
				"enP2p1s0f1np1": {MTU: 9000, Addrs: []string{"192.168.101.10/24"}},
				"enp1s0f0np0":   {},
			},
				Files:    map[string]string{"/etc/dgx-release": "DGX_NAME=\"DGX Spark\"\n", "/sys/class/infiniband/rocep1s0f1/fw_ver": "28.45.4028\n"},
				Standins: []Standin{{Name: "nvidia-smi", Outputs: map[string]string{"-L": "GPU 0: NVIDIA GB10 (UUID: GPU-x)\n"}}},
			},
			{Name: "spark-02", NetDevs: map[string]NetDev{
				"enp1s0f1np1":   {MTU: 1500, Addrs: []string{"192.168.100.11/24"}},
				"enP2p1s0f1np1": {MTU: 9000, Addrs: []string{"192.168.101.11/24"}},
			}},
		},
		Links: Cable("spark-01", 1, "spark-02", 1),
	}
}

func sshRun(t *testing.T, r *Rig, host, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ssh", "-F", r.SSHConfig, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", host, cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh %s %q: %v: %s", host, cmd, err, out)
	}
	return string(out)
}

func TestRigHostsDifferForReal(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no OpenSSH client")
	}
	r := New(t, twoSparks())
	if got := sshRun(t, r, "spark-01", "cat /sys/class/net/enp1s0f1np1/mtu /etc/dgx-release /sys/class/infiniband/rocep1s0f1/fw_ver; nvidia-smi -L"); got != "9000\nDGX_NAME=\"DGX Spark\"\n28.45.4028\nGPU 0: NVIDIA GB10 (UUID: GPU-x)\n" {
		t.Errorf("spark-01 sees %q", got)
	}
	if got := sshRun(t, r, "spark-02", "uname -n; cat /sys/class/net/enp1s0f1np1/mtu; test -e /etc/dgx-release || echo no-dgx; command -v nvidia-smi || echo no-smi"); got != "spark-02\n1500\nno-dgx\nno-smi\n" {
		t.Errorf("spark-02 sees %q", got)
	}
	// The unlinked netdev exists with no carrier.
	if got := sshRun(t, r, "spark-01", "cat /sys/class/net/enp1s0f0np0/carrier 2>&1 || true"); !strings.Contains(got, "Invalid argument") && got != "0\n" {
		t.Errorf("unlinked netdev carrier: %q", got)
	}
	// Data traffic flows between the namespaces at the smaller MTU only.
	if out, err := r.Host("spark-01").Exec(context.Background(), "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "1472", "192.168.100.11"); err != nil {
		t.Errorf("ping at 1500: %v %s", err, out)
	}
	if _, err := r.Host("spark-01").Exec(context.Background(), "ping", "-c", "1", "-W", "1", "-M", "do", "-s", "8972", "192.168.100.11"); err == nil {
		t.Errorf("jumbo ping crossed a link whose far end has MTU 1500")
	}
	// Nothing leaked into the root namespace or the real /etc.
	if _, err := os.Stat("/etc/dgx-release"); err == nil {
		t.Errorf("/etc/dgx-release appeared on the machine")
	}
	dir := r.Dir
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s left after Close", dir)
	}
	if _, err := os.Stat("/run/netns/" + r.Hosts[0].NS); err == nil {
		t.Errorf("namespace %s left after Close", r.Hosts[0].NS)
	}
}

func TestStandinPCIMakesVethsLookPhysical(t *testing.T) {
	cfg := twoSparks()
	cfg.Hosts[1].NetDevs["enP2p1s0f1np1"] = NetDev{MTU: 9000, SpeedMbps: 100000}
	r := New(t, cfg)
	ctx := context.Background()
	out, err := r.Host("spark-02").Exec(ctx, "sh", "-c", "readlink /sys/class/net/enP2p1s0f1np1 /sys/class/net/enP2p1s0f1np1/device /sys/class/net/enP2p1s0f1np1/device/driver; cat /sys/class/net/enP2p1s0f1np1/speed /sys/class/net/enP2p1s0f1np1/mtu /sys/bus/pci/devices/0002:01:00.1/vendor; echo /sys/class/net/*/device")
	if err != nil {
		t.Fatal(err)
	}
	want := "../../devices/pci0002:00/0002:00:00.0/0002:01:00.1/net/enP2p1s0f1np1\n../../../0002:01:00.1\n../../../../bus/pci/drivers/mlx5_core\n100000\n9000\n0x15b3\n" +
		"/sys/class/net/enP2p1s0f1np1/device /sys/class/net/enp1s0f1np1/device\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// The MTU is live: change it and sysfs follows.
	if _, err := r.Host("spark-02").Exec(ctx, "ip", "link", "set", "enP2p1s0f1np1", "mtu", "4200"); err != nil {
		t.Fatal(err)
	}
	if out, _ := r.Host("spark-02").Exec(ctx, "cat", "/sys/class/net/enP2p1s0f1np1/mtu"); string(out) != "4200\n" {
		t.Errorf("mtu after change: %q", out)
	}
}

func TestStandinRoCEDevices(t *testing.T) {
	cfg, err := Sparks(2, "pair")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hosts[0].RDMA = true
	r := New(t, cfg)
	out, err := r.Host("spark-01").Exec(context.Background(), "sh", "-c",
		"cd /sys/class/infiniband && echo *; readlink rocep1s0f1/device; cat rocep1s0f1/fw_ver rocep1s0f1/ports/1/state roceP2p1s0f1/ports/1/gids/3 roceP2p1s0f1/ports/1/gid_attrs/types/3 roceP2p1s0f1/ports/1/gid_attrs/ndevs/3")
	if err != nil {
		t.Fatal(err)
	}
	want := "roceP2p1s0f1 rocep1s0f1\n../../../0000:01:00.1\n28.45.4028\n4: ACTIVE\n0000:0000:0000:0000:0000:ffff:c0a8:650a\nRoCE v2\nenP2p1s0f1np1\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if RoCEName("enP2p1s0f0np0") != "roceP2p1s0f0" || RoCEName("enp1s0f1np1") != "rocep1s0f1" {
		t.Error("RoCEName")
	}
}

// TestRigHostsWritePrivately writes the same path under every private
// directory on two hosts, over SSH as sparkrig would: each host sees only its
// own file, and nothing appears on the machine running the rig.
func TestRigHostsWritePrivately(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no OpenSSH client")
	}
	r := New(t, Config{Hosts: []HostSpec{{Name: "spark-01"}, {Name: "spark-02"}}})
	name := "sparkrig-rig-private-" + r.ID
	var paths []string
	for _, d := range PrivateDirs {
		paths = append(paths, "/"+d+"/"+name)
	}
	all := strings.Join(paths, " ")
	for _, h := range r.Names() {
		sshRun(t, r, h, "for p in "+all+"; do echo "+h+" > $p; done")
	}
	for _, h := range r.Names() {
		got := sshRun(t, r, h, "cat "+all)
		if want := strings.Repeat(h+"\n", len(paths)); got != want {
			t.Errorf("%s reads %q, want only its own writes %q", h, got, want)
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s written by a rig host appeared on the machine", p)
		}
	}
}
