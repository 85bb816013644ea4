package check

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Profile names a platform whose expectations the checks apply.
type Profile string

// Profiles.
const (
	ProfileSpark   Profile = "dgx-spark"  // NVIDIA DGX Spark (GB10) and OEM GB10 systems
	ProfileGPU     Profile = "gpu-server" // any other Linux host with NVIDIA GPUs
	ProfileNoGPU   Profile = "no-gpu"     // no NVIDIA GPU found
	ProfileUnknown Profile = ""
)

// Profiles lists the accepted --profile values.
var Profiles = []Profile{ProfileSpark, ProfileGPU, ProfileNoGPU}

// ParseProfile validates a --profile value.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return ProfileUnknown, fmt.Errorf("unknown profile %q (want one of dgx-spark, gpu-server, no-gpu)", s)
}

// DetectProfile picks the platform from facts: /etc/dgx-release naming a DGX
// Spark or a GPU named "NVIDIA GB10" means dgx-spark; other NVIDIA GPUs (or a
// loaded nvidia driver) mean gpu-server.
func DetectProfile(n *facts.Node) Profile {
	if platform.IsSpark(n) {
		return ProfileSpark
	}
	if len(n.GPUs) > 0 || n.Driver.Version != "" {
		return ProfileGPU
	}
	for _, f := range n.PCI {
		if f.Vendor != nil && *f.Vendor == "0x10de" && strings.HasPrefix(f.Class, "0x03") {
			return ProfileGPU
		}
	}
	return ProfileNoGPU
}

// profileFinding says which profile the audit used and what it rests on, so a
// node where little applies still says why.
func profileFinding(n *facts.Node, p Profile) report.Finding {
	detected := DetectProfile(n)
	obs := string(p)
	switch {
	case p != detected:
		obs += " (set by --profile; detected " + string(detected) + ")"
	case n.DGX != nil:
		obs += " (/etc/dgx-release: " + n.DGX.Name + ")"
	case len(n.GPUs) > 0:
		obs += fmt.Sprintf(" (%d NVIDIA GPU(s): %s)", len(n.GPUs), n.GPUs[0].Name)
	case n.Driver.Version != "":
		obs += " (NVIDIA driver " + n.Driver.Version + " loaded; nvidia-smi lists no GPU)"
	case p == ProfileGPU:
		obs += " (an NVIDIA display function on PCI; nvidia-smi lists no GPU)"
	case p == ProfileNoGPU:
		why := "nvidia-smi lists no GPU"
		if st := n.Sources[facts.SrcNvidiaSMI]; st.Status != "ok" && st.Detail != "" {
			why = st.Detail
		}
		obs += " (" + why + "; GPU, NCCL and DGX Spark checks do not apply)"
	}
	return report.Finding{ID: ProfileID, Host: n.Host, Severity: report.Info, Subject: "node", Title: "platform profile",
		Observed: obs, Expected: "the profile matching this machine", Source: "detected from /etc/dgx-release, nvidia-smi and PCI ids"}
}
