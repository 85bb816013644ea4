package check

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// ok is a passing finding: shown with --verbose and in JSON.
func ok(subject, observed string) report.Finding {
	return report.Finding{Severity: report.OK, Subject: subject, Observed: observed}
}

// onlyIf is an Applies gate: the check runs when cond holds, else it is
// skipped with why.
func onlyIf(cond func(n *facts.Node) bool, why string) func(n *facts.Node) (bool, string) {
	return func(n *facts.Node) (bool, string) {
		if cond(n) {
			return true, ""
		}
		return false, why
	}
}

func hasGPUs(n *facts.Node) bool { return len(n.GPUs) > 0 }

func hasRDMA(n *facts.Node) bool { return len(n.RDMA) > 0 }

// ipv4 returns an interface's IPv4 prefixes.
func ipv4(d *facts.NetDev) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range d.Addrs {
		if a.Family != "inet" {
			continue
		}
		if p, err := netip.ParsePrefix(a.CIDR); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func isLinkLocal(p netip.Prefix) bool { return p.Addr().IsLinkLocalUnicast() }

func cidrs(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "no IPv4 address"
	}
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

func mib(n uint64) string { return fmt.Sprintf("%d MiB", n>>20) }

// ncclSetting returns an NCCL variable from the environment, else /etc/nccl.conf,
// with where it was found.
func ncclSetting(n *facts.Node, key string) (val, where string, ok bool) {
	if v, ok := n.NCCL.Env[key]; ok {
		return v, "environment", true
	}
	if v, ok := n.NCCL.ConfFile[key]; ok {
		return v, "/etc/nccl.conf", true
	}
	return "", "", false
}

// ncclIsSet gates a check on an NCCL variable being set in the environment
// or /etc/nccl.conf.
func ncclIsSet(key string) func(n *facts.Node) (bool, string) {
	return onlyIf(func(n *facts.Node) bool { _, _, ok := ncclSetting(n, key); return ok }, key+" is not set")
}

// ncclList splits an NCCL interface or HCA list ("^=a,b") into its mode and
// entries: exclude for "^", exact for "=".
func ncclList(v string) (exclude, exact bool, entries []string) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "^") {
		exclude, v = true, v[1:]
	}
	if strings.HasPrefix(v, "=") {
		exact, v = true, v[1:]
	}
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	return exclude, exact, entries
}

// ncclMatches applies NCCL's prefix (or exact) matching.
func ncclMatches(entry, name string, exact bool) bool {
	if exact {
		return entry == name
	}
	return strings.HasPrefix(name, entry)
}
