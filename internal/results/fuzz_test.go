package results

import (
	"bytes"
	"testing"
)

// The fuzzers check that no input makes a parser panic or hang, and that
// what they return is self-consistent.

func FuzzParseNCCLTests(f *testing.F) {
	seedAll(f, "nccl-tests", "nccl-logs")
	f.Fuzz(func(t *testing.T, b []byte) {
		o, _ := ParseNCCLTests(bytes.NewReader(b))
		for _, tb := range o.Tables {
			if len(tb.Rows) == 0 {
				t.Fatal("table without rows")
			}
		}
	})
}

func FuzzNCCLLogObserve(f *testing.F) {
	seedAll(f, "nccl-logs")
	f.Fuzz(func(t *testing.T, b []byte) {
		var l NCCLLog
		for _, line := range bytes.Split(b, []byte("\n")) {
			l.Observe(line)
		}
		l.TransportKinds()
		l.NetDevicesUsed()
	})
}

func FuzzParsePerftest(f *testing.F) {
	seedAll(f, "perftest")
	f.Fuzz(func(t *testing.T, b []byte) {
		runs, _ := ParsePerftest(bytes.NewReader(b))
		for _, r := range runs {
			r.BestAvgGbps()
			r.SteadyAvgGbps()
		}
	})
}

func FuzzParseIperf3(f *testing.F) {
	seedAll(f, "iperf3")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseIperf3(b)
	})
}

func FuzzParseNVBandwidth(f *testing.F) {
	seedAll(f, "nvbandwidth")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseNVBandwidth(bytes.NewReader(b))
	})
}

func FuzzParseNCCLTestsJSON(f *testing.F) {
	seedAll(f, "nccl-tests-json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseNCCLTestsJSON(b)
	})
}

func FuzzParseAllReduceBench(f *testing.F) {
	seedAll(f, "all_reduce_bench")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseAllReduceBench(bytes.NewReader(b))
	})
}
