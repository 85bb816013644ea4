package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// resourceCases are perftest's resource failures (linux-rdma/perftest
// 26.04.17, src/perftest_resources.c and src/perftest_communication.c) and
// the kernel's lines about a NIC's PCIe slot (mlx5 events.c, pci.c; lspci),
// each printed the way the tool or the kernel prints it.
var resourceCases = []toolCase{
	{"error.perftest-cq-failed", func(r *rand.Rand) []string {
		// ctx_init: create_cqs after create_mr; the test's own line last
		cq := []string{"Couldn't create CQ", "Couldn't create a receiver CQ"}[r.Intn(2)]
		return []string{cq, "Failed to create CQs", " Couldn't create IB resources"}
	}},
	{"error.perftest-qp-create-failed", func(r *rand.Rand) []string {
		lines := []string{"Unable to create QP.", "Failed to create QP.", " Couldn't create IB resources"}
		if r.Intn(2) == 0 { // ENOMEM: ctx_qp_create's two lines first
			lines = append([]string{"Requested QP size might be too big. Try reducing TX depth and/or inline size.",
				fmt.Sprintf("Current TX depth is %d and inline size is %d .", 1<<(4+r.Intn(10)), r.Intn(1024))}, lines...)
		}
		if r.Intn(2) == 0 { // a server's banner before it
			lines = append([]string{"", "************************************", "* Waiting for client to connect... *", "************************************"}, lines...)
		}
		return lines
	}},
	{"error.perftest-peer-ended-before-keys", func(r *rand.Rand) []string {
		return []string{"ethernet_read_keys: Couldn't read remote address", " Unable to read to socket/rdma_cm", "Failed to exchange data between server and clients"}
	}},
	{"error.mlx5-slot-power-not-advertised", func(r *rand.Rand) []string {
		// a DGX Spark's twins after a run-time attach: the not-advertised
		// line and GB10's 27 W report, in either order, with or without the
		// pid older kernels print
		bdf := fmt.Sprintf("%04x:01:00.%d", []int{0, 2}[r.Intn(2)], r.Intn(2))
		where := fmt.Sprintf("mlx5_pcie_event:%d:", 280+r.Intn(60))
		if r.Intn(2) == 0 {
			where = fmt.Sprintf("mlx5_pcie_event:%d:(pid %d):", 280+r.Intn(60), 100+r.Intn(5000))
		}
		lines := []string{fmt.Sprintf("mlx5_core %s: %s PCIe slot power capability was not advertised.", bdf, where),
			fmt.Sprintf("mlx5_core %s: %s Detected insufficient power on the PCIe slot (27W).", bdf, where)}
		if r.Intn(2) == 0 {
			lines[0], lines[1] = lines[1], lines[0]
		}
		return lines
	}},
	{"error.mlx5-slot-power-insufficient", func(r *rand.Rand) []string {
		// a server's slot reporting less power than the card needs (any
		// report but GB10's 27 W), the not-advertised line beside it or not
		w := 10 + r.Intn(66)
		if w == 27 {
			w = 25
		}
		bdf := fmt.Sprintf("%04x:%02x:00.%d", r.Intn(8), 1+r.Intn(0xfe), r.Intn(2))
		lines := []string{fmt.Sprintf("mlx5_core %s: mlx5_pcie_event:%d: Detected insufficient power on the PCIe slot (%dW).", bdf, 280+r.Intn(60), w)}
		if r.Intn(2) == 0 {
			lines = append(lines, fmt.Sprintf("mlx5_core %s: mlx5_pcie_event:%d: PCIe slot power capability was not advertised.", bdf, 280+r.Intn(60)))
		}
		return lines
	}},
	{"error.pcie-link-downgraded", func(r *rand.Rand) []string {
		// pci.c writes the speed as "8.0 GT/s", lspci as "8GT/s"
		gens := []struct {
			kernel, lspci string
			gbps          float64
		}{{"2.5", "2.5", 2}, {"5.0", "5", 4}, {"8.0", "8", 7.877}, {"16.0", "16", 15.754}, {"32.0", "32", 31.508}}
		g := r.Intn(len(gens) - 1)
		c := g + 1 + r.Intn(len(gens)-g-1)
		w := []int{1, 2, 4, 8}[r.Intn(4)]
		cw := w * 2 * (1 + r.Intn(2))
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("mlx5_core 0000:%02x:00.0: %.3f Gb/s available PCIe bandwidth, limited by %s GT/s PCIe x%d link at 0000:%02x:01.1 (capable of %.3f Gb/s with %s GT/s PCIe x%d link)",
				r.Intn(256), gens[g].gbps*float64(w), gens[g].kernel, w, r.Intn(256), gens[c].gbps*float64(cw), gens[c].kernel, cw)}
		}
		if r.Intn(2) == 0 { // the width trained down
			return []string{fmt.Sprintf("\t\tLnkCap:\tPort #0, Speed %sGT/s, Width x%d, ASPM not supported", gens[c].lspci, cw),
				fmt.Sprintf("\t\tLnkSta:\tSpeed %sGT/s (ok), Width x%d (downgraded)", gens[c].lspci, w)}
		}
		// the speed trained down
		return []string{fmt.Sprintf("\t\tLnkCap:\tPort #0, Speed %sGT/s, Width x%d, ASPM not supported", gens[c].lspci, w),
			fmt.Sprintf("\t\tLnkSta:\tSpeed %sGT/s (downgraded), Width x%d (ok)", gens[g].lspci, w)}
	}},
}

