package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// A system error with every GPU on one host and no line naming the call
// is read as NCCL's shared or pinned memory (field case 65, NVIDIA/nccl
// #473), for any GPU count, behind any prefix, from nccl-tests' device
// lines or an NCCL log's ranks; GPUs on two hosts, one GPU, a WARN line
// or a signature that names the call are not.
func TestSystemErrorOneNodeAnyGPUsAnyPrefix(t *testing.T) {
	const id = "nccl.system-error-one-node"
	r := rand.New(rand.NewSource(473))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			n := 2 + r.Intn(15)
			host := fmt.Sprintf("box%d", r.Intn(1000))
			fail := host + ": Test NCCL failure common.cu:777 'unhandled system error'"
			tests := append(testsHeader(n, []string{host}, false)[:3+n], fail)
			if a := analyseText(prefixed(pre, tests)); topCause(a) != id {
				t.Fatalf("%d GPUs behind %q: first %q (%+v)\n%s", n, pre, topCause(a), a.Flags, prefixed(pre, tests))
			}
			var log []string
			for k := range n {
				log = append(log, fmt.Sprintf("%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x - Init START", host, 700+k, 700+k, k, 0x5600+k, k, n, k, 0x1b000+k*0x1000))
			}
			log = append(log, "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.14.3")
			if a := analyseText(prefixed(pre, log)); topCause(a) != id {
				t.Fatalf("log of %d ranks behind %q: first %q (%+v)", n, pre, topCause(a), a.Flags)
			}
			warn := fmt.Sprintf("%s:700:700 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43721> failed : Connection refused", host)
			for name, lines := range map[string][]string{
				"two hosts": append(testsHeader(2*n, []string{host, host + "b"}, false)[:3+2*n], fail),
				"one GPU":   append(testsHeader(1, []string{host}, false)[:4], fail),
				"a WARN":    append(append([]string{}, log[:len(log)-1]...), warn, log[len(log)-1]),
				"a named call": append(append([]string{}, tests...),
					fmt.Sprintf("%s:700:700 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-NzwJ7O (size 9637888)", host)),
			} {
				if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
					t.Errorf("%s, %d GPUs, behind %q: flagged", name, n, pre)
				}
			}
		}
	}
}
