package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// The frameworks' messages about host names and interfaces, each built
// from its source's format: Gloo's lookupAddrForIface enforce (older
// "ifa != nullptr", newer "false"), NCCL's NVML lookup of a local rank's
// GPU, PyTorch c10d's getaddrinfo warning for IPv4 (or no family).
var frameworkHostCases = []docSignatureCase{
	{"error.gloo-ifname-not-found", func(r *rand.Rand, host string, rank, dev int) []string {
		iface := []string{"^lo", "eth0", "enp1s0f0np0", "ens35f0np0", "^docker,lo"}[r.Intn(5)]
		cond := []string{"ifa != nullptr", "false"}[r.Intn(2)]
		return []string{fmt.Sprintf("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:%d] %s. Unable to find address for: %s", 80+r.Intn(200), cond, iface)}
	}},
	{"error.nvml-gpu-not-visible", func(r *rand.Rand, host string, rank, dev int) []string {
		p := ncclPrefix(host, rank, dev)
		return []string{p + fmt.Sprintf(" misc/nvmlwrap.cc:%d NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found", 150+r.Intn(60)),
			p + " NCCL INFO graph/xml.cc:761 -> 2", p + " NCCL INFO init.cc:881 -> 2"}
	}},
	{"error.torch-store-host-unresolvable", func(r *rand.Rand, host string, rank, dev int) []string {
		fam := []string{"IPv4 ", ""}[r.Intn(2)]
		gai := []string{"-2 - Name or service not known", "-3 - Temporary failure in name resolution"}[r.Intn(2)]
		return []string{fmt.Sprintf("[W socket.cpp:%d] [c10d] The %snetwork addresses of (job-%x.internal, %d) cannot be retrieved (gai error: %s).", 600+r.Intn(200), fam, r.Intn(1<<20), 29500+r.Intn(30000), gai)}
	}},
}

// Each ranks first behind any prefix, in a job of any rank count and
// alone.
func TestFrameworkHostMessagesAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(51))
	firstAnyRanksAnyPrefix(t, r, frameworkHostCases, 2)
	for _, c := range frameworkHostCases {
		for _, pre := range causePrefixes(r) {
			if got := topCause(analyseText(prefixed(pre, c.line(r, "node7", 0, 0)))); got != c.id {
				t.Errorf("%s alone behind %q: first %q", c.id, pre, got)
			}
		}
	}
}

// What the messages are not: PyTorch's IPv6 lookup warning alone (printed
// on IPv4-only hosts whose runs work) and Gloo's host-name lookup (the
// "rp != nullptr" enforce: the host's own name, not an interface).
func TestFrameworkHostMessagesMustNotFire(t *testing.T) {
	for text, id := range map[string]string{
		"[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-0, 29500) cannot be retrieved (gai error: -2 - Name or service not known).": "error.torch-store-host-unresolvable",
		"RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] rp != nullptr. Unable to find address for: node-0":   "error.gloo-ifname-not-found",
	} {
		if a := analyseText(text + "\n"); hasFlag(a, id) {
			t.Errorf("%q: %s raised", text, id)
		}
	}
}

// No other fixture raises them.
func TestFrameworkHostMessagesNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.gloo-ifname-not-found", "error.nvml-gpu-not-visible", "error.torch-store-host-unresolvable"}, map[string]bool{
		"field/train/188_slurm_per_task_gpu_bind_nvml_handle_not_found.txt":   true,
		"field/train/193_vllm_gloo_ifname_nccl_exclusion_syntax.txt":          true,
		"field/train/205_torchelastic_tcpstore_pod_hostname_unresolvable.txt": true,
		"field/CATEGORIES.md": true, // quotes the NVML message in a slug's definition
	})
}