// Each message names its cause first, read alone behind any prefix.
func TestResourceMessagesAnyPrefix(t *testing.T) {
	toolLinesFirstAnyPrefix(t, rand.New(rand.NewSource(2605)), resourceCases)
}

// The field pastes, exact: each is read and names its cause first.
func TestResourceMessagesFieldCases(t *testing.T) {
	for _, c := range []struct{ file, id string }{
		// ib_write_bw in a pod at containerd's 8 MiB memlock default
		{"359_k8s_pod_memlock_8mib_perftest_couldnt_create_cq.txt", "error.perftest-cq-failed"},
		// ib_write_lat on an Intel E810 with perftest's default inline size 220
		{"311_perftest_irdma_e810_unable_to_create_qp_inline_220_too_large.txt", "error.perftest-qp-create-failed"},
		// the server of an ib_read_bw whose client died registering its memory
		{"262_k8s_pod_memlock_64k_ib_read_bw_server_ethernet_read_keys.txt", "error.perftest-peer-ended-before-keys"},
		// dmesg of two DGX Spark after the QSFP cable was hot-plugged
		{"364_spark_pair_cx7_hotplug_slot_power_throttle_13gbps_dmesg.txt", "error.mlx5-slot-power-not-advertised"},
	} {
		a := analyseText(readTrain(t, c.file))
		if got := topCause(a); got != c.id {
			t.Errorf("%s: first %q, want %s (%s)", c.file, got, c.id, flagIDs(a))
		}
	}
	// the two kernel lines of case 364 exactly, read alone
	a := analyseText("mlx5_core 0000:01:00.0: mlx5_pcie_event:322: PCIe slot power capability was not advertised.\n" +
		"mlx5_core 0000:01:00.1: mlx5_pcie_event:326: Detected insufficient power on the PCIe slot (27W).\n")
	if topCause(a) != "error.mlx5-slot-power-not-advertised" || flagOf(a, "error.mlx5-slot-power-insufficient").Severity != report.Info {
		t.Errorf("case 364's lines: %s", flagIDs(a))
	}
	// the downgraded slot of a ConnectX-5 (the warpforge lab note's lspci)
	a = analyseText("\t\tLnkSta:\tSpeed 8GT/s (ok), Width x8 (downgraded)\n")
	if topCause(a) != "error.pcie-link-downgraded" {
		t.Errorf("LnkSta x8 downgraded: %s", flagIDs(a))
	}
}

