package cluster

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// segmentsEach is the grouping as defined: each rail into the first
// segment it overlaps, widened to the rail's subnet where that is wider.
func segmentsEach(rails []Rail) []Segment {
	var segs []Segment
	for _, r := range rails {
		if linkLocal.Contains(r.Addr.Addr()) {
			placed := false
			for i := range segs {
				if segs[i].LinkLocal && segs[i].Rails[0].NetDev == r.NetDev {
					segs[i].Rails = append(segs[i].Rails, r)
					placed = true
					break
				}
			}
			if !placed {
				segs = append(segs, Segment{Subnet: linkLocal, Rails: []Rail{r}, LinkLocal: true})
			}
			continue
		}
		placed := false
		for i := range segs {
			s := &segs[i]
			if !s.LinkLocal && (s.Subnet.Contains(r.Addr.Addr()) || r.Subnet().Contains(s.Subnet.Addr())) {
				if r.Subnet().Bits() < s.Subnet.Bits() {
					s.Subnet = r.Subnet()
				}
				s.Rails = append(s.Rails, r)
				placed = true
				break
			}
		}
		if !placed {
			segs = append(segs, Segment{Subnet: r.Subnet(), Rails: []Rail{r}})
		}
	}
	sort.SliceStable(segs, func(i, j int) bool {
		a, b := segs[i], segs[j]
		if a.Subnet != b.Subnet {
			return a.Subnet.Addr().Less(b.Subnet.Addr())
		}
		return a.Rails[0].NetDev < b.Rails[0].NetDev
	})
	return segs
}

// TestSegmentsAsDefined: Segments groups any rails (one prefix length or
// several, link-local among them) as segmentsEach does.
func TestSegmentsAsDefined(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	devs := []string{"enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0"}
	for round := 0; round < 3000; round++ {
		lengths := []int{24}
		if round%3 == 0 {
			lengths = []int{16, 24, 25}
		}
		var rails []Rail
		for n := r.IntN(16); n > 0; n-- {
			a := netip.AddrFrom4([4]byte{192, 168, byte(r.IntN(4)), byte(r.IntN(256))})
			if r.IntN(5) == 0 {
				a = netip.AddrFrom4([4]byte{169, 254, byte(r.IntN(4)), byte(r.IntN(256))})
			}
			rails = append(rails, Rail{Host: fmt.Sprintf("spark-%02d", r.IntN(6)), NetDev: devs[r.IntN(len(devs))],
				Addr: netip.PrefixFrom(a, lengths[r.IntN(len(lengths))])})
		}
		if diff := cmp.Diff(segmentsEach(rails), Segments(rails), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
			t.Fatalf("rails %v:\n%s", rails, diff)
		}
	}
}
