package analyze

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// adjustedJob is an NCCL log of ranks whose only WARN lines are ones after
// which NCCL clamps the setting or finds it empty and goes on (the lines
// of field case 371, a healthy 24-GPU RoCE run; EldritchJS/ml-dev-env),
// followed, when extra is set, by one WARN line that does report a
// failure.
func adjustedJob(r *rand.Rand, ranks int, extra string) []string {
	host := fmt.Sprintf("pytorch-benchmark-opt-%d", r.Intn(6))
	lines := []string{host + ":107:107 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"}
	for rank := range ranks {
		dev := rank % 8
		lines = append(lines,
			fmt.Sprintf("%s:%d:%d [%d] graph/xml.cc:375 NCCL WARN Could not open XML topology file  : No such file or directory", host, 107+rank, 132+rank, dev),
			fmt.Sprintf("%s:%d:%d [%d] graph/tuning.cc:22 NCCL WARN Invalid NCCL_NTHREADS 640 (maximum 512).", host, 107+rank, 132+rank, dev))
	}
	if extra != "" {
		lines = append(lines, host+":107:132 [0] "+extra)
	}
	return lines
}

// TestSettingAdjustedWarnsAreInfo: WARN lines that only say NCCL clamped a
// setting, or was given an empty NCCL_TOPO_FILE, are told but are no
// warning, for any rank count and behind any prefix; one WARN line that
// reports a failure keeps the warning; a topology file with a name that
// cannot be opened stays error.topo-file-unreadable; past the lines the
// log keeps, the warning stays.
func TestSettingAdjustedWarnsAreInfo(t *testing.T) {
	r := rand.New(rand.NewSource(371))
	for range 20 {
		ranks := 1 + r.Intn(10) // the log keeps the first 20 WARN lines: all of them are read
		for _, prefix := range causePrefixes(r) {
			a := analyseText(prefixed(prefix, adjustedJob(r, ranks, "")))
			f := flagOf(a, "nccl.warn")
			if f == nil || f.Severity != report.Info {
				t.Fatalf("%d ranks, prefix %q: nccl.warn %+v, want info", ranks, prefix, f)
			}
			if g := flagOf(a, "error.topo-file-unreadable"); g != nil {
				t.Fatalf("%d ranks, prefix %q: an empty NCCL_TOPO_FILE raised %s", ranks, prefix, g.ID)
			}
			a = analyseText(prefixed(prefix, adjustedJob(r, ranks, "transport/net_ib.cc:1034 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43533> with error 12, opcode 1, len 0, vendor err 129 (Send)")))
			if f := flagOf(a, "nccl.warn"); f != nil && f.Severity == report.Info {
				t.Fatalf("%d ranks, prefix %q: a completion error among adjusted settings left nccl.warn at info", ranks, prefix)
			}
		}
	}
	// past the 20 WARN lines the log keeps, the rest are not read: no
	// verdict on them
	if f := flagOf(analyseText(prefixed("", adjustedJob(r, 11, ""))), "nccl.warn"); f == nil || f.Severity != report.Warn {
		t.Fatalf("22 WARN lines, 20 read: nccl.warn %+v, want warn", f)
	}
	a := analyseText("h:1:1 [0] graph/xml.cc:375 NCCL WARN Could not open XML topology file /opt/topo/ndv5.xml : No such file or directory\n")
	if flagOf(a, "error.topo-file-unreadable") == nil {
		t.Fatal("a named topology file that cannot be opened is not error.topo-file-unreadable")
	}
}
