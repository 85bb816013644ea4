package analyze

import (
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightNetPluginMissing ranks the missing plugin above the socket
// fallback it explains and the connection errors that follow (1.0).
const weightNetPluginMissing = 1.05

// slingshotIf: an interface name of HPE Slingshot's host NICs, hsn0,
// hsn1, … (the name NCCL_SOCKET_IFNAME=hsn selects on Slingshot systems),
// or the prefix "hsn" itself.
func slingshotIf(name string) bool {
	rest, ok := strings.CutPrefix(name, "hsn")
	if !ok {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// slingshotIfs lists the Slingshot interfaces the lines name: in the
// bootstrap and NET/Socket lists, or chosen by NCCL_SOCKET_IFNAME (not
// excluded by it with ^).
func slingshotIfs(l *results.NCCLLog) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if slingshotIf(n) && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, s := range socketInterfaces(l) {
		add(s.name)
	}
	if v := strings.TrimSpace(l.Env["NCCL_SOCKET_IFNAME"]); v != "" && !strings.HasPrefix(v, "^") {
		for _, n := range strings.Split(strings.TrimPrefix(v, "="), ",") {
			add(strings.TrimSpace(n))
		}
	}
	return out
}

// netPluginMissing: NCCL moves data between nodes over its socket
// transport (nccl.net-socket) on interfaces of HPE Slingshot (hsn*), and
// no net plugin loaded. A Slingshot 11 NIC (Cassini) offers RDMA only
// through libfabric's cxi provider, which NCCL reaches only through the
// OFI net plugin (aws-ofi-nccl): without the plugin NCCL's own transports
// find no device (NET/IB has none to open) and it falls back to TCP over
// the same NICs. For: NCCL's "NET/Plugin" line saying no plugin was found.
// Against: a plugin that loaded ("Loaded net plugin", any NET/OFI line,
// the network "AWS Libfabric": then the provider is what to read,
// nccl.ofi-tcp-provider), NCCL_NET=Socket set on purpose, no socket
// fallback flagged (a one-node job).
func (a *analysis) netPluginMissing(l *results.NCCLLog) {
	if strings.EqualFold(strings.TrimSpace(l.Env["NCCL_NET"]), "Socket") || l.Network != "" && l.Network != "Socket" {
		return
	}
	socket := false
	for _, f := range a.res.Flags {
		if f.ID == "nccl.net-socket" && f.Severity == report.Fail {
			socket = true
		}
	}
	hsn := slingshotIfs(l)
	if !socket || len(hsn) == 0 {
		return
	}
	notFound := ""
	for _, n := range l.NetNotes {
		if strings.HasPrefix(n, "NET/OFI") || strings.Contains(n, "Loaded net plugin") {
			return
		}
		if notFound == "" && strings.HasPrefix(n, "NET/Plugin") && (strings.Contains(n, "No plugin found") || strings.Contains(n, "Could not find:")) {
			notFound = n
		}
	}
	ev := "NCCL's socket network on Slingshot interface" + plural(len(hsn)) + " " + strings.Join(hsn, ", ")
	if notFound != "" {
		ev += "; \"" + notFound + "\""
	} else {
		ev += "; no line of a net plugin loading"
	}
	a.cause(weightNetPluginMissing, report.Fail, "nccl.net-plugin-missing",
		"NCCL runs over TCP on HPE Slingshot ("+strings.Join(hsn, ", ")+") with no net plugin loaded: Slingshot's RDMA is reached only through libfabric's cxi provider and the OFI net plugin (aws-ofi-nccl), so NCCL fell back to its socket transport at a fraction of the fabric's bandwidth",
		ev,
		"load the OFI net plugin built for the system's libfabric: the site's aws-ofi-nccl module or container hook (CSCS: the aws_ofi_nccl hook; ALCF: the module and LD_LIBRARY_PATH entry), with libfabric's cxi provider (FI_PROVIDER=cxi); check that the log then prints \"NET/Plugin: Loaded net plugin\" and \"NET/OFI Selected provider is cxi\"",
		"https://github.com/eth-cscs/cscs-docs/blob/d6324c31978dcdb5d0c59029d37deaf3af268355/docs/software/container-engine/guidelines-images/image-nccl-tests.md (\"NCCL requires the presence of the AWS OFI NCCL plugin in order to correctly interface with Libfabric and (through the latter) the Slingshot interconnect\"); https://github.com/argonne-lcf/alcf-nccl-tests/blob/385be33604ccebd32691c0805b5803eba7109b5d/README.md (Polaris: no plugin uses TCP; the AWS Libfabric plugin with the FI_CXI settings gives 5-10x); NVIDIA/nccl src/net.cc v2.18.3-1 to v2.23.4-1 and src/plugin/plugin_open.cc v2.26.2-1 to v2.30.7-1 (\"NET/Plugin : No plugin found\", \"NET/Plugin: Could not find:%s\" before the internal transports)")
}
