package allpairs

import (
	"slices"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// RingOrder walks a direct-cabled ring from the rails between its nodes:
// the nodes in cable order starting at hosts[0] and towards its
// neighbour listed first in hosts, or false when the rails do not join
// hosts (three or more) into one ring, each node cabled to exactly two
// others. Twin rails between the same two nodes are one cable.
func RingOrder(hosts []string, rails []bench.Rail) ([]string, bool) {
	if len(hosts) < 3 {
		return nil, false
	}
	next := map[string][]string{}
	for _, r := range rails {
		a, b := r.A.Host, r.B.Host
		if a == b || !slices.Contains(hosts, a) || !slices.Contains(hosts, b) {
			continue
		}
		if !slices.Contains(next[a], b) {
			next[a], next[b] = append(next[a], b), append(next[b], a)
		}
	}
	for _, h := range hosts {
		if len(next[h]) != 2 {
			return nil, false
		}
		slices.SortFunc(next[h], func(x, y string) int { return slices.Index(hosts, x) - slices.Index(hosts, y) })
	}
	order := []string{hosts[0]}
	for prev, at := hosts[0], next[hosts[0]][0]; at != hosts[0]; {
		if slices.Contains(order, at) {
			return nil, false
		}
		order = append(order, at)
		n := next[at][0]
		if n == prev {
			n = next[at][1]
		}
		prev, at = at, n
	}
	if len(order) != len(hosts) {
		return nil, false // two rings
	}
	return order, true
}

// RingSchedule puts steps on the rails of a direct-cabled ring in the
// order RingPhases qualifies its cables (NCCL's even phase, then its odd
// phase, then an odd ring's wrap cable), so doctor --qualify and qualify
// --ring measure a ring's cables in one order. Within a cable the steps
// keep their order; steps on no ring cable follow. Where the rails form no
// ring, steps are returned as they are.
func RingSchedule(hosts []string, rails []bench.Rail, steps []bench.Step) []bench.Step {
	order, ok := RingOrder(hosts, rails)
	if !ok {
		return steps
	}
	hostsOf := map[string][2]string{}
	for _, r := range rails {
		hostsOf[r.Name] = [2]string{r.A.Host, r.B.Host}
	}
	rank := func(st bench.Step) int {
		if len(st.Rails) != 1 {
			return len(order)
		}
		h, ok := hostsOf[st.Rails[0]]
		if !ok {
			return len(order)
		}
		k := 0
		for _, phase := range RingPhases(len(order)) {
			for _, p := range phase {
				if a, b := order[p.A], order[p.B]; h == [2]string{a, b} || h == [2]string{b, a} {
					return k
				}
				k++
			}
		}
		return len(order)
	}
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(x, y bench.Step) int { return rank(x) - rank(y) })
	return out
}
