package results

import (
	"bytes"
	"io"
	"os"
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
	f.Add(sharedGPULog)
	f.Add(bootstrapFailLog)
	f.Add(preTagLog)
	f.Fuzz(func(t *testing.T, b []byte) {
		var l NCCLLog
		for _, line := range bytes.Split(b, []byte("\n")) {
			l.Observe(line)
		}
		l.TransportKinds()
		l.NetDevicesUsed()
		l.HostClash()
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
	// A 1.4 KB excerpt, not the 9.4 KB output: the fuzzer spent most of a
	// run minimising what it found in the whole file.
	seedAll(f, "fuzz-seeds")
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

// FuzzNCCLOrigin: the host NCCLOrigin finds is always a piece of the
// prefix, whatever a launcher put there; seeded with real launcher prefixes.
func FuzzNCCLOrigin(f *testing.F) {
	for _, s := range []string{
		"rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19487:21056 [3] ",
		"  | 2024-12-04T05:27:44.080Z | algo-1:18064:18134 [7] ",
		"2025-08-12 09:37:03.463948 worker-9 >> [2025-08-12 01:37:03] :166:1226 [0] misc/socket.cc:484 ",
		"<cluster_name>:924:924 [5] ",
		"[1,0]<stdout>:spark-01:1234:5678 [0] ",
		"spark-fb97:3049:3049 [0] ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, prefix []byte) {
		h, ok := NCCLOrigin(prefix)
		if ok && !bytes.Contains(prefix, h) {
			t.Fatalf("host %q not in %q", h, prefix)
		}
	})
}

func TestNCCLOriginOfLauncherPrefixes(t *testing.T) {
	for prefix, want := range map[string]string{
		"rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19487:21056 [3] ":                              "rdma-gpu-train-worker-0",
		"  | 2024-12-04T05:27:44.080Z | algo-1:18064:18134 [7] ":                                         "algo-1",
		"2025-08-12 09:37:03.463948 worker-9 >> [2025-08-12 01:37:03] :166:1226 [0] misc/socket.cc:484 ": "",
		"(RayWorkerWrapper pid=284, ip=192.168.31.49) spark-02:608:608 [0] ":                             "spark-02",
		"[1,0]<stdout>:spark-01:1234:5678 [0] ":                                                          "spark-01",
		"0: spark-01:1234:5678 [0] ":                                                                     "spark-01",
		"vllm-worker-1  | spark-01:1234:5678 [0] ":                                                       "spark-01",
		"<cluster_name>:924:924 [5] ":                                                                    "<cluster_name>",
	} {
		if h, ok := NCCLOrigin([]byte(prefix)); !ok || string(h) != want {
			t.Errorf("NCCLOrigin(%q) = %q, %v; want %q", prefix, h, ok, want)
		}
	}
}

// The fuzzer's excerpt parses to what the whole output gives.
func TestIperf3ExcerptParsesAsTheWhole(t *testing.T) {
	whole, err := ParseIperf3(readFile(t, "testdata/iperf3/01_iperf3-3.9_tcp_client_omit3.json"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ParseIperf3(readFile(t, "testdata/fuzz-seeds/iperf3-3.9_tcp_client_omit3.excerpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Version != whole.Version || ex.Remote != whole.Remote || ex.SentGbps != whole.SentGbps || ex.ReceivedGbps != whole.ReceivedGbps || ex.CongestionCtl != whole.CongestionCtl {
		t.Errorf("excerpt %+v\nwhole   %+v", ex, whole)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
