package facts

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// seedVerbatim adds every verbatim block of the fixtures with these prefixes.
func seedVerbatim(f *testing.F, prefixes ...string) {
	for _, p := range prefixes {
		for _, b := range verbatim(f, fixture(f, p)) {
			f.Add([]byte(b))
		}
	}
}

func FuzzParseIbvDevinfo(f *testing.F) {
	seedVerbatim(f, "rdma_04_", "rdma_05_", "rdma_11_")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range parseIbvDevinfo(b) {
			if d.Ports == nil {
				t.Fatalf("device %q has nil ports", d.Name)
			}
		}
	})
}

func FuzzParseIbdev2netdev(f *testing.F) {
	seedVerbatim(f, "rdma_01_", "rdma_04_", "rdma_05_")
	f.Fuzz(func(t *testing.T, b []byte) {
		for k, v := range parseIbdev2netdev(b) {
			if k == "" || v == "" || strings.ContainsAny(k+v, " \t\n") {
				t.Fatalf("bad pair %q => %q", k, v)
			}
		}
	})
}

func FuzzParseLspciVV(f *testing.F) {
	seedVerbatim(f, "pci_01_", "pci_02_")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fn := range parseLspciVV(b) {
			if fn.Addr == "" {
				t.Fatal("function without address")
			}
		}
	})
}

func FuzzParseKernelLog(f *testing.F) {
	seedVerbatim(f, "proc_03_", "proc_04_")
	f.Add([]byte("[ 6101.345678] NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus.\n"))
	f.Add([]byte("[  129.660515] pcieport 0000:c0:01.2: pciehp: Slot(2): Card present\n[    0.874422] iommu: Default domain type: Translated \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kl := parseKernelLog(b)
		var m IOMMU
		iommuFromKernelLog(b, &m)
		for _, e := range kl.Events {
			if e.Kind == "" || !strings.Contains(string(b), e.Line) {
				t.Fatalf("event %+v not from the input", e)
			}
		}
		for _, x := range kl.XIDs {
			if !strings.Contains(x.Line, "Xid") {
				t.Fatalf("Xid from a line without Xid: %q", x.Line)
			}
		}
	})
}

func FuzzParseNetplan(f *testing.F) {
	seedVerbatim(f, "netplan_01_", "netplan_03_", "netplan_05_", "netplan_06_")
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := parseNetplan("x.yaml", b)
		if err == nil && cs == nil {
			t.Fatal("nil configs without error")
		}
	})
}

func FuzzParseNvidiaSMIXML(f *testing.F) {
	// A 949-byte excerpt, not the 53 KB capture: with the whole file each
	// execution took milliseconds, and with larger seeds the workers spent
	// the run minimising what they found (see the excerpt's SOURCE).
	f.Add(readTestdata(f, "nvidia-smi-q-x.h200.gpu0-excerpt.xml"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, gpus, err := parseNvidiaSMIXML(b)
		if err != nil && gpus != nil {
			t.Fatal("GPUs returned with an error")
		}
	})
}

func FuzzParseEthtool(f *testing.F) {
	seedVerbatim(f, "ethtool_01_", "ethtool_02_")
	f.Fuzz(func(t *testing.T, b []byte) {
		if s := parseEthtoolSpeed(b); s != nil && *s <= 0 {
			t.Fatalf("speed %d", *s)
		}
		parseEthtoolFEC(b)
	})
}

func FuzzParseMeminfoAndLimits(f *testing.F) {
	f.Add([]byte("MemTotal:       125535996 kB\nCmaTotal:              0 kB\nHugePages_Total:       0\n"))
	f.Add([]byte("Max locked memory         unlimited            unlimited            bytes\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseMeminfo(b)
		parseProcLimits(b)
		parseLimitsConfMemlock(b)
		parseKeyValues(b)
		parseINI(b)
	})
}

func FuzzParseIPAddrJSON(f *testing.F) {
	// The capture's first and last interfaces (loopback, and one with IPv4,
	// IPv6 and link-local addresses), 1,231 of its 1,696 bytes: a smaller seed
	// keeps go's minimisation of what the fuzzer finds short.
	var ifs []json.RawMessage
	if err := json.Unmarshal(readTestdata(f, "ip-j-addr.vm.json"), &ifs); err != nil || len(ifs) < 2 {
		f.Fatalf("%d interfaces: %v", len(ifs), err)
	}
	seed, err := json.Marshal([]json.RawMessage{ifs[0], ifs[len(ifs)-1]})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		nds, err := parseIPAddrJSON(b)
		if err != nil && nds != nil {
			t.Fatal("interfaces returned with an error")
		}
		for _, nd := range nds {
			if nd.Addrs == nil {
				t.Fatalf("%q has nil addresses", nd.Name)
			}
			for _, a := range nd.Addrs {
				if !strings.Contains(a.CIDR, "/") {
					t.Fatalf("%q: address %q without prefix length", nd.Name, a.CIDR)
				}
			}
		}
	})
}

// FuzzCompareVersions checks that the order is antisymmetric and reflexive
// for any pair of strings, versions or not.
func FuzzCompareVersions(f *testing.F) {
	f.Add("2.27.7", "2.28.3")
	f.Add("2.28.9", "2.28")
	f.Add("24.04", "24.04")
	f.Fuzz(func(t *testing.T, a, b string) {
		if x, y := CompareVersions(a, b), CompareVersions(b, a); x != -y {
			t.Fatalf("CompareVersions(%q, %q) = %d but reversed %d", a, b, x, y)
		}
		if c := CompareVersions(a, a); c != 0 {
			t.Fatalf("CompareVersions(%q, itself) = %d", a, c)
		}
	})
}

// The fuzzer's excerpt parses to the capture's first GPU and driver.
func TestNvidiaSMIExcerptIsTheFirstGPU(t *testing.T) {
	d1, all, err := parseNvidiaSMIXML(readTestdata(t, "nvidia-smi-q-x.h200x2.xml"))
	if err != nil {
		t.Fatal(err)
	}
	d2, one, err := parseNvidiaSMIXML(readTestdata(t, "nvidia-smi-q-x.h200.gpu0-excerpt.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d1, d2) || len(one) != 1 || !reflect.DeepEqual(one[0], all[0]) {
		t.Errorf("excerpt %+v %+v, capture %+v %+v", d2, one, d1, all[:1])
	}
}

func FuzzParseNCCLBuilds(f *testing.F) {
	f.Add([]byte("== /usr/lib/aarch64-linux-gnu/libnccl.so.2\t/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9\n    Build ID: f4b5d514bc46fad9417898216b23910ae874a85d\n"))
	f.Add([]byte("== /a\t/b\n/b: ELF 64-bit LSB executable, x86-64, version 1 (SYSV), statically linked, BuildID[sha1]=f4b5d514bc46fad9417898216b23910ae874a85d, with debug_info, not stripped\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, nb := range parseNCCLBuilds(b) {
			if strings.Trim(nb.BuildID, "0123456789abcdef") != "" {
				t.Fatalf("build ID %q is not lower-case hex", nb.BuildID)
			}
		}
	})
}
