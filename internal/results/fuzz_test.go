package results

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"testing/iotest"
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

// FuzzLineReader checks the LineReader against bytes.Split, whatever sizes
// the underlying reader hands out.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\r\nlast"), uint8(0))
	f.Add([]byte("one\n"), uint8(1))
	f.Add([]byte("x\r"), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, mode uint8) {
		var want []string
		for i, l := range bytes.Split(b, []byte("\n")) {
			if i == bytes.Count(b, []byte("\n")) && len(l) == 0 {
				break
			}
			want = append(want, string(bytes.TrimSuffix(l, []byte("\r"))))
		}
		var r io.Reader = bytes.NewReader(b)
		switch mode % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		lr := NewLineReader(r)
		var got []string
		for {
			l, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(l))
		}
		if !slices.Equal(got, want) || lr.Line() != len(want) || lr.Bytes() != int64(len(b)) {
			t.Fatalf("got %q (%d lines, %d bytes), want %q", got, lr.Line(), lr.Bytes(), want)
		}
	})
}
