package results

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Property: Transports counts every connection line by its transport, in
// any order of lines and for any number of transports (more than the
// counters found again without the map), and a communicator line's
// ranks are those of the line read last, whichever were read before.
func TestConnectionCountsAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for kinds := 1; kinds <= 6; kinds++ {
		for trial := range 20 {
			var l NCCLLog
			want := map[string]int64{}
			lastRanks, lastNodes := 0, 0
			for i := range 200 {
				host := fmt.Sprintf("host%d:%d:%d [0] ", r.IntN(3), 100+r.IntN(2), 100+r.IntN(3))
				if r.IntN(4) == 0 {
					ranks, nodes := 2+r.IntN(kinds), 1+r.IntN(kinds)
					l.Observe(fmt.Appendf(nil, "%sNCCL INFO comm 0x%x rank 0 nRanks %d nNodes %d localRanks 1 localRank 0 MNNVL 0", host, r.IntN(kinds), ranks, nodes))
					lastRanks, lastNodes = ranks, nodes
					continue
				}
				via := fmt.Sprintf("NET/IB/%d", r.IntN(kinds))
				if kinds > 3 && r.IntN(2) == 0 {
					via = fmt.Sprintf("P2P/CUMEM/%d", r.IntN(kinds))
				}
				want[via]++
				l.Observe(fmt.Appendf(nil, "%sNCCL INFO Channel %02d/0 : 0[0] -> 1[0] [receive] via %s", host, i%32, via))
			}
			l.Finish()
			if len(l.Transports) != len(want) {
				t.Fatalf("kinds %d trial %d: Transports = %v; want %v", kinds, trial, l.Transports, want)
			}
			for k, n := range want {
				if l.Transports[k] != n {
					t.Fatalf("kinds %d trial %d: Transports = %v; want %v", kinds, trial, l.Transports, want)
				}
			}
			if lastRanks > 0 && (l.NRanks != lastRanks || l.NNodes != lastNodes) {
				t.Fatalf("kinds %d trial %d: NRanks %d NNodes %d; the last comm line says %d, %d", kinds, trial, l.NRanks, l.NNodes, lastRanks, lastNodes)
			}
		}
	}
}
