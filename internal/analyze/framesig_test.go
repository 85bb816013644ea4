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
	{"error.torch-store-lookup-failed", func(r *rand.Rand, host string, rank, dev int) []string {
		// the IPv6 lookup asks for IPv4-mapped addresses too: it fails
		// only for a name with no address (socket.cpp tryConnect)
		fam := []string{"IPv4 ", "IPv6 ", ""}[r.Intn(3)]
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

// What the messages are not: the store's server finding no local IPv6
// address to listen on (SocketListenOp goes on to IPv4: an IPv4-only host
// whose runs work) and Gloo's host-name lookup (the "rp != nullptr"
// enforce: the host's own name, not an interface).
func TestFrameworkHostMessagesMustNotFire(t *testing.T) {
	for text, id := range map[string]string{
		"[W socket.cpp:601] [c10d] The local IPv6 network addresses cannot be retrieved (gai error: -9 - Address family for hostname not supported).": "error.torch-store-lookup-failed",
		"RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] rp != nullptr. Unable to find address for: node-0":      "error.gloo-ifname-not-found",
	} {
		if a := analyseText(text + "\n"); hasFlag(a, id) {
			t.Errorf("%q: %s raised", text, id)
		}
	}
}

// No other fixture raises them.
func TestFrameworkHostMessagesNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.gloo-ifname-not-found", "error.nvml-gpu-not-visible", "error.torch-store-host-unresolvable", "error.torch-store-lookup-failed"}, map[string]bool{
		"field/train/188_slurm_per_task_gpu_bind_nvml_handle_not_found.txt":              true,
		"field/train/193_vllm_gloo_ifname_nccl_exclusion_syntax.txt":                     true,
		"field/train/205_torchelastic_tcpstore_pod_hostname_unresolvable.txt":            true,
		"field/train/203_c10d_master_addr_gcp_internal_hostname_unresolvable.txt":        true,
		"field/train/234_torchrun_standalone_hostname_user_not_resolvable_gai_error.txt": true,
		"field/CATEGORIES.md": true, // quotes the NVML message in a slug's definition
	})
}

// Field cases 203 and 234: PyTorch's IPv6 lookup of the store's host name
// failing (a GCP job's internal name, repeated; a workstation's own name
// "user" missing from /etc/hosts) names the lookup, as a warning: PyTorch
// retries it until the store's timeout, and a retry can still resolve it. So do the
// same warnings quoted in threads whose runs could not start: a Mac's
// mDNS name (https://github.com/karpathy/nanochat/issues/42, "Can't
// run.") and localhost, repeated while PyTorch retried the lookup
// (https://github.com/antgroup/animate-x/issues/15).
func TestTorchStoreHostIPv6FieldCases(t *testing.T) {
	for _, name := range []string{"203_c10d_master_addr_gcp_internal_hostname_unresolvable.txt", "234_torchrun_standalone_hostname_user_not_resolvable_gai_error.txt"} {
		if a := analyseText(readTrain(t, name)); topCause(a) != "error.torch-store-lookup-failed" {
			t.Errorf("%s: first %q (%s)", name, topCause(a), flagIDs(a))
		}
	}
	for _, line := range []string{
		"[W1014 16:41:26.522544000 socket.cpp:755] [c10d] The IPv6 network addresses of (Os-MacBook-Air.local, 59319) cannot be retrieved (gai error: 8 - nodename nor servname provided, or not known).",
		"[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) cannot be retrieved (gai error: -2 - Name or service not known).",
	} {
		if a := analyseText(line + "\n" + line + "\n"); topCause(a) != "error.torch-store-lookup-failed" {
			t.Errorf("%q: first %q (%s)", line, topCause(a), flagIDs(a))
		}
	}
}

// The lookup warning is a warning, never a failure: PyTorch retries the
// lookup until the store's timeout, so a run can go on after it (a name
// registered late, a temporary DNS failure).
func TestTorchStoreLookupWarningAloneIsNoFailure(t *testing.T) {
	r := rand.New(rand.NewSource(52))
	for range 20 {
		var line string
		for _, c := range frameworkHostCases {
			if c.id == "error.torch-store-lookup-failed" {
				line = c.line(r, "node7", 0, 0)[0]
			}
		}
		text := line + "\n[rank0]: step 100 loss 2.31\nTraining completed. Saving checkpoint.\n"
		a := analyseText(text)
		if !hasFlag(a, "error.torch-store-lookup-failed") {
			t.Fatalf("%q: not named", line)
		}
		for _, f := range a.Flags {
			if f.Severity == "fail" {
				t.Errorf("%q then a run that goes on: %s fails", line, f.ID)
			}
		}
	}
}
