package fix

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Problems lists where the observed host differs from the plan: a rail
// missing, off its MTU or without its address, a sysctl not at its value.
// The strings are stable, so lists taken before and after can be compared.
func Problems(hp HostPlan, o Observation) []string {
	var out []string
	for _, r := range hp.Rails {
		l, ok := o.Link(r.NetDev)
		if !ok {
			out = append(out, r.NetDev+": missing")
			continue
		}
		if l.MTU != r.MTU {
			out = append(out, fmt.Sprintf("%s: mtu %d, want %d", r.NetDev, l.MTU, r.MTU))
		}
		if r.Addr != "" && !slices.Contains(l.Addrs, r.Addr) {
			out = append(out, fmt.Sprintf("%s: no %s", r.NetDev, r.Addr))
		}
	}
	for _, k := range sortedKeys(hp.Sysctls) {
		if v := o.Sysctls[k]; v != hp.Sysctls[k] {
			out = append(out, fmt.Sprintf("%s = %s, want %s", k, v, hp.Sysctls[k]))
		}
	}
	return out
}

// newProblems lists the problems of after that before did not have: the
// checks got worse.
func newProblems(before, after []string) []string {
	var out []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}

// collateral lists changes to interfaces outside the plan.
func collateral(hp HostPlan, before, after Observation) []string {
	rails := railNames(hp)
	var out []string
	for _, b := range before.Links {
		if slices.Contains(rails, b.Name) {
			continue
		}
		a, ok := after.Link(b.Name)
		if !ok {
			out = append(out, b.Name+": gone")
			continue
		}
		for _, addr := range b.Addrs {
			if !slices.Contains(a.Addrs, addr) {
				out = append(out, fmt.Sprintf("%s: lost %s", b.Name, addr))
			}
		}
		if b.OperState == "up" && a.OperState != "up" {
			out = append(out, fmt.Sprintf("%s: %s, was up", b.Name, strings.ToLower(a.OperState)))
		}
	}
	return out
}

// doctorRegressions re-runs the doctor's checks on what the host showed
// before and after, and lists the findings that are new after.
func doctorRegressions(host string, before, after Observation) []string {
	was := flagged(before.Facts(host))
	var out []string
	for k, f := range flagged(after.Facts(host)) {
		if _, old := was[k]; !old {
			out = append(out, fmt.Sprintf("doctor: %s (%s): %s", f.ID, f.Subject, f.Observed))
		}
	}
	sort.Strings(out)
	return out
}
