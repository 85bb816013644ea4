// Package allpairs qualifies the links between every pair of nodes that
// share a network segment: a schedule of disjoint pairs run at once (the
// circle method), each direction measured, a verdict per node and per
// cable from pass ratios and the one link rule, and suspects measured again
// against known-good partners to tell which side is bad. Everything here
// but Run is pure; Run reaches nodes only through a Measurer.
package allpairs

// Pair is one test of a round: two nodes, by index, measured in both
// directions at once (A→B and B→A).
type Pair struct {
	A, B int
}

// Circle is the round-robin schedule of the circle method: for n nodes,
// n−1 rounds of n/2 disjoint pairs that together hold every pair once. An
// odd n gets a bye each round (a stand-in node n that is never measured),
// so n rounds of (n−1)/2 pairs. Node 0 stays put and the others turn
// around it. Sources: microsoft/superbenchmark
// superbench/common/utils/gen_traffic_pattern_config.py (gen_pair_wise_config).
func Circle(n int) [][]Pair {
	if n < 2 {
		return nil
	}
	m := n
	if m%2 == 1 {
		m++ // the bye
	}
	// ring holds positions 1..m-1; position 0 is node 0
	ring := make([]int, m-1)
	for i := range ring {
		ring[i] = i + 1
	}
	rounds := make([][]Pair, 0, m-1)
	for r := 0; r < m-1; r++ {
		seat := make([]int, m)
		seat[0] = 0
		for i := 1; i < m; i++ {
			seat[i] = ring[(i-1+r)%(m-1)]
		}
		var round []Pair
		for i := 0; i < m/2; i++ {
			a, b := seat[i], seat[m-1-i]
			if a >= n || b >= n {
				continue // the bye
			}
			if a > b {
				a, b = b, a
			}
			round = append(round, Pair{a, b})
		}
		rounds = append(rounds, round)
	}
	return rounds
}

// RingPhases is the order in which the cables of a direct-cabled ring of n
// nodes (cable i joins node i and node i+1 mod n) are qualified: NCCL's
// even phase (0-1, 2-3, …) then its odd phase (1-2, 3-4, …), the pairs of a
// phase disjoint so they run at once. NCCL's own check skips the wrap pair
// of an odd ring; a cable is there all the same, so an odd ring gets a
// third phase holding the wrap cable alone. A ring of two nodes is one
// pair. Source: NVIDIA/nccl docs diagnostics.rst (network bandwidth check:
// a ring ordered by rank checked in two phases, even then odd pairs).
func RingPhases(n int) [][]Pair {
	switch {
	case n < 2:
		return nil
	case n == 2:
		return [][]Pair{{{0, 1}}}
	}
	var even, odd, wrap []Pair
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		p := Pair{min(i, j), max(i, j)}
		switch {
		case j == 0 && n%2 == 1:
			wrap = append(wrap, p)
		case i%2 == 0:
			even = append(even, p)
		default:
			odd = append(odd, p)
		}
	}
	out := [][]Pair{even, odd}
	if len(wrap) > 0 {
		out = append(out, wrap)
	}
	return out
}
