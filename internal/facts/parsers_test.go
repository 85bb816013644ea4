package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIbvDevinfoDGXSpark(t *testing.T) {
	blocks := verbatim(t, fixture(t, "rdma_04_"))
	devs := parseIbvDevinfo([]byte(blocks[1]))
	type row struct{ Name, FW, Board, State, Layer string }
	var got []row
	for _, d := range devs {
		got = append(got, row{d.Name, d.FWVer, d.BoardID, d.Ports[0].State, d.Ports[0].LinkLayer})
	}
	want := []row{
		{"rocep1s0f0", "28.45.4028", "NVD0000000087", "DOWN", "Ethernet"},
		{"rocep1s0f1", "28.45.4028", "NVD0000000087", "ACTIVE", "Ethernet"},
		{"roceP2p1s0f0", "28.45.4028", "NVD0000000087", "DOWN", "Ethernet"},
		{"roceP2p1s0f1", "28.45.4028", "NVD0000000087", "ACTIVE", "Ethernet"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseIbvDevinfoSpaceIndentedMixedLinkLayers(t *testing.T) {
	devs := parseIbvDevinfo([]byte(verbatim(t, fixture(t, "rdma_11_"))[0]))
	if len(devs) != 2 || devs[0].Ports[0].LinkLayer != "Ethernet" || devs[1].Ports[0].LinkLayer != "InfiniBand" || devs[1].FWVer != "28.38.1002" {
		t.Errorf("got %+v", devs)
	}
}

func TestParseIbdev2netdev(t *testing.T) {
	tests := []struct {
		fixture string
		block   int
		want    map[string]string
	}{
		{"rdma_01_", 0, map[string]string{"roceP2p1s0f1": "enP2p1s0f1np1", "rocep1s0f1": "enp1s0f1np1", "roceP2p1s0f0": "enP2p1s0f0np0", "rocep1s0f0": "enp1s0f0np0"}},
		// The last line runs into a pasted prompt: "(Down)# ibv_devinfo".
		{"rdma_05_", 0, map[string]string{"rocep1s0f0": "enp1s0f0np0", "rocep1s0f1": "enp1s0f1np1", "roceP2p1s0f0": "enP2p1s0f0np0", "roceP2p1s0f1": "enP2p1s0f1np1"}},
	}
	for _, tt := range tests {
		got := parseIbdev2netdev([]byte(verbatim(t, fixture(t, tt.fixture))[tt.block]))
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.fixture, d)
		}
	}
}

func TestParseNetplan(t *testing.T) {
	tests := []struct {
		fixture string
		block   int
		want    []IfaceConfig
	}{
		{"netplan_01_", 0, []IfaceConfig{
			{Name: "enP2p1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{"192.168.101.10/24"}},
			{Name: "enp1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{"192.168.100.10/24"}},
		}},
		{"netplan_02_", 0, []IfaceConfig{
			{Name: "enP2p1s0f0np0", Source: "40-cx7.yaml", Tool: "netplan (NetworkManager)", Addrs: []string{"192.168.201.12/24"}},
			{Name: "enp1s0f0np0", Source: "40-cx7.yaml", Tool: "netplan (NetworkManager)", Addrs: []string{"192.168.200.12/24"}},
		}},
		{"netplan_04_", 0, []IfaceConfig{
			{Name: "enP2p1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{}, DHCP4: true},
			{Name: "enp1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{}, DHCP4: true},
		}},
		{"netplan_05_", 0, []IfaceConfig{
			{Name: "enP2p1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{"192.168.200.17/24"}, MTU: 9000},
			{Name: "enp1s0f1np1", Source: "40-cx7.yaml", Tool: "netplan", Addrs: []string{"192.168.100.11/24"}, MTU: 9000},
		}},
	}
	for _, tt := range tests {
		got, err := parseNetplan("40-cx7.yaml", []byte(verbatim(t, fixture(t, tt.fixture))[tt.block]))
		if err != nil {
			t.Fatalf("%s: %v", tt.fixture, err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.fixture, d)
		}
	}
}

func TestParseLspciVVConnectX7(t *testing.T) {
	got := parseLspciVV([]byte(verbatim(t, fixture(t, "pci_02_"))[0]))
	zero := 0
	want := []PCIFunc{{Addr: "0000:1a:00.0", Desc: "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
		Driver: "mlx5_core", CapSpeed: "32GT/s", CapWidth: 16, StaSpeed: "32GT/s", StaWidth: 16, NUMANode: &zero}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	grep := parseLspciVV([]byte(verbatim(t, fixture(t, "pci_01_"))[0]))
	if len(grep) != 5 || grep[2].Addr != "0002:01:00.0" || grep[4].Desc != "Ethernet controller: Realtek Semiconductor Co., Ltd. Device 8127 (rev 05)" {
		t.Errorf("lspci grep lines: %+v", grep)
	}
}

func TestParseKernelLogMLX5(t *testing.T) {
	kl := parseKernelLog([]byte(verbatim(t, fixture(t, "proc_04_"))[0]))
	want := []LogLine{
		{"[   11.512808] mlx5_core 0005:03:00.0 eth0: Link down"},
		{"[   11.640670] mlx5_core 0005:03:00.1 eth1: Link down"},
		{"[ 3712.267103] mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged"},
	}
	if d := cmp.Diff(want, kl.MLX5); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if len(kl.XIDs) != 0 {
		t.Errorf("XIDs %v in a log without any", kl.XIDs)
	}
}

// No real Xid capture is available to the project; these lines follow the
// format of NVIDIA's Xid documentation ("NVRM: Xid (PCI:dddd:bb:dd): code, ...").
func TestParseKernelLogXIDDocumentedFormat(t *testing.T) {
	log := "[ 6101.345678] NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=python3, GPU has fallen off the bus.\n" +
		"Jan 15 14:30:45 dgx-01 kernel: NVRM: Xid (PCI:0000:10:00.0): 13, pid=2345, Graphics SM Warp Exception\n"
	got := parseKernelLog([]byte(log)).XIDs
	if len(got) != 2 || got[0].Code != 79 || got[0].PCIBus != "0000:18:00.0" || got[1].Code != 13 || got[1].PCIBus != "0000:10:00.0" {
		t.Errorf("got %+v", got)
	}
}

func TestParseEthtool(t *testing.T) {
	speeds := verbatim(t, fixture(t, "ethtool_01_"))
	var got []int
	for _, b := range speeds {
		if s := parseEthtoolSpeed([]byte(b)); s != nil {
			got = append(got, *s)
		}
	}
	if d := cmp.Diff([]int{100000, 100000, 200000, 200000}, got); d != "" {
		t.Errorf("speeds (-want +got):\n%s", d)
	}
	var fec []string
	for _, b := range verbatim(t, fixture(t, "ethtool_02_")) {
		fec = append(fec, *parseEthtoolFEC([]byte(b)))
	}
	if d := cmp.Diff([]string{"RS", "None", "RS", "None", "RS"}, fec); d != "" {
		t.Errorf("FEC (-want +got):\n%s", d)
	}
}

func TestSysfsInfinibandValues(t *testing.T) {
	b := verbatim(t, fixture(t, "sysfs_01_"))
	if got := parseIBState([]byte(b[4])); got != "ACTIVE" {
		t.Errorf("state %q", got)
	}
	if got := parseIBState([]byte(b[5])); got != "LinkUp" {
		t.Errorf("phys_state %q", got)
	}
	if got := parseIBRate([]byte(b[6])); got != 400 {
		t.Errorf("rate %d", got)
	}
}

func TestParseNvidiaSMIXMLH200(t *testing.T) {
	drv, gpus, err := parseNvidiaSMIXML(readTestdata(t, "nvidia-smi-q-x.h200x2.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if drv != (GPUDriver{Version: "580.159.04", CUDAVersion: "13.0"}) || len(gpus) != 2 {
		t.Fatalf("driver %+v, %d GPUs", drv, len(gpus))
	}
	g := gpus[1]
	if g.Index != 1 || g.Name != "NVIDIA H200" || g.UUID != "GPU-f9715109-2edf-008b-f907-305e3c36c9bc" ||
		g.Persistence != "Enabled" || g.MIGMode != "Disabled" || g.ECCMode != "Enabled" ||
		g.RemapPending != "No" || g.RemapFailure != "No" || len(g.ThrottleReasons) != 0 {
		t.Errorf("GPU 1 = %+v", g)
	}
	if g.MemoryTotalMiB == nil || *g.MemoryTotalMiB != 143771 {
		t.Errorf("memory %v", g.MemoryTotalMiB)
	}
}

func TestParseIPAddrJSON(t *testing.T) {
	devs, err := parseIPAddrJSON(readTestdata(t, "ip-j-addr.vm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	if d := cmp.Diff([]string{"lo", "ifb0", "ifb1", "eth0"}, names); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	want := []Addr{
		{CIDR: "192.0.2.2/24", Family: "inet", Scope: "global"},
		{CIDR: "fd00::2/64", Family: "inet6", Scope: "global"},
		{CIDR: "fe80::fc:ff:fe00:1/64", Family: "inet6", Scope: "link"},
	}
	if d := cmp.Diff(want, devs[3].Addrs); d != "" {
		t.Errorf("eth0 addresses (-want +got):\n%s", d)
	}
}

func TestSmallParsers(t *testing.T) {
	if got := NormalizePCIAddr("0000000F:01:00.0"); got != "000f:01:00.0" {
		t.Errorf("NormalizePCIAddr = %q", got)
	}
	if got := parsePCIeSpeed("32.0 GT/s PCIe"); got != "32GT/s" {
		t.Errorf("parsePCIeSpeed = %q", got)
	}
	if got := parsePCIeSpeed("2.5 GT/s PCIe"); got != "2.5GT/s" {
		t.Errorf("parsePCIeSpeed = %q", got)
	}
	if got := gidIPv4("0000:0000:0000:0000:0000:ffff:c0a8:640b"); got != "192.168.100.11" {
		t.Errorf("gidIPv4 = %q", got)
	}
	if got := parseSelectedMode([]byte("always [madvise] never\n")); got != "madvise" {
		t.Errorf("THP = %q", got)
	}
	if got := parseDpkgNCCL([]byte("libnccl-dev 2.28.3-1+cuda13.0\nlibnccl2 2.28.3-1+cuda13.0\n")); got != "2.28.3" {
		t.Errorf("dpkg NCCL = %q", got)
	}
	if got := ncclVersionFromNames("/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9"); got != "2.28.9" {
		t.Errorf("NCCL from name = %q", got)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"2.27.7", "2.28.3", -1}, {"2.28.3", "2.28.3", 0}, {"2.28.9", "2.28.3", 1}, {"24.04", "24.04", 0}, {"22.04", "24.04", -1}} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%s, %s) = %d", c.a, c.b, got)
		}
	}
	lim := []byte("Limit                     Soft Limit           Hard Limit           Units     \nMax locked memory         8388608              8388608              bytes     \n")
	if got := parseProcLimits(lim); got == nil || *got != 8192 {
		t.Errorf("memlock = %v", got)
	}
	if got := parseLimitsConfMemlock([]byte("# comment\n*   hard   memlock   unlimited\n*   soft   memlock   unlimited\n")); got != "unlimited" {
		t.Errorf("limits.conf memlock = %q", got)
	}
}
