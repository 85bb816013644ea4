package analyze

import (
	"bytes"
	"math/rand"
	"testing"
)

// graphCaptureWarn is the WARN NCCL's ncclCudaGetCapturingGraph prints
// (src/misc/strongstream.cc) when a stream is being captured and NCCL was
// built with CUDART_VERSION < 11030 or the driver is older than 11.3, as a
// vLLM user pasted it (testdata/field-cases/115_*).
const graphCaptureWarn = "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465."

// The graph-capture WARN names the libnccl build behind any prefix, inside
// a log of any rank and host count, and look-alike lines do not fire it.
func TestGraphCaptureOldBuild(t *testing.T) {
	const id = "error.nccl-graph-capture-old-build"
	rng := rand.New(rand.NewSource(3069))
	for ranks := 1; ranks <= 16; ranks *= 2 {
		for hosts := 1; hosts <= 4 && hosts <= ranks; hosts++ {
			for _, pre := range append(launchPrefixes, randomPrefix(rng), randomPrefix(rng)) {
				var b bytes.Buffer
				for r := range ranks {
					b.WriteString(pre)
					b.WriteString(ncclLine(r%hosts, r, "NCCL INFO cudaDriverVersion 12040") + "\n")
				}
				b.WriteString(pre + ncclLine(0, ranks-1, "misc/strongstream.cc:91 "+graphCaptureWarn) + "\n")
				a := Reader("g.txt", bytes.NewReader(b.Bytes()), Options{})
				if !hasFlag(a, id) {
					t.Errorf("%d ranks on %d hosts behind %q: %s not raised (%+v)", ranks, hosts, pre, id, a.Flags)
				}
			}
		}
	}
	nearMisses := []string{
		"gpu1:1:1 [0] NCCL INFO NCCL_GRAPH_MIXING_SUPPORT set by environment to 0",
		"RuntimeError: CUDA error: operation not permitted when stream is capturing",
		"gpu1:1:1 [0] NCCL INFO Channel 00/02 : 0 1",
		"NCCL version 2.19.3+cuda11.0",
		"gpu1:1:1 [0] NCCL WARN Cuda failure 'operation not permitted when stream is capturing'",
	}
	for _, l := range nearMisses {
		for _, pre := range launchPrefixes {
			a := Reader("n.txt", bytes.NewReader([]byte(pre+l+"\n")), Options{})
			if hasFlag(a, id) {
				t.Errorf("%q behind %q raised %s", l, pre, id)
			}
		}
	}
}

// ncclLine is a line in NCCL's log format for a rank on a host.
func ncclLine(host, rank int, msg string) string {
	return "node" + string(rune('a'+host)) + ":4242:4243 [" + string(rune('0'+rank%8)) + "] " + msg
}
