package check

import (
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Check is one audit rule.
type Check struct {
	ID    string
	Title string
	// Profiles the check belongs to; empty means every profile.
	Profiles []Profile
	// Needs names the facts sources the check reads; when one is not "ok" the
	// check reports not-evaluated instead of running.
	Needs []string
	// Applies gates the check on the node; it returns why not when false.
	Applies func(n *facts.Node) (bool, string)
	// Run returns the check's findings (Host, ID and Title are filled in).
	Run func(n *facts.Node) []report.Finding
}

// Registry is every single-node check, in the order findings are reported.
var Registry = []Check{
	// DGX Spark: ConnectX-7 ports and their twins.
	sparkCX7Present,
	sparkLinkSpeed,
	sparkTwinDown,
	sparkTwinUnaddressed,
	sparkTwinsSameSubnet,
	sparkMTU,
	sparkMTUTwins,
	sparkMTUNotApplied,
	sparkAddrPersisted,
	sparkDHCP,
	sparkRoCEGID,
	sparkPCIeWidth,
	sparkCMA,
	sparkGPUDirect,
	sparkOS,
	sparkIOMMU,
	nicHotplug,
	// NCCL.
	ncclVersion,
	ncclSocketIfname,
	ncclIBHCA,
	ncclGIDIndex,
	knownIssues,
	// GPUs.
	gpuDriver,
	gpuPersistence,
	gpuMIG,
	gpuECC,
	gpuRemap,
	gpuXID,
	gpuThrottle,
	gpuPeermem,
	// RDMA and NUMA.
	rdmaPorts,
	nicLinkFlaps,
	numaLocality,
	memlock,
	// Operating system tuning.
	osGovernor,
	osTHP,
	osSwap,
	netBuffers,
	netTCPBuffers,
	netPortRange,
}

// Run applies every check of the registry that belongs to profile p and
// returns the findings in registry order and the checks that did not apply with why.
func Run(n *facts.Node, p Profile) ([]report.Finding, []report.Skipped) {
	findings := []report.Finding{profileFinding(n, p)}
	skipped := []report.Skipped{}
	for _, c := range Registry {
		if !inProfile(c, p) {
			skipped = append(skipped, report.Skipped{ID: c.ID, Host: n.Host, Reason: "not part of the " + string(p) + " profile"})
			continue
		}
		// Evidence that is there but could not be read (a tool that timed out,
		// a file denied) leaves the gates below nothing to decide on: a hung
		// nvidia-smi is not "no GPU".
		if f, unread := notEvaluatedUnread(n, c); unread {
			findings = append(findings, f)
			continue
		}
		if c.Applies != nil {
			if ok, why := c.Applies(n); !ok {
				skipped = append(skipped, report.Skipped{ID: c.ID, Host: n.Host, Reason: why})
				continue
			}
		}
		if why, absent := notApplicable(n, c); absent {
			skipped = append(skipped, report.Skipped{ID: c.ID, Host: n.Host, Reason: why})
			continue
		}
		if f, missing := notEvaluated(n, c); missing {
			findings = append(findings, f)
			continue
		}
		for _, f := range c.Run(n) {
			f.ID, f.Host = c.ID, n.Host
			if f.Title == "" {
				f.Title = c.Title
			}
			findings = append(findings, f)
		}
	}
	return findings, skipped
}

func inProfile(c Check, p Profile) bool {
	return len(c.Profiles) == 0 || slices.Contains(c.Profiles, p)
}

// absentMeansNotApplicable names the sources whose absence on a node is a
// property of the node, not a gap in the evidence: no cpufreq driver means
// the node (a VM, a fixed-clock server) has no governor to check. Absent
// elsewhere (a missing nvidia-smi on a GPU node), the check is not evaluated.
var absentMeansNotApplicable = map[string]bool{"cpufreq": true}

// notApplicable says why a check does not apply when the node lacks what it
// looks at.
func notApplicable(n *facts.Node, c Check) (string, bool) {
	for _, src := range c.Needs {
		if st := n.Sources[src]; absentMeansNotApplicable[src] && st.Status == "missing" {
			why := "the node has no " + src
			if st.Detail != "" {
				why += " (" + st.Detail + ")"
			}
			return why, true
		}
	}
	return "", false
}

// notEvaluatedUnread is notEvaluated for evidence the node has but that
// could not be read: timed out, denied, failed or unparsable.
func notEvaluatedUnread(n *facts.Node, c Check) (report.Finding, bool) {
	for _, src := range c.Needs {
		switch n.Sources[src].Status {
		case "ok", "", "missing", facts.StatusNotCaptured:
		default:
			return notEvaluated(n, c)
		}
	}
	return report.Finding{}, false
}

// notEvaluated returns the finding of a check whose evidence is missing.
func notEvaluated(n *facts.Node, c Check) (report.Finding, bool) {
	for _, src := range c.Needs {
		st := n.Sources[src]
		if st.Status == "ok" {
			continue
		}
		obs := src + " " + st.Status
		switch st.Status {
		case "", facts.StatusNotCaptured:
			obs = src + " not captured"
		case "missing":
			obs = src + " absent on the node"
		case snapshot.StatusTimedOut:
			obs = src + " timed out" // the finding is not evaluated: the tool hangs
			if strings.HasPrefix(st.Detail, "timed out") {
				obs, st.Detail = src+" "+st.Detail, ""
			}
		}
		if st.Detail != "" {
			obs += ": " + st.Detail
		}
		return report.Finding{
			ID: c.ID, Host: n.Host, Severity: report.NotEvaluated, Subject: "node", Title: c.Title,
			Observed: obs, Expected: "the " + src + " evidence",
			Why:    "without this evidence the check can neither pass nor fail",
			Remedy: report.Manual(report.ActionRun, notEvaluatedFix(src, st.Status)),
		}, true
	}
	return report.Finding{}, false
}

// sourceFixes says how to make a source the node lacks available.
var sourceFixes = map[string]string{
	"nvidia-smi": "check the NVIDIA driver is installed and loaded: nvidia-smi (package nvidia-utils-<version>)",
	"nccl-lib":   "install NCCL (apt install libnccl2) or add your NCCL build's lib directory to /etc/ld.so.conf.d and run sudo ldconfig",
	"cpufreq":    "no cpufreq driver exposes a governor here (common in VMs); set the power profile in the BIOS or hypervisor",
	"rdma":       "install rdma-core and ibverbs-utils (apt install rdma-core ibverbs-utils)",
	"kernel-log": "run sparkrig doctor with sudo, or set kernel.dmesg_restrict=0, to read the kernel log",
	"ip-addr":    "install iproute2",
	"net-config": "run sparkrig doctor with sudo to read root-only network configuration",
	"os-release": "the node has no /etc/os-release (a minimal container image?); run sparkrig on the host itself",
	"sysfs-net":  "the node has no /sys/class/net: mount sysfs (mount -t sysfs sysfs /sys) or run sparkrig on the host, not in a container",
	"pci":        "the node has no /sys/bus/pci: mount sysfs or run sparkrig on the host, not in a container",
	"limits":     "the node has no /proc/self/limits: mount procfs (mount -t proc proc /proc)",
	"iommu":      "the IOMMU groups were not readable: run sparkrig on the host, not in a container",
	"modules":    "this kernel has no /proc/modules: it was built without loadable module support (CONFIG_MODULES=n), so drivers such as nvidia_peermem must be built in; check for them under /sys/module, or boot a kernel with module support (the DGX OS kernel has it)",
	"meminfo":    "the node has no /proc/meminfo: mount procfs (mount -t proc proc /proc)",
}

func notEvaluatedFix(src, status string) string {
	switch status {
	case "denied":
		return "run sparkrig doctor with sudo to read root-only files"
	case snapshot.StatusTimedOut:
		return "the tool is there but did not answer in time: find why it hangs (for nvidia-smi, Xid errors in the kernel log or a GPU fallen off the bus), then drain the node and reset the GPU or reboot"
	case "", facts.StatusNotCaptured:
		return "this snapshot was taken without it: capture the node again with sparkrig snapshot (or run sparkrig doctor on it)"
	}
	if f, ok := sourceFixes[src]; ok {
		return f
	}
	return "make the evidence readable on the node, then run sparkrig doctor again"
}

// ProfileID is the ID of the finding that names the profile an audit used.
const ProfileID = "node.profile"

// IDs are the IDs every single-node finding can carry: the profile's and
// each check's of the registry, in registry order.
func IDs() []string {
	ids := []string{ProfileID}
	for _, c := range Registry {
		ids = append(ids, c.ID)
	}
	return ids
}
