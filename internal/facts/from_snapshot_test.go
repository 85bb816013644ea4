package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

func TestFromSnapshotSparkTree(t *testing.T) {
	s, err := snapshot.Read("../../testdata/nodes/spark-healthy.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	n := FromSnapshot(s)
	if n.DGX == nil || n.DGX.Name != "DGX Spark" || n.OS.VersionID != "24.04" || n.OS.Arch != "aarch64" {
		t.Errorf("identity: %+v %+v", n.DGX, n.OS)
	}
	d := n.NetDev("enP2p1s0f1np1")
	if d == nil || d.RDMADev != "roceP2p1s0f1" || d.PCIAddr != "0002:01:00.1" || d.MTU != 9000 || *d.SpeedMbps != 200000 || d.Driver != "mlx5_core" {
		t.Fatalf("enP2p1s0f1np1 = %+v", d)
	}
	if d := cmp.Diff([]Addr{{CIDR: "192.168.200.17/24", Family: "inet", Scope: "global"}}, d.Addrs); d != "" {
		t.Errorf("addresses (-want +got):\n%s", d)
	}
	var gid3 GID
	for _, r := range n.RDMA {
		if r.Name == "roceP2p1s0f1" {
			gid3 = r.Ports[0].GIDs[3]
		}
	}
	if gid3 != (GID{Index: 3, GID: "0000:0000:0000:0000:0000:ffff:c0a8:c811", Type: "RoCE v2", NetDev: "enP2p1s0f1np1", IPv4: "192.168.200.17"}) {
		t.Errorf("GID 3 = %+v", gid3)
	}
	if f := n.PCIFunc("0002:01:00.1"); f == nil || f.StaWidth != 4 || f.StaSpeed != "32GT/s" || f.Desc != "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]" {
		t.Errorf("PCI 0002:01:00.1 = %+v", f)
	}
	if c := n.ConfigFor("enp1s0f1np1"); len(c) != 1 || c[0].Source != "/etc/netplan/40-cx7.yaml" || c[0].MTU != 9000 {
		t.Errorf("netplan for enp1s0f1np1 = %+v", c)
	}
	if n.NCCL.Version != "2.30.7" || n.NCCL.Env["NCCL_SOCKET_IFNAME"] != "enP7s7" || *n.Memory.CmaTotalBytes != 65536*1024 {
		t.Errorf("NCCL %+v, CMA %d", n.NCCL, *n.Memory.CmaTotalBytes)
	}
	for _, src := range []string{SrcNetSysfs, SrcIPAddr, SrcRDMA, SrcPCI, SrcNetConfig, SrcNCCLLib, SrcNvidiaSMI, SrcKernelLog} {
		if !n.Has(src) {
			t.Errorf("source %s = %+v", src, n.Sources[src])
		}
	}
	if st := n.Sources[SrcNCCLConf]; st.Status != "missing" {
		t.Errorf("nccl.conf status %+v", st)
	}
}

// A source that could not be read is recorded, never passed as empty.
func TestFromSnapshotUnreadableSources(t *testing.T) {
	s := snapshot.New("n1")
	s.AddMissing(snapshot.KindFile, "/etc/netplan/40-cx7.yaml", snapshot.StatusDenied, "open: permission denied")
	s.AddCmd(snapshot.Item{Name: "dmesg", ExitCode: 1}, nil, []byte("dmesg: read kernel buffer failed: Operation not permitted\n"))
	s.AddCmd(snapshot.Item{Name: "journal-kernel"}, nil, []byte("No journal files were opened due to insufficient permissions.\n"))
	s.AddCmd(snapshot.Item{Name: "nvidia-smi-q", Status: snapshot.StatusMissing, Error: "nvidia-smi not found"}, nil, nil)
	n := FromSnapshot(s)
	want := map[string]SourceStatus{
		SrcNetConfig: {Status: "denied", Detail: "cannot read /etc/netplan/40-cx7.yaml"},
		SrcKernelLog: {Status: "denied", Detail: "journalctl -k: No journal files were opened due to insufficient permissions."},
		SrcNvidiaSMI: {Status: "missing", Detail: "nvidia-smi not found"},
	}
	for k, w := range want {
		if d := cmp.Diff(w, n.Sources[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
}

// Readable netplan beside a root-only NetworkManager directory: what was read
// counts, and the detail says what could not be.
func TestFromSnapshotPartlyReadableNetConfig(t *testing.T) {
	s := snapshot.New("n1")
	s.AddFile("/etc/netplan/40-cx7.yaml", []byte(verbatim(t, fixture(t, "netplan_01_"))[0]))
	s.AddMissing(snapshot.KindFile, "/etc/NetworkManager/system-connections/*", snapshot.StatusDenied, "cannot list /etc/NetworkManager/system-connections: permission denied")
	n := FromSnapshot(s)
	want := SourceStatus{Status: "ok", Detail: NetConfigPartial + "/etc/NetworkManager/system-connections/*"}
	if d := cmp.Diff(want, n.Sources[SrcNetConfig]); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if len(n.NetConfig) != 2 {
		t.Errorf("net config %+v", n.NetConfig)
	}
}

// dmesg refused and journalctl silent (an unprivileged user without the adm
// group): the kernel log is not evaluated rather than clean.
func TestFromSnapshotSilentJournal(t *testing.T) {
	s := snapshot.New("n1")
	s.AddCmd(snapshot.Item{Name: "dmesg", ExitCode: 1}, nil, []byte("dmesg: read kernel buffer failed: Operation not permitted\n"))
	s.AddCmd(snapshot.Item{Name: "journal-kernel"}, nil, nil)
	if st := FromSnapshot(s).Sources[SrcKernelLog]; st.Status != "denied" {
		t.Errorf("kernel log %+v", st)
	}
}

// Without nvidia-smi the driver version still comes from the kernel module
// (the real /proc/driver/nvidia/version of the H200 tree), and nvidia-smi is
// recorded as missing.
func TestFromSnapshotDriverWithoutNvidiaSMI(t *testing.T) {
	h200, err := snapshot.Read("../../testdata/nodes/gpu-h200x2.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	version, ok := h200.File("/proc/driver/nvidia/version")
	if !ok {
		t.Fatal("the H200 tree lacks /proc/driver/nvidia/version")
	}
	s := snapshot.New("n1")
	s.AddFile("/proc/driver/nvidia/version", version)
	s.AddCmd(snapshot.Item{Name: "nvidia-smi-q", Status: snapshot.StatusMissing, Error: "nvidia-smi not found"}, nil, nil)
	n := FromSnapshot(s)
	if n.Driver.Version != "580.159.04" || len(n.GPUs) != 0 || n.Has(SrcNvidiaSMI) {
		t.Errorf("driver %+v, %d GPUs, nvidia-smi %+v", n.Driver, len(n.GPUs), n.Sources[SrcNvidiaSMI])
	}
}
