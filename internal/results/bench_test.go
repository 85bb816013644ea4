package results

import (
	"bytes"
	"testing"
)

// BenchmarkParseNCCLLog measures the streaming pass over an NCCL_DEBUG=INFO
// log built from the real DGX Spark log repeated to 64 MiB; b.SetBytes makes
// `go test -bench` report MB/s of wall time, and MB/cpu-s is the same per
// second of CPU time (user+sys of the process, GC included), which a busy
// machine distorts less. scripts/bench-analyze.sh compares the same path
// with `grep -c 'NCCL INFO'` on a 1 GiB file.
func BenchmarkParseNCCLLog(b *testing.B) {
	unit := verbatim(b, "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt")
	var buf bytes.Buffer
	for buf.Len() < 64<<20 {
		buf.Write(unit)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		o, err := ParseNCCLTests(bytes.NewReader(data))
		if err != nil || o.Log.InfoLines == 0 {
			b.Fatal(err)
		}
	}
	if cpu = processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
