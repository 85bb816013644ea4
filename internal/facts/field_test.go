package facts

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kernel-log lines from public recordings: gpud's pstore test data
// (leptonai/gpud pkg/pstore/testdata), NVIDIA/daqiri's IGX Orin tutorial
// (docs/tutorials/system_configuration.md) and an NVMe hot-plug log in
// facebook/OpenBIC PR #908.
func TestNICEvents(t *testing.T) {
	log := `<6>[   14.952018] mlx5_core 0000:41:00.0 enp65s0f0np0: Link up
<6>[   14.957355] IPv6: ADDRCONF(NETDEV_CHANGE): enp65s0f0np0: link becomes ready
        [   11.512808] mlx5_core 0005:03:00.0 eth0: Link down
        [ 3712.267103] mlx5_core 0005:03:00.1: Port module event: module 1, Cable plugged
[  123.041274] pcieport 0000:c0:01.2: pciehp: Slot(2): Card not present
[  123.100480] pcieport 0000:c0:01.2: pciehp: Slot(2): Link Up
[  129.660515] pcieport 0000:c0:01.2: pciehp: Slot(2): Card present
`
	kl := parseKernelLog([]byte(log))
	var got []string
	for _, e := range kl.Events {
		got = append(got, e.Kind+" "+e.Device)
	}
	want := []string{"link-up enp65s0f0np0", "link-down eth0", "cable-plugged 0005:03:00.1",
		"slot-hotplug 0000:c0:01.2 slot 2", "slot-link 0000:c0:01.2 slot 2", "slot-hotplug 0000:c0:01.2 slot 2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if n := kl.LinkDowns("eth0"); n != 1 {
		t.Errorf("LinkDowns(eth0) = %d", n)
	}
	if n := len(kl.HotplugEvents()); n != 3 {
		t.Errorf("%d hot-plug events, want 3 (the cable and two slot changes)", n)
	}
}

// "iommu: Default domain type: Translated" as dmesg printed it in
// grate-driver/xf86-video-opentegra #69; the arm-smmu-v3 probe line as in
// AmpereComputing/ampere-lts-kernel #40.
func TestIOMMU(t *testing.T) {
	var m IOMMU
	iommuFromKernelLog([]byte("[    0.874422] iommu: Default domain type: Translated \n[    0.874427] iommu: DMA domain TLB invalidation policy: strict mode \n[   14.698460] arm-smmu-v3 arm-smmu-v3.8.auto: option mask 0x0\n"), &m)
	if m.DefaultDomain != "Translated" || !m.SMMUv3 || m.Mode() != IOMMUTranslated {
		t.Errorf("%+v mode %q", m, m.Mode())
	}
	for cmdline, want := range map[string]string{
		"BOOT_IMAGE=/boot/vmlinuz ro quiet splash":   "",
		"ro iommu.passthrough=1":                     IOMMUPassthrough,
		"ro iommu=pt":                                IOMMUPassthrough,
		"ro iommu.passthrough=0":                     IOMMUTranslated,
		"ro iommu.passthrough=1 iommu.passthrough=0": IOMMUTranslated,
	} {
		if got := iommuFromCmdline(cmdline); got != want {
			t.Errorf("%q: %q, want %q", cmdline, got, want)
		}
	}
	// The groups win over the log and the command line.
	m = IOMMU{Cmdline: IOMMUTranslated, DefaultDomain: "Translated", GroupTypes: map[string]string{"0": "identity", "7": "identity"}}
	if m.Mode() != IOMMUPassthrough {
		t.Errorf("identity groups: %q", m.Mode())
	}
	m.GroupTypes["9"] = "DMA-FQ"
	if m.Mode() != IOMMUTranslated {
		t.Errorf("mixed groups fall back to the log: %q", m.Mode())
	}
	if (IOMMU{}).Mode() != "" {
		t.Error("nothing known: mode must be unknown")
	}
}

// readelf -n and file -L on a binary linked with a chosen build ID, framed
// as the capture's nccl-build-id command frames each library.
func TestNCCLBuildsFromRealTools(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to link a test binary")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const id = "a7f420a1c0db9360a7f420a1c0db9360a7f420a1"
	lib := filepath.Join(dir, "libnccl.so.2.28.9")
	cmd := exec.Command("go", "build", "-o", lib, "-ldflags=-B 0x"+id, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GO111MODULE=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ran := 0
	for _, tool := range [][]string{{"readelf", "-n"}, {"file", "-L"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed: its format is not exercised", tool[0])
			continue
		}
		out, err := exec.Command(tool[0], tool[1], lib).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tool[0], err, out)
		}
		ran++
		framed := "== /usr/lib/aarch64-linux-gnu/libnccl.so.2\t" + lib + "\n" + string(out)
		got := parseNCCLBuilds([]byte(framed))
		want := []NCCLBuild{{Path: "/usr/lib/aarch64-linux-gnu/libnccl.so.2", Resolved: lib, Version: "2.28.9", BuildID: id}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s\n%s", tool[0], d, out)
		}
	}
	if ran == 0 {
		t.Skip("neither readelf nor file is installed")
	}
}

// The readelf output of a blog's Go binary (-ldflags "-B gobuildid"), and a
// library the node could not read: no build ID, the library still listed.
func TestParseNCCLBuilds(t *testing.T) {
	out := "== /usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2\t/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2\n" +
		"\nDisplaying notes found in: .note.gnu.build-id\n  Owner                Data size \tDescription\n  GNU                  0x00000014\tNT_GNU_BUILD_ID (unique build ID bitstring)\n    Build ID: f4b5d514bc46fad9417898216b23910ae874a85d\n" +
		"== /usr/lib/aarch64-linux-gnu/libnccl.so.2\t/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9\n" +
		"readelf: Error: Input file '/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9' is not readable.\n"
	got := parseNCCLBuilds([]byte(out))
	want := []NCCLBuild{
		{Path: "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2", Resolved: "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2", BuildID: "f4b5d514bc46fad9417898216b23910ae874a85d"},
		{Path: "/usr/lib/aarch64-linux-gnu/libnccl.so.2", Resolved: "/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9", Version: "2.28.9"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