// A server's dmesg (NVIDIA/gpu-operator #2511: each ConnectX function at
// boot) says the not-advertised line for information; so does a DGX Spark
// for its 27 W report alone, printed at every boot.
func TestSlotPowerLinesForInformation(t *testing.T) {
	server := "[   22.316553] mlx5_core 0000:13:00.0: mlx5_pcie_event:297:(pid 11): PCIe slot power capability was not advertised.\n" +
		"[   22.325345] mlx5_core 0000:63:00.0: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)\n" +
		"[   22.648340] mlx5_core 0000:63:00.0: mlx5_pcie_event:297:(pid 2071): PCIe slot power capability was not advertised.\n"
	for _, opt := range []Options{{}, {Platform: "h100"}} {
		a := Reader("dmesg.txt", strings.NewReader(server), opt)
		if f := flagOf(a, "error.mlx5-slot-power-not-advertised"); f == nil || f.Severity != report.Info || alarm(a) {
			t.Errorf("server dmesg (platform %q): %s", opt.Platform, flagIDs(a))
		}
	}
	// the same lines on a DGX Spark named as such: the run-time attach
	if a := Reader("dmesg.txt", strings.NewReader(server), Options{Platform: "dgx-spark"}); topCause(a) != "error.mlx5-slot-power-not-advertised" {
		t.Errorf("on dgx-spark: %s", flagIDs(a))
	}
	spark := "mlx5_core 0000:01:00.1: mlx5_pcie_event:326: Detected insufficient power on the PCIe slot (27W).\n"
	if a := analyseText(spark); alarm(a) || flagOf(a, "error.mlx5-slot-power-insufficient") == nil {
		t.Errorf("GB10's 27 W line: %s", flagIDs(a))
	}
}

// The lines of a healthy NIC raise none of them.
func TestResourceSignaturesDoNotFire(t *testing.T) {
	for _, line := range []string{
		"mlx5_core 0000:01:00.0: mlx5_pcie_event:330: PCIe slot advertised sufficient power (75W).",
		// a full-width link: pci.c's other form
		"mlx5_core 0000:01:00.0: 126.028 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x4 link)",
		"\t\tLnkSta:\tSpeed 32GT/s (ok), Width x4 (ok)",
		"\t\tLnkSta:\tSpeed 32GT/s, Width x4",
		// perftest's healthy lines
		" Data ex. method : Ethernet",
		"* Waiting for client to connect... *",
		" local address: LID 0000 QPN 0x0108 PSN 0x6f3c2f RKey 0x1fff00 VAddr 0x00ffff8d7fa000",
		"  Actual inline-size(64) < requested inline-size(220)",
	} {
		a := analyseText(line + "\n")
		for _, c := range resourceCases {
			if hasFlag(a, c.id) {
				t.Errorf("%q raised %s", line, c.id)
			}
		}
	}
}

// No fixture raises them but the pastes that print the messages.
func TestResourceSignaturesNothingNewOnFixtures(t *testing.T) {
	var ids []string
	for _, c := range resourceCases {
		ids = append(ids, c.id)
	}
	noneRaisedOnFixtures(t, ids, map[string]bool{
		"field/train/359_k8s_pod_memlock_8mib_perftest_couldnt_create_cq.txt":              true,
		"field/train/311_perftest_irdma_e810_unable_to_create_qp_inline_220_too_large.txt": true,
		"field/train/262_k8s_pod_memlock_64k_ib_read_bw_server_ethernet_read_keys.txt":     true,
		"field/train/364_spark_pair_cx7_hotplug_slot_power_throttle_13gbps_dmesg.txt":      true,
	})
}

// Both sides of one failed test pasted together: the client's own refusal
// names the cause, ranked above the server's lost key exchange it brings.
func TestPeerEndedBelowItsCause(t *testing.T) {
	server := []string{"ethernet_read_keys: Couldn't read remote address", " Unable to read to socket/rdma_cm", "Failed to exchange data between server and clients"}
	for _, client := range [][]string{
		{"Couldn't allocate MR with error=12", "Failed to create MR", " Couldn't create IB resources"},
		{"Couldn't create CQ", "Failed to create CQs", " Couldn't create IB resources"},
		{"Unable to create QP.", "Failed to create QP.", " Couldn't create IB resources"},
	} {
		for _, lines := range [][]string{append(append([]string{}, server...), client...), append(append([]string{}, client...), server...)} {
			a := analyseText(prefixed("", lines))
			if got := topCause(a); got == "error.perftest-peer-ended-before-keys" || got == "" {
				t.Errorf("%q: first %q (%s)", client[0], got, flagIDs(a))
			}
		}
	}
}
