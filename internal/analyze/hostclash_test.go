package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// ringJob is the ring-setup lines of machines × gpus ranks, rank m*gpus+g
// on GPU g of machine m, each rank printing its connection to the next in
// the format of NCCL before 2.5 ("Ring 00 : 6[6] -> 10[2] via P2P/IPC",
// field case 141); tag is the word after the prefix ("INFO" before NCCL
// 2.3, "NCCL INFO" after). name gives each machine's host name as NCCL
// prints it; over is the transport between machines.
func ringJob(machines, gpus int, tag string, name func(m int) string, over string) []string {
	n := machines * gpus
	var out []string
	for r := range n {
		m, g := r/gpus, r%gpus
		next := (r + 1) % n
		via := "P2P/IPC"
		if next/gpus != m {
			via = over
		}
		out = append(out, fmt.Sprintf("%s:%d:%d [%d] %s Ring 00 : %d[%d] -> %d[%d] via %s", name(m), 3000+r, 3100+r, g, tag, r, g, next, next%gpus, via))
	}
	return out
}

// Two or more machines NCCL takes for one host (one printed name, ranks
// of each reusing the GPU numbers, P2P between them) fire the host-hash
// collision for any machine, GPU and rank count, either line tag, behind
// any prefix; machines with their own names, one GPU visible per rank,
// several communicators on one host, a release that hashes the full name,
// and PCI bus ids of distinct GPUs do not.
func TestHostHashClashAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(187))
	same := func(int) string { return "learngpu060" }
	own := func(m int) string { return fmt.Sprintf("learngpu%03d", 60+m) }
	for _, pre := range causePrefixes(r) {
		machines, gpus := 2+r.Intn(4), 2+r.Intn(7)
		tag := []string{"INFO", "NCCL INFO"}[r.Intn(2)]
		lines := ringJob(machines, gpus, tag, same, "P2P/IPC")
		if f := firstFail(analyseText(prefixed(pre, lines))); f != "nccl.host-hash-collision" {
			t.Errorf("%d machines × %d GPUs as one host (%s) behind %q: first %q", machines, gpus, tag, pre, f)
		}
		old := append([]string{"NCCL version 2.4.2+cuda10.0"}, lines...)
		if f := firstFail(analyseText(prefixed(pre, old))); f != "nccl.host-hash-collision" {
			t.Errorf("NCCL 2.4.2, %d machines × %d GPUs behind %q: first %q", machines, gpus, pre, f)
		}
		var oneGPU, twoComms, busIDs []string
		for i := range machines * gpus {
			oneGPU = append(oneGPU, fmt.Sprintf("learngpu060:%d:%d [0] %s Ring 00 : %d[0] -> %d[0] via P2P/IPC", 3000+i, 3100+i, tag, i, (i+1)%(machines*gpus)))
		}
		world := ringJob(1, gpus, tag, same, "")
		twoComms = append(world, fmt.Sprintf("learngpu060:3000:3100 [0] %s Ring 00 : 0[%d] -> 1[%d] via P2P/IPC", tag, gpus-1, 0))
		for i := range gpus {
			busIDs = append(busIDs, fmt.Sprintf("node1:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%x000] -> %d[%x000] via P2P/IPC", 3000+i, 3100+i, i, i, 0x1b+i, (i+1)%gpus, 0x1b+(i+1)%gpus))
		}
		// the second machine of a job: world ranks gpus… and a communicator
		// of its own GPUs, ranks 0…, printed by the same processes
		var subComm []string
		for g := range gpus {
			head := fmt.Sprintf("learngpu061:%d:%d [%d] %s", 5000+g, 5100+g, g, tag)
			subComm = append(subComm,
				fmt.Sprintf("%s Ring 00 : %d[%d] -> %d[%d] via P2P/IPC", head, gpus+g, g, gpus+(g+1)%gpus, (g+1)%gpus),
				fmt.Sprintf("%s Ring 00 : %d[%d] -> %d[%d] via P2P/IPC", head, g, g, (g+1)%gpus, (g+1)%gpus))
		}
		for what, lines := range map[string][]string{
			"sub-communicator":     subComm,
			"own names":            ringJob(machines, gpus, tag, own, "NET/IB/0"),
			"one GPU per rank":     oneGPU,
			"two communicators":    twoComms,
			"NCCL 2.4.8":           append([]string{"NCCL version 2.4.8+cuda10.0"}, lines...),
			"bus ids, one machine": busIDs,
		} {
			if res := analyseText(prefixed(pre, lines)); hasFlag(res, "nccl.host-hash-collision") {
				t.Errorf("%s behind %q: flagged (%+v)", what, pre, res.Flags)
			}
		}
	}
}
