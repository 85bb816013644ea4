package results

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Each process of an nccl-tests binary that does not use MPI prints the
// header of its own test: printed together, the same "# nThread" line
// comes twice before any device line (NVIDIA/nccl-tests issue 213).
func TestNCCLTestsHeaderPerProcess(t *testing.T) {
	o, err := ParseNCCLTests(bytes.NewReader(verbatim(t, "nccl-tests/05_two_processes_own_test_header_twice.txt")))
	if err != nil || o.Launch.StackedHeaders != 1 || len(o.Tables) != 0 || o.Launch.RankZeroHosts != 1 {
		t.Errorf("%+v %v", o.Launch, err)
	}
}

// The count follows the processes, whatever their number; a header
// repeated after device lines (the test run again) is not stacked.
func TestNCCLTestsHeaderCount(t *testing.T) {
	const hdr = "# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
	dev := "#  Rank  %d Group  0 Pid %6d on       hw%02d device  %d [0x0f] NVIDIA H800\n"
	for n := 1; n <= 16; n++ {
		var b strings.Builder
		for range n {
			b.WriteString(hdr)
		}
		for p := range n {
			fmt.Fprintf(&b, dev, 0, 100+p, p, 0)
		}
		o, _ := ParseNCCLTests(strings.NewReader(b.String()))
		if o.Launch.StackedHeaders != n-1 {
			t.Errorf("%d processes: %+v", n, o.Launch)
		}
	}
	again := hdr + fmt.Sprintf(dev, 0, 100, 1, 0) + "# Test NCCL failure common.cu:1 'unhandled system error'\n" + hdr + fmt.Sprintf(dev, 0, 200, 1, 0)
	if o, _ := ParseNCCLTests(strings.NewReader(again)); o.Launch.StackedHeaders != 0 || o.Launch.RankZeroHosts != 1 {
		t.Errorf("run again: %+v", o.Launch)
	}
}
