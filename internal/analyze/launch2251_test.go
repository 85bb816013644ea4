package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// NCCL 2.25.1's kernel launch (the one CUDA call that prints "Cuda
// failure N" at enqueue.cc:1500) is named and ranked first behind any
// prefix, with or without a host tag and the INFO lines that follow it;
// the same message from another file or line, or the runtime form
// without a number, is not this release's launch.
func TestNCCL2251KernelLaunch(t *testing.T) {
	r := rand.New(rand.NewPCG(4238, 1500))
	const id = "error.nccl-2251-kernel-launch"
	for range 20 {
		tag := []string{"", "gpu-node-3:4766:4766 ", "[2025-05-12 10:01:02] h:1:2 "}[r.IntN(3)]
		rank := r.IntN(8)
		var b strings.Builder
		fmt.Fprintf(&b, "%s[%d] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n", tag, rank)
		for _, l := range []string{"group.cc:242", "group.cc:470", "enqueue.cc:2229"} {
			fmt.Fprintf(&b, "%s[%d] NCCL INFO %s -> 1\n", tag, rank, l)
		}
		p := anyPrefix(r)
		a := Reader("l.txt", strings.NewReader(prefixLines(b.String(), p)), Options{})
		if top := topCause(a); top != id {
			t.Errorf("prefix %q: first %q\n%s", p, top, b.String())
		}
		for _, other := range []string{
			"[0] transport/nvls.cc:598 NCCL WARN Cuda failure 1 'invalid argument'",
			"[0] enqueue.cc:1501 NCCL WARN Cuda failure 1 'invalid argument'",
			"[0] enqueue.cc:1500 NCCL WARN Cuda failure 'invalid argument'",
			"[0] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'",
		} {
			if a := Reader("o.txt", strings.NewReader(prefixLines(other+"\n", p)), Options{}); hasFlag(a, id) {
				t.Errorf("%q fired", other)
			}
		}
	}
}
