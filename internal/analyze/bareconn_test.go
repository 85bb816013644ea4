package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// bareConnections writes NET connection messages without NCCL's opening
// for a ring over ranks: each rank's send line and its successor's
// receive line, those the ranks in off print without GDRDMA.
func bareConnections(r *rand.Rand, ranks int, off map[int]bool) string {
	var b strings.Builder
	for i := range ranks {
		j := (i + 1) % ranks
		from, to := fmt.Sprintf("%d[%x]", i, 0x1a000+0x10000*(i%8)), fmt.Sprintf("%d[%x]", j, 0x1a000+0x10000*(j%8))
		ch := ""
		if r.IntN(2) == 0 {
			ch = fmt.Sprintf("Channel %02d/0 : ", r.IntN(4))
		}
		send := fmt.Sprintf("NET/IB/%d/GDRDMA", r.IntN(2))
		if off[i] {
			send = fmt.Sprintf("NET/IB/%d", r.IntN(2))
		}
		fmt.Fprintf(&b, "%s%s -> %s [send] via %s\n", ch, from, to, send)
		recv := fmt.Sprintf("NET/IB/%d/GDRDMA", r.IntN(2))
		if off[j] {
			recv = fmt.Sprintf("NET/IB/%d", r.IntN(2))
		}
		fmt.Fprintf(&b, "%s%s -> %s [receive] via %s\n", ch, from, to, recv)
	}
	return b.String()
}

// Connection lines pasted without their opening are an NCCL log: a rank
// whose every NET receive goes without GPUDirect RDMA while other ranks'
// connections use it is named, for any rank count, share of such ranks
// and prefix; when every receive uses it nothing is raised.
func TestBareConnectionsGDR(t *testing.T) {
	r := rand.New(rand.NewPCG(897, 1676))
	for range 30 {
		ranks := 2 + r.IntN(15)
		off := map[int]bool{}
		for range 1 + r.IntN(ranks-1) {
			off[r.IntN(ranks)] = true
		}
		if len(off) == ranks {
			delete(off, 0)
		}
		p := anyPrefix(r)
		a := Reader("b.txt", strings.NewReader(prefixLines(bareConnections(r, ranks, off), p)), Options{})
		if a.Format != "nccl-log" || topCause(a) != "nccl.gdr-off" {
			t.Errorf("%d ranks, off %v, prefix %q: %s first %q %+v", ranks, off, p, a.Format, topCause(a), a.Flags)
			continue
		}
		for k := range off {
			for _, f := range a.Flags {
				if f.ID == "nccl.gdr-off" && len(off) <= 4 && !strings.Contains(f.Message, fmt.Sprintf("rank %d", k)) {
					t.Errorf("rank %d not named: %s", k, f.Message)
				}
			}
		}
		healthy := prefixLines(bareConnections(r, ranks, nil), p)
		if a := Reader("h.txt", strings.NewReader(healthy), Options{}); alarm(a) {
			t.Errorf("all GPUDirect: %+v\n%s", a.Flags, healthy)
		}
	}
}
